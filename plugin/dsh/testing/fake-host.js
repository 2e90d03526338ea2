'use strict'
/**
 * A stand-in for DSH's host over a real Node HTTP server, as far as the host half
 * uses it: a cordis-like context (`get`, `inject`, `effect`, `dispose`) and a
 * `webServer` with DSH's routing rules (exact routes first, then the longest
 * prefix; the same kind+path twice throws; 404 when nothing matches).
 */

const http = require('node:http')

function createWebServer() {
  const routes = new Map()
  const server = http.createServer((req, res) => {
    const path = (req.url || '/').split('?')[0]
    let match = routes.get(`exact ${path}`)
    if (!match) {
      let best = ''
      for (const [key, route] of routes) {
        if (!key.startsWith('prefix ')) continue
        const prefix = route.path
        if ((path === prefix || path.startsWith(`${prefix}/`)) && prefix.length > best.length) {
          best = prefix
          match = route
        }
      }
    }
    if (!match) {
      res.writeHead(404, { 'content-type': 'text/plain' })
      res.end('no route')
      return
    }
    Promise.resolve(match.handler(req, res)).catch(() => res.destroy())
  })
  const webServer = {
    register(route) {
      const key = `${route.kind} ${route.path}`
      if (routes.has(key)) throw new Error(`duplicate ${route.kind} route ${route.path}`)
      routes.set(key, route)
      return () => routes.delete(key)
    },
    routes,
  }
  return {
    webServer,
    server,
    listen: () => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`))),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

/**
 * A cordis-like context over `services` (a plain object; a missing key is an absent
 * service). `inject(names, cb)` calls `cb` with a child context at once when every
 * named service is there (and never otherwise); effects are disposed last-first.
 */
function createContext(services, messages = []) {
  const disposers = []
  const ctx = {
    get: (name) => services[name],
    effect(fn) {
      const dispose = fn()
      if (typeof dispose === 'function') disposers.push(dispose)
      return dispose
    },
    inject(names, callback) {
      if (!names.every((name) => services[name] !== undefined)) return
      callback(ctx)
    },
    logger: {
      info: (line) => messages.push(['info', line]),
      warn: (line) => messages.push(['warn', line]),
      error: (line) => messages.push(['error', line]),
    },
    async dispose() {
      while (disposers.length > 0) await disposers.pop()()
    },
  }
  return ctx
}

module.exports = { createWebServer, createContext }
