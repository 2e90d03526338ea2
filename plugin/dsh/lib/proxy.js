'use strict'
/**
 * The route handler DSH's web server calls for every request under the prefix:
 * the host's guard first (a raw route does not inherit it; see guard.js), then a streaming
 * reverse proxy to the Python child, status and headers kept, hop-by-hop
 * headers dropped.
 */

const http = require('node:http')

const { PROXY_HEADER, ROUTE_PREFIX } = require('./constants.js')
const { UNGUARDED, createGuard } = require('./guard.js')
const { ServiceUnavailable } = require('./service.js')

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1), never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])
/**
 * Request headers the child never needs: DSH's own credentials (its session cookie
 * already passed the guard here) and the Host the browser used.
 */
const NOT_FOR_THE_CHILD = new Set(['cookie', 'authorization', 'host', PROXY_HEADER])
/** A response from the child must not set cookies on DSH's origin. */
const NOT_FOR_THE_BROWSER = new Set(['set-cookie'])
/** An upstream that sends nothing for this long is given up (the panel's requests are short). */
const UPSTREAM_IDLE_MS = 60000

function sendJson(res, status, error) {
  const body = Buffer.from(JSON.stringify({ error, status }), 'utf8')
  if (res.headersSent) {
    res.destroy()
    return
  }
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  })
  res.end(body)
}

/** The headers minus hop-by-hop ones, those the Connection header names, and `drop`. */
function forwardable(headers, drop) {
  const named = String(headers.connection || '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean)
  const out = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (HOP_BY_HOP.has(lower) || drop.has(lower) || named.includes(lower)) continue
    if (value !== undefined) out[lower] = value
  }
  return out
}

/**
 * The child's path for a request path: the prefix itself is the start page (which
 * the standalone server serves at `/`); everything under it keeps its path.
 * Returns null for a path outside the prefix.
 */
function upstreamPath(url) {
  const raw = typeof url === 'string' ? url : '/'
  const queryAt = raw.indexOf('?')
  const path = queryAt < 0 ? raw : raw.slice(0, queryAt)
  const query = queryAt < 0 ? '' : raw.slice(queryAt)
  if (path === ROUTE_PREFIX || path === `${ROUTE_PREFIX}/`) return `/${query}`
  if (path.startsWith(`${ROUTE_PREFIX}/`)) return raw
  return null
}

/** Why the child could not be started, in words for the tab (a 503's error). */
function unavailableReason(error) {
  return error instanceof ServiceUnavailable ? error.reason : 'the timeline service could not start'
}

/**
 * @param {object} options
 * @param {() => any} options.connection - the host's `connection` service now, or undefined.
 * @param {() => any} [options.webRuntime] - the web bundle's `webRuntime` service now, or undefined.
 * @param {import('./service.js').PythonService} options.service
 * @param {(level: string, message: string) => void} [options.log]
 */
function createProxyHandler({ connection, webRuntime = () => undefined, service, log = () => {} }) {
  const guard = createGuard({ connection, webRuntime })
  return async function handle(req, res) {
    try {
      let refusal
      try {
        refusal = await guard(req)
      } catch (error) {
        log('warn', `the connection guard failed: ${String(error && error.message)}`)
        sendJson(res, 503, "the host's connection guard failed")
        return
      }
      if (refusal === UNGUARDED) {
        sendJson(res, 503, 'the host offers no guard for this route (no connection.requestRejection, no trusted hosts)')
        return
      }
      if (refusal !== null) {
        sendJson(res, refusal, refusal === 401 ? 'unauthorized' : 'forbidden')
        return
      }
      const path = upstreamPath(req.url)
      if (path === null) {
        sendJson(res, 404, 'not found')
        return
      }
      let upstream
      try {
        upstream = await service.ensure()
      } catch (error) {
        sendJson(res, 503, unavailableReason(error))
        return
      }
      forward(req, res, path, upstream, service)
    } catch (error) {
      log('error', `request failed: ${String(error && error.stack)}`)
      sendJson(res, 500, 'internal error in the proxy')
    }
  }
}

/** How long a reset connection waits to learn whether its child is exiting. */
const RESET_GRACE_MS = 1500

/** Methods without a request body: safe to send again to a restarted child. */
const REPEATABLE = new Set(['GET', 'HEAD'])

function forward(req, res, path, target, service, retried = false) {
  const { port, secret } = target
  const headers = forwardable(req.headers, NOT_FOR_THE_CHILD)
  headers.host = `127.0.0.1:${port}`
  headers[PROXY_HEADER] = secret
  // A fresh connection each time (no pool): a child that died then refuses it outright,
  // instead of a pooled socket to it failing halfway.
  const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path, headers, agent: false })
  let abandoned = false
  upstream.setTimeout(UPSTREAM_IDLE_MS, () => upstream.destroy(Object.assign(new Error('idle'), { code: 'ETIMEDOUT' })))
  upstream.once('response', (answer) => {
    res.writeHead(answer.statusCode || 502, forwardable(answer.headers, NOT_FOR_THE_BROWSER))
    answer.pipe(res)
    answer.once('error', () => res.destroy())
  })
  upstream.once('error', (error) => {
    if (abandoned) return
    const askAgain = !retried && REPEATABLE.has(req.method) && !res.headersSent
    // The child died (perhaps a moment ago, before its exit was seen): start another
    // and, for a request without a body, ask it once more.
    const restart = () => {
      service.lost(port)
      if (askAgain) {
        service.ensure().then(
          (next) => forward(req, res, path, next, service, true),
          (failure) => sendJson(res, 503, unavailableReason(failure)),
        )
        return
      }
      sendJson(res, 503, 'the timeline service stopped; it starts again on the next request')
    }
    if (error.code === 'ECONNREFUSED') {
      restart()
    } else if (error.code === 'ECONNRESET') {
      // A child killed while the connection was being made resets it rather than refusing
      // it; a live child that dropped one request is a 502.
      const dropped = () => sendJson(res, 502, 'the timeline service dropped the connection')
      if (!askAgain) dropped()
      else service.diedWithin(port, RESET_GRACE_MS).then((died) => (died ? restart() : dropped()), dropped)
    } else if (error.code === 'ETIMEDOUT') {
      sendJson(res, 504, 'the timeline service did not answer in time')
    } else {
      sendJson(res, 502, 'the timeline service gave no answer')
    }
  })
  // The browser went away before the answer ended: stop the upstream request too.
  res.once('close', () => {
    if (res.writableFinished) return
    abandoned = true
    upstream.destroy()
  })
  if (REPEATABLE.has(req.method)) upstream.end()
  else req.pipe(upstream)
}

module.exports = { createProxyHandler, upstreamPath, forwardable, HOP_BY_HOP }
