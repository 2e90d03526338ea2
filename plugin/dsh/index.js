'use strict'
/**
 * dsh-team-timeline — the host half (runs in DSH's Node process).
 *
 * It serves the Python product, not a copy of it: once DSH's web server is there
 * it starts `python -m dsh_task_gantt.cli serve --behind-proxy` on a free loopback
 * port (in the background: DSH's own start never waits for it; `startOnBoot: false`
 * defers it to first use) and proxies `/plugins/dsh-task-gantt/*` to it,
 * same-origin, after DSH's own guard. The prefix itself is the start page. See
 * README.md for the settings.
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
 * - `connection.requestRejection(req)` → 401 | 403 | undefined (DSH 0.1.5 on);
 *   before that, the connection service's `trustedHosts` (or the `webRuntime`
 *   service's) for the Host/Origin fence DSH puts on its own `/api` (lib/guard.js).
 *   Not declared as dependencies: they are looked up on every request so that
 *   their absence is a 503, never an unguarded route.
 * - `apply(ctx, config)` receives the row's `config` from cordis.patch.yml; the
 *   schema is not declared here (no schemastery dependency), so unknown keys are
 *   ignored and each value is checked where it is read.
 */

const { ROUTE_PREFIX } = require('./lib/constants.js')
const { createProxyHandler } = require('./lib/proxy.js')
const { PythonService, pythonExecutable } = require('./lib/service.js')

const name = 'dsh-team-timeline'

/** Whether a cordis logger service shows its messages anywhere: cordis keeps a buffer as its first exporter; DSH's web profile adds none. */
function loggerIsShown(root) {
  try {
    return !(root && root.exporters instanceof Map && root.exporters.size <= 1)
  } catch {
    return true
  }
}

/**
 * DSH's log (the context's cordis logger). Warnings and errors also go to stderr where
 * that logger only buffers them (DSH 0.1.0/0.1.1 web): a failed start must reach the
 * terminal `dsh web` runs in, as DSH's own web-app warnings do. So does an info line
 * logged `{shown: true}` (the server's "ready" line: the first panel opened is warm).
 */
function logger(ctx) {
  const root = ctx && ctx.logger
  const sink = root ? (typeof root === 'function' ? root(name) : root) : console
  const alsoStderr = root ? !loggerIsShown(root) : false
  return (level, message, options = {}) => {
    try {
      const write = sink[level] || sink.info || console.log
      write.call(sink, `[${name}] ${message}`)
      if (alsoStderr && (level === 'warn' || level === 'error' || options.shown)) console.error(`${name}: ${message}`)
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
  const startOnBoot = !(config && config.startOnBoot === false)
  const backend = new PythonService({ python, sessionsRoot, readyTimeoutMs, log })

  ctx.inject(['webServer'], (web) => {
    const handler = createProxyHandler({
      connection: () => service(web, 'connection') || service(ctx, 'connection'),
      webRuntime: () => service(web, 'webRuntime') || service(ctx, 'webRuntime'),
      service: backend,
      log,
    })
    web.effect(() => {
      const webServer = service(web, 'webServer')
      const dispose = webServer.register({ kind: 'prefix', path: ROUTE_PREFIX, handler })
      log('info', `proxying ${ROUTE_PREFIX}/* to dsh-task-gantt serve (${python}), ${startOnBoot ? 'starting now' : 'started on first use'}`)
      // Not awaited: DSH's start goes on while the child starts and reads.
      if (startOnBoot) backend.startInBackground()
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
