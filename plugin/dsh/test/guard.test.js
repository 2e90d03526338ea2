'use strict'
/** The guard: the host's requestRejection where it has one, else DSH's own /api fence. */

const assert = require('node:assert/strict')
const { describe, test } = require('node:test')

const { UNGUARDED, createGuard, isTrustedRequest, trustedHostsOf } = require('../lib/guard.js')

function req(headers) {
  return { url: '/plugins/dsh-task-gantt/', headers }
}

describe("DSH's /api fence (before 0.1.5), reproduced", () => {
  test('loopback authorities pass, whatever the port; others do not', () => {
    for (const host of ['127.0.0.1:8080', 'localhost:3000', '[::1]:9', '127.1.2.3', 'LOCALHOST:1']) {
      assert.equal(isTrustedRequest(req({ host }), []), true, host)
    }
    for (const host of ['evil.example', 'evil.example:8080', '127.0.0.1.evil.example', '0x7f.0.0.1.x', '10.0.0.5:80', '128.0.0.1']) {
      assert.equal(isTrustedRequest(req({ host }), []), false, host)
    }
  })

  test('no Host, an unparsable one, or a repeated one is refused', () => {
    assert.equal(isTrustedRequest(req({}), []), false)
    assert.equal(isTrustedRequest(req({ host: 'a b' }), []), false)
    assert.equal(isTrustedRequest(req({ host: ['127.0.0.1', '127.0.0.1'] }), []), false)
  })

  test('a trusted entry with a port matches that authority only; without one, any port', () => {
    const trusted = ['box.lan:8443', '192.168.1.7']
    assert.equal(isTrustedRequest(req({ host: 'box.lan:8443' }), trusted), true)
    assert.equal(isTrustedRequest(req({ host: 'BOX.lan:8443' }), trusted), true)
    assert.equal(isTrustedRequest(req({ host: 'box.lan:8444' }), trusted), false)
    assert.equal(isTrustedRequest(req({ host: 'box.lan' }), trusted), false)
    assert.equal(isTrustedRequest(req({ host: '192.168.1.7:1234' }), trusted), true)
    assert.equal(isTrustedRequest(req({ host: '192.168.1.8:1234' }), trusted), false)
    // An explicit default port still counts as a port (DSH judges it under both schemes).
    assert.equal(isTrustedRequest(req({ host: 'web.lan:8080' }), ['web.lan:80']), false)
    assert.equal(isTrustedRequest(req({ host: 'web.lan' }), ['web.lan:80']), true)
  })

  test('a cross-site request is refused: Sec-Fetch-Site, or an Origin that is not this authority', () => {
    const host = '127.0.0.1:4000'
    assert.equal(isTrustedRequest(req({ host, 'sec-fetch-site': 'cross-site' }), []), false)
    assert.equal(isTrustedRequest(req({ host, 'sec-fetch-site': 'same-origin' }), []), true)
    assert.equal(isTrustedRequest(req({ host, 'sec-fetch-site': 'none' }), []), true)
    assert.equal(isTrustedRequest(req({ host, origin: 'http://127.0.0.1:4000' }), []), true)
    assert.equal(isTrustedRequest(req({ host, origin: 'http://127.0.0.1:4001' }), []), false)
    assert.equal(isTrustedRequest(req({ host, origin: 'http://localhost:4000' }), []), false)
    assert.equal(isTrustedRequest(req({ host, origin: 'https://evil.example' }), []), false)
    assert.equal(isTrustedRequest(req({ host, origin: 'null' }), []), false)
  })

  test('the trusted list: the connection service\'s own, else the web runtime\'s, else none', () => {
    assert.deepEqual(trustedHostsOf({ trustedHosts: ['a.lan'] }, { trustedHosts: ['b.lan'] }), ['a.lan'])
    assert.deepEqual(trustedHostsOf({}, { trustedHosts: ['b.lan', 7] }), ['b.lan'])
    assert.deepEqual(trustedHostsOf(undefined, { lanAddresses: [], trustedHosts: [] }), [])
    assert.equal(trustedHostsOf({}, undefined), undefined)
    assert.equal(trustedHostsOf(undefined, undefined), undefined)
    const throwing = { get trustedHosts() { throw new Error('revoked') } }
    assert.equal(trustedHostsOf(throwing, undefined), undefined)
  })
})

describe('the guard, by what the host offers', () => {
  const loopback = req({ host: '127.0.0.1:4000' })
  const foreign = req({ host: 'evil.example:4000' })

  test('requestRejection where the host has it: its verdict, and nothing else is asked', async () => {
    const asked = []
    const connection = {
      trustedHosts: ['evil.example'],
      requestRejection(request) {
        asked.push(request.headers.host)
        return request.headers.cookie ? undefined : 401
      },
    }
    const guard = createGuard({ connection: () => connection, webRuntime: () => ({ trustedHosts: [] }) })
    assert.equal(await guard(loopback), 401)
    assert.equal(await guard(req({ host: '127.0.0.1:4000', cookie: 'dsh=1' })), null)
    assert.deepEqual(asked, ['127.0.0.1:4000', '127.0.0.1:4000'])
  })

  test('an unknown verdict from requestRejection refuses (fail closed)', async () => {
    for (const answer of [500, 'no', 200, true]) {
      const guard = createGuard({ connection: () => ({ requestRejection: () => answer }), webRuntime: () => undefined })
      assert.equal(await guard(loopback), 403, String(answer))
    }
    const async401 = createGuard({ connection: () => ({ requestRejection: async () => 401 }), webRuntime: () => undefined })
    assert.equal(await async401(loopback), 401)
  })

  test('without requestRejection: the fence, over the connection\'s trusted hosts', async () => {
    const guard = createGuard({ connection: () => ({ trustedHosts: ['evil.example:4000'] }), webRuntime: () => undefined })
    assert.equal(await guard(loopback), null)
    assert.equal(await guard(foreign), null)
    assert.equal(await guard(req({ host: 'other.example:4000' })), 403)
  })

  test('without a connection service: the fence, over the web runtime\'s trusted hosts', async () => {
    const guard = createGuard({ connection: () => undefined, webRuntime: () => ({ lanAddresses: [], trustedHosts: [] }) })
    assert.equal(await guard(loopback), null)
    assert.equal(await guard(foreign), 403)
  })

  test('a host offering neither: no guard at all', async () => {
    const guard = createGuard({ connection: () => ({ rpc: {} }), webRuntime: () => undefined })
    assert.equal(await guard(loopback), UNGUARDED)
    const none = createGuard({ connection: () => undefined, webRuntime: () => undefined })
    assert.equal(await none(loopback), UNGUARDED)
  })
})
