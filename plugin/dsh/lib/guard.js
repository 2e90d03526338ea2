'use strict'
/**
 * The guard in front of the proxied routes: the host's own, whichever way this host
 * offers it.
 *
 * - DSH 0.1.5 and later: `connection.requestRejection(req)` → 401 | 403 | undefined.
 * - DSH before 0.1.5 (0.1.0-rc.8, 0.1.1-rc.2) has no such method; its connection
 *   package fences its own `/api` with a Host/Origin check instead
 *   (`isTrustedApiRequest` in @deepseek-ai/dsh-client-connection, "browser-trust
 *   fence for every /api request"). That fence is reproduced here, over the same
 *   trusted authorities: the list the connection service holds (`trustedHosts`),
 *   else the one the web bundle provides as the `webRuntime` service (its LAN
 *   addresses when bound to 0.0.0.0, plus every `dsh web --trusted-host`).
 * - A host offering neither: no guard, so every request is refused (503).
 *
 * Nothing here reads a cookie: DSH's login is DSH's business.
 */

/** A verdict: let the request through. */
const PASS = null
/** A verdict: the host offers no guard, nothing may be served. */
const UNGUARDED = 'unguarded'

/**
 * Whether a normalized URL hostname names the local loopback authority: `localhost`,
 * `[::1]`, or any IPv4 address in 127/8 (DSH's `isLoopbackHostname`).
 */
function isLoopbackHostname(hostname) {
  if (hostname === 'localhost' || hostname === '[::1]') return true
  const parts = hostname.split('.')
  return parts.length === 4 && parts[0] === '127' && parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)
}

/** One header as DSH reads it: a string, or undefined (a repeated header is an array: not trusted). */
function header(headers, name) {
  const value = headers ? headers[name] : undefined
  return typeof value === 'string' ? value : undefined
}

/** The WHATWG URL of a Host authority (lower-cased, default port stripped), or undefined. */
function parseAuthority(authority) {
  try {
    return new URL(`http://${authority}`)
  } catch {
    return undefined
  }
}

/** `hostname` when the entry names no port, else `hostname:port` (judged under both schemes, as DSH does). */
function canonicalAuthority(entry, entryUrl) {
  const port = entryUrl.port !== '' ? entryUrl.port : new URL(`https://${entry}`).port
  return port === '' ? entryUrl.hostname : `${entryUrl.hostname}:${port}`
}

/** Whether the request's authority matches an entry: exact `host:port`, or a port-less host on any port. */
function isTrustedAuthority(hostUrl, trustedHosts) {
  return trustedHosts.some((entry) => {
    if (typeof entry !== 'string') return false
    const entryUrl = parseAuthority(entry)
    if (entryUrl === undefined) return false
    return canonicalAuthority(entry, entryUrl) === entryUrl.hostname
      ? entryUrl.hostname === hostUrl.hostname
      : entryUrl.host === hostUrl.host
  })
}

/**
 * DSH's fence (before 0.1.5): the Host is loopback or trusted (DNS rebinding cannot
 * forge it), the browser did not mark the request cross-site, and an Origin, when
 * sent, is this very authority.
 */
function isTrustedRequest(req, trustedHosts) {
  const headers = req && req.headers
  const host = header(headers, 'host')
  if (host === undefined) return false
  const hostUrl = parseAuthority(host)
  if (hostUrl === undefined) return false
  if (!isLoopbackHostname(hostUrl.hostname) && !isTrustedAuthority(hostUrl, trustedHosts)) return false
  if (header(headers, 'sec-fetch-site') === 'cross-site') return false
  const origin = header(headers, 'origin')
  if (origin === undefined) return true
  try {
    return new URL(origin).host === hostUrl.host
  } catch {
    return false
  }
}

/** The trusted authorities this host makes known, or undefined when it makes none known. */
function trustedHostsOf(connection, webRuntime) {
  for (const holder of [connection, webRuntime]) {
    let list
    try {
      list = holder ? holder.trustedHosts : undefined
    } catch {
      list = undefined
    }
    if (Array.isArray(list)) return list.filter((entry) => typeof entry === 'string')
  }
  return undefined
}

/**
 * @param {() => any} connection - the host's `connection` service now, or undefined.
 * @param {() => any} webRuntime - the web bundle's `webRuntime` service now, or undefined.
 * @returns {(req: import('node:http').IncomingMessage) => Promise<null | 401 | 403 | 'unguarded'>}
 *   the verdict; a guard that throws or answers something unknown refuses (fail closed: 403).
 */
function createGuard({ connection, webRuntime }) {
  return async function verdict(req) {
    const service = connection()
    if (service && typeof service.requestRejection === 'function') {
      const answer = await service.requestRejection(req)
      if (answer === undefined || answer === null || answer === false) return PASS
      return answer === 401 ? 401 : 403
    }
    const trusted = trustedHostsOf(service, webRuntime())
    if (trusted === undefined) return UNGUARDED
    return isTrustedRequest(req, trusted) ? PASS : 403
  }
}

module.exports = { createGuard, isTrustedRequest, trustedHostsOf, isLoopbackHostname, PASS, UNGUARDED }
