'use strict'
/**
 * dsh-team-timeline — the host half (runs in DSH's Node process).
 *
 * It serves the Python product, not a copy of it: on first use it starts
 * `python -m dsh_task_gantt.cli serve --behind-proxy` on a free loopback port
 * and proxies `/plugins/dsh-task-gantt/*` to it, same-origin, after DSH's own
 * guard. The prefix itself is the start page. See README.md for the settings.
 *
 * What this relies on from DSH (from its web-server and connection packages and
 * from public plugins that proxy a local service the same way):
 * - `ctx.inject(['webServer'], cb)` calls `cb(sub)` once the web server exists;
 *   `sub.effect(fn, label)` keeps the disposer `fn` returns until either goes.
 *   No top-level `inject`: a plugin pending on a service it lacks can keep the
 *   whole profile from loading; without a web server this stays dormant instead.
 * - `webServer.register({kind: 'prefix', path, handler})` → disposer; the handler
 *   gets Node's IncomingMessage/ServerResponse with the full path in `req.url`;
 *   the same kind+path twice throws.
 * - `connection.requestRejection(req)` → 401 | 403 | undefined. Not declared as
 *   a dependency: it is looked up on every request so that its absence is a 503,
 *   never an unguarded route.
 * - `apply(ctx, config)` receives the row's `config` from cordis.patch.yml; the
 *   schema is not declared here (no schemastery dependency), so unknown keys are
 *   ignored and each value is checked where it is read.
 */

const { ROUTE_PREFIX } = require('./lib/constants.js')
const { createProxyHandler } = require('./lib/proxy.js')
const { PythonService, pythonExecutable } = require('./lib/service.js')

const name = 'dsh-team-timeline'

function logger(ctx) {
  const sink = ctx && ctx.logger ? (typeof ctx.logger === 'function' ? ctx.logger(name) : ctx.logger) : console
  return (level, message) => {
    try {
      const write = sink[level] || sink.info || console.log
      write.call(sink, `[${name}] ${message}`)
    } catch {
      // A logger that fails must not take a request down.
    }
  }
}

/** A service by name on a cordis context, or undefined (`get` where it exists, else the property). */
function service(ctx, serviceName) {
  try {
    if (typeof ctx.get === 'function') return ctx.get(serviceName)
    return ctx[serviceName]
  } catch {
    return undefined
  }
}

function apply(ctx, config = {}) {
  const log = logger(ctx)
  const python = pythonExecutable(config)
  const sessionsRoot = config && typeof config.sessionsRoot === 'string' && config.sessionsRoot.trim() ? config.sessionsRoot.trim() : undefined
  const readyTimeoutMs = config && Number.isInteger(config.readyTimeoutMs) && config.readyTimeoutMs > 0 ? config.readyTimeoutMs : undefined
  const backend = new PythonService({ python, sessionsRoot, readyTimeoutMs, log })

  ctx.inject(['webServer'], (web) => {
    const handler = createProxyHandler({
      connection: () => service(web, 'connection') || service(ctx, 'connection'),
      service: backend,
      log,
    })
    web.effect(() => {
      const webServer = service(web, 'webServer')
      const dispose = webServer.register({ kind: 'prefix', path: ROUTE_PREFIX, handler })
      log('info', `proxying ${ROUTE_PREFIX}/* to dsh-task-gantt serve (${python}), started on first use`)
      return () => {
        dispose()
        // The routes are gone: nothing can reach the child any more.
        void backend.stop()
      }
    }, `${name}: ${ROUTE_PREFIX} proxy`)
  })

  ctx.effect(() => () => backend.dispose(), `${name}: Python service`)
}

module.exports = { name, apply }
