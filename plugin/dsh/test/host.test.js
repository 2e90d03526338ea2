'use strict'
/**
 * The host half against a fake DSH host (a real Node HTTP server with DSH's routing
 * rules) and the real Python server over the repository's fixtures.
 */

const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { after, before, describe, test } = require('node:test')

const { apply } = require('../index.js')
const { createProxyHandler } = require('../lib/proxy.js')
const { RELAYED_LINE_CHARS, RELAYED_LINES_PER_CHILD, ServiceUnavailable, StderrRelay } = require('../lib/service.js')
const { createContext, createWebServer } = require('../testing/fake-host.js')
const { FIXTURES, alive, request, servingChildren, startDirect, testPython, waitFor } = require('../testing/python.js')

const PYTHON = testPython()
const SKIP = PYTHON === null
  ? 'no Python with dsh_task_gantt installed (set DSH_TASK_GANTT_TEST_PYTHON or put one on PATH as python3)'
  : process.platform !== 'linux'
    ? 'the child-process checks read /proc'
    : false
const PREFIX = '/plugins/dsh-task-gantt'
/** A frozen team of the fixtures: its lead's session. */
const LEAD = 'session-bbea4661-0acc-4317-8d18-889da97edfab'
/** How long the server may take to start and read one fixture team on a busy machine (a bound, not a guess). */
const READY_LINE_TIMEOUT_MS = 60000
/** How the server's line saying its start-up read is over begins (warm_up.py's READY_PREFIX). */
const READY = 'dsh-task-gantt: ready; '
/** What a same-origin iframe of a signed-in DSH page carries. */
const SIGNED_IN = { cookie: 'dsh_session=valid' }

/** DSH's guard, as its connection service describes it: Host, sec-fetch-site, then the session cookie. */
function fakeConnection(seen) {
  return {
    requestRejection(req) {
      seen.push(req.url)
      if (req.headers['sec-fetch-site'] === 'cross-site') return 403
      if (req.headers.cookie !== SIGNED_IN.cookie) return 401
      return undefined
    },
  }
}

/** A fake host with the plugin applied; `services` says which host services exist (a value replaces the fake). */
async function mount(config, services = { connection: true }) {
  const web = createWebServer()
  const base = await web.listen()
  const guarded = []
  const messages = []
  const given = { ...services }
  if (given.connection === true) given.connection = fakeConnection(guarded)
  if (!given.connection) delete given.connection
  const ctx = createContext({ webServer: web.webServer, ...given }, messages)
  apply(ctx, config)
  return {
    base,
    ctx,
    web,
    guarded,
    messages,
    get: (pathname, headers = SIGNED_IN) => request(`${base}${pathname}`, { headers }),
    async close() {
      await ctx.dispose()
      await web.close()
    },
  }
}

function errorOf(answer) {
  return JSON.parse(answer.body.toString('utf8'))
}

/** The timeline without the time it was generated at (the only field that differs between two reads). */
function timelineBody(answer) {
  const data = JSON.parse(answer.body.toString('utf8'))
  delete data.generatedAt
  return data
}

describe('the proxy in front of the real Python server', { skip: SKIP }, () => {
  let host
  let direct
  let sessions

  before(async () => {
    // Started on first use here, so that each test below knows which requests started it.
    host = await mount({ python: PYTHON, sessionsRoot: FIXTURES, startOnBoot: false })
    direct = await startDirect(PYTHON, FIXTURES)
    const start = await direct.get('/')
    sessions = [...start.body.toString('utf8').matchAll(/panel\?session=([A-Za-z0-9._-]+)/g)].map((m) => m[1])
    assert.ok(sessions.length >= 2, 'the fixtures hold several teams')
  })

  after(async () => {
    await host?.close()
    await direct?.stop()
  })

  test('401 and 403 from the guard never reach Python: no child is even started for them', async () => {
    const anonymous = await host.get(`${PREFIX}/panel?session=${sessions[0]}`, {})
    assert.equal(anonymous.status, 401)
    assert.deepEqual(errorOf(anonymous), { error: 'unauthorized', status: 401 })
    const crossSite = await host.get(`${PREFIX}/api/timeline?session=${sessions[0]}`, { ...SIGNED_IN, 'sec-fetch-site': 'cross-site' })
    assert.equal(crossSite.status, 403)
    assert.deepEqual(errorOf(crossSite), { error: 'forbidden', status: 403 })
    assert.deepEqual(servingChildren(), [], 'refused requests started no Python server')
    assert.deepEqual(host.guarded.slice(0, 2), [`${PREFIX}/panel?session=${sessions[0]}`, `${PREFIX}/api/timeline?session=${sessions[0]}`])
  })

  test('the panel, start page, API and static files equal the direct answers', async () => {
    const pairs = [
      [`${PREFIX}/`, '/'],
      [PREFIX, '/'],
      ...sessions.map((sid) => [`${PREFIX}/panel?session=${sid}`, `${PREFIX}/panel?session=${sid}`]),
      [`${PREFIX}/static/panel.css`, `${PREFIX}/static/panel.css`],
      [`${PREFIX}/static/panel.js`, `${PREFIX}/static/panel.js`],
      [`${PREFIX}/static/htmx-2.0.11.min.js`, `${PREFIX}/static/htmx-2.0.11.min.js`],
      [`${PREFIX}/static/start.css`, `${PREFIX}/static/start.css`],
      [`${PREFIX}/panel?session=no-such-session`, `${PREFIX}/panel?session=no-such-session`],
      [`${PREFIX}/api/timeline?session=bad%20id`, `${PREFIX}/api/timeline?session=bad%20id`],
      [`${PREFIX}/static/nothing.css`, `${PREFIX}/static/nothing.css`],
    ]
    for (const [proxied, straight] of pairs) {
      const mine = await host.get(proxied)
      const theirs = await direct.get(straight)
      assert.equal(mine.status, theirs.status, proxied)
      assert.equal(mine.headers['content-type'], theirs.headers['content-type'], proxied)
      assert.equal(mine.headers['content-security-policy'], theirs.headers['content-security-policy'], proxied)
      assert.equal(mine.headers['cache-control'], theirs.headers['cache-control'], proxied)
      assert.ok(mine.body.equals(theirs.body), `${proxied}: the body differs`)
    }
  })

  test('with the child running, a refused request still gets the guard\'s answer, not the panel', async () => {
    assert.equal(servingChildren().length, 1)
    // Forwarded, it would be a 200: the proxy adds the secret the child wants.
    const refused = await host.get(`${PREFIX}/panel?session=${sessions[0]}`, { cookie: 'dsh_session=stale' })
    assert.equal(refused.status, 401)
    assert.deepEqual(errorOf(refused), { error: 'unauthorized', status: 401 })
  })

  test('the timeline API: same JSON, same ETag, and If-None-Match gives 304 through the proxy too', async () => {
    for (const sid of sessions) {
      const url = `${PREFIX}/api/timeline?session=${sid}`
      const mine = await host.get(url)
      const theirs = await direct.get(url)
      assert.equal(mine.status, 200)
      assert.equal(mine.headers['content-type'], theirs.headers['content-type'])
      assert.equal(mine.headers.etag, theirs.headers.etag)
      assert.deepEqual(timelineBody(mine), timelineBody(theirs))
      const again = await host.get(url, { ...SIGNED_IN, 'if-none-match': mine.headers.etag })
      assert.equal(again.status, 304)
      assert.equal(again.body.length, 0)
      assert.equal(again.headers.etag, mine.headers.etag)
    }
  })

  test('hop-by-hop headers and DSH credentials are not passed on', async () => {
    const answer = await host.get(`${PREFIX}/static/panel.css`, { ...SIGNED_IN, connection: 'keep-alive, x-private', 'x-private': 'no', 'proxy-authorization': 'Basic eA==' })
    assert.equal(answer.status, 200)
    assert.equal(answer.headers['x-private'], undefined)
    assert.equal(answer.headers['set-cookie'], undefined)
  })

  test('the child comes back after a crash, and is gone after dispose', async () => {
    const [first] = servingChildren()
    assert.ok(first, 'a Python server runs after the first answered request')
    // A request right after the crash, before the host has even seen the exit.
    process.kill(first, 'SIGKILL')
    const next = await host.get(`${PREFIX}/panel?session=${sessions[0]}`)
    assert.equal(next.status, 200, `the next request restarted the server: ${next.body}`)
    const [second] = servingChildren()
    assert.ok(second && second !== first)
    await waitFor(() => !alive(first), 10000, 'the killed child to be reaped')
    assert.ok(host.messages.some(([level, line]) => level === 'warn' && line.includes(`pid ${first}`)))

    // And once the exit has been seen: the next request starts a third.
    process.kill(second, 'SIGKILL')
    await waitFor(() => !alive(second) && host.messages.some(([, line]) => line.includes(`pid ${second}`)), 10000, 'the exit to be seen')
    const third = await host.get(`${PREFIX}/api/timeline?session=${sessions[0]}`)
    assert.equal(third.status, 200)
    const [latest] = servingChildren()
    assert.ok(latest && latest !== second)

    await host.ctx.dispose()
    await waitFor(() => !alive(latest), 10000, 'the child to stop after dispose')
    assert.deepEqual(servingChildren(), [])
    const gone = await host.get(`${PREFIX}/panel?session=${sessions[0]}`)
    assert.equal(gone.status, 404, 'the route left with the plugin')
  })
})

describe('the proxy without what it needs', { skip: SKIP }, () => {
  test('a host offering no guard (no requestRejection, no trusted hosts) gets 503, never an unguarded answer', async () => {
    const host = await mount({ python: PYTHON, sessionsRoot: FIXTURES, startOnBoot: false }, { connection: { rpc: {} } })
    try {
      const answer = await host.get(`${PREFIX}/panel?session=x`)
      assert.equal(answer.status, 503)
      assert.match(errorOf(answer).error, /offers no guard/)
      assert.deepEqual(servingChildren(), [])
    } finally {
      await host.close()
    }
  })

  test('a missing Python gives 503 with the reason and the setting to change', async () => {
    const missing = path.join(os.tmpdir(), 'no-such-dir', 'python3')
    const host = await mount({ python: missing, sessionsRoot: FIXTURES, startOnBoot: false })
    try {
      const answer = await host.get(`${PREFIX}/panel?session=x`)
      assert.equal(answer.status, 503)
      const { error } = errorOf(answer)
      assert.ok(error.includes(missing) && error.includes('"python" setting') && error.includes('ENOENT'), error)
    } finally {
      await host.close()
    }
  })

  test('a Python without the package gives 503 saying so', async () => {
    // The same interpreter without its site-packages: dsh_task_gantt cannot be imported.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-team-timeline-'))
    const bare = path.join(dir, 'python-without-site')
    fs.writeFileSync(bare, `#!/bin/sh\nexec ${JSON.stringify(PYTHON)} -S "$@"\n`, { mode: 0o755 })
    const host = await mount({ python: bare, sessionsRoot: FIXTURES, startOnBoot: false })
    try {
      const answer = await host.get(`${PREFIX}/`)
      assert.equal(answer.status, 503)
      const { error } = errorOf(answer)
      assert.ok(error.includes('has no dsh_task_gantt package') && error.includes(bare), error)
      assert.deepEqual(servingChildren(), [])
    } finally {
      await host.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a host without a web server leaves the plugin dormant: no route, no child', async () => {
    const ctx = createContext({})
    apply(ctx, { python: PYTHON })
    assert.deepEqual(servingChildren(), [])
    await ctx.dispose()
  })
})

describe('on a DSH before 0.1.5 (a connection service without requestRejection)', { skip: SKIP }, () => {
  test("DSH's own /api fence guards the routes: loopback and trusted Hosts in, a foreign Host or a cross-site Origin out", async () => {
    // What DSH 0.1.0-rc.8 and 0.1.1-rc.2 offer: `connection.trustedHosts`, no requestRejection.
    const host = await mount({ python: PYTHON, sessionsRoot: FIXTURES, startOnBoot: false }, { connection: { trustedHosts: ['box.lan'] } })
    try {
      const port = new URL(host.base).port
      const asked = async (headers) => (await host.get(`${PREFIX}/static/panel.css`, headers)).status
      assert.equal(await asked({ 'sec-fetch-site': 'cross-site' }), 403)
      assert.equal(await asked({ host: `evil.example:${port}` }), 403)
      assert.equal(await asked({ origin: 'http://evil.example' }), 403)
      assert.deepEqual(servingChildren(), [], 'refused requests started no Python server')
      assert.equal(await asked({}), 200)
      assert.equal(await asked({ origin: host.base }), 200)
      assert.equal(await asked({ host: `box.lan:${port}`, origin: `http://box.lan:${port}` }), 200)
      assert.equal(await asked({ host: `box.lan:${port}`, origin: host.base }), 403)
    } finally {
      await host.close()
    }
  })

  test("without a connection service, the web runtime's trusted hosts serve the same fence", async () => {
    const host = await mount({ python: PYTHON, sessionsRoot: FIXTURES, startOnBoot: false }, { webRuntime: { lanAddresses: [], trustedHosts: [] } })
    try {
      assert.equal((await host.get(`${PREFIX}/static/panel.css`, {})).status, 200)
      assert.equal((await host.get(`${PREFIX}/static/panel.css`, { host: 'box.lan' })).status, 403)
    } finally {
      await host.close()
    }
  })
})

describe('starting with the host', { skip: SKIP }, () => {
  test('the child starts when the plugin applies, without apply waiting, and the first panel is warm', async () => {
    const sessions = fixturesWrittenLastBy(LEAD)
    const host = await mount({ python: PYTHON, sessionsRoot: sessions.dir })
    try {
      // apply returned at once (mount awaited nothing of the child): the route is there
      // and answers while the child may still be starting.
      assert.ok(host.web.webServer.routes.has(`prefix ${PREFIX}`))
      await waitFor(() => servingChildren().length === 1, 20000, 'the child to start without a request')
      // The server reads the team written last (the lead's) at start-up and says so when
      // done; the host half relays that line into DSH's log.
      await waitFor(() => host.messages.some(([, line]) => line.includes(READY)), READY_LINE_TIMEOUT_MS, 'the ready line in the log')
      const ready = host.messages.filter(([, line]) => line.includes(READY))
      assert.equal(ready.length, 1)
      assert.equal(ready[0][0], 'info')
      assert.match(ready[0][1], new RegExp(`^\\[dsh-team-timeline\\] ${READY}read the team ${LEAD} at start-up in \\d+ ms$`))
      const panel = await host.get(`${PREFIX}/panel?session=${LEAD}`)
      assert.equal(panel.status, 200)
      assert.ok(panel.headers['content-length'], 'a warm panel is rendered whole, not streamed while reading')
      assert.ok(!panel.body.toString('utf8').includes('Reading the team'), 'no reading status on a warm panel')
    } finally {
      await host.close()
      sessions.remove()
    }
    assert.deepEqual(servingChildren(), [])
  })

  test('startOnBoot: false starts nothing until the first request', async () => {
    const host = await mount({ python: PYTHON, sessionsRoot: FIXTURES, startOnBoot: false })
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.deepEqual(servingChildren(), [])
      assert.equal((await host.get(`${PREFIX}/static/panel.css`)).status, 200)
      assert.equal(servingChildren().length, 1)
    } finally {
      await host.close()
    }
  })

  test("a start that fails is reported in the host's log and tried again on first use", async () => {
    // A Python that fails the first time it is run, and works from then on.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-team-timeline-'))
    const flaky = path.join(dir, 'flaky-python')
    const once = path.join(dir, 'failed-once')
    fs.writeFileSync(flaky, `#!/bin/sh
if [ ! -e ${JSON.stringify(once)} ]; then : > ${JSON.stringify(once)}; echo 'not today' >&2; exit 3; fi
exec ${JSON.stringify(PYTHON)} "$@"
`, { mode: 0o755 })
    const host = await mount({ python: flaky, sessionsRoot: FIXTURES })
    try {
      await waitFor(() => host.messages.some(([level, line]) => level === 'warn' && line.includes('did not start with the host')), 20000, 'the failed start to be logged')
      const warning = host.messages.find(([, line]) => line.includes('did not start with the host'))[1]
      assert.ok(warning.includes('exited with code 3') && warning.includes('not today'), warning)
      // At once (no cooldown left by the start with the host): the first request starts it.
      const answer = await host.get(`${PREFIX}/static/panel.css`)
      assert.equal(answer.status, 200)
      assert.equal(servingChildren().length, 1)
    } finally {
      await host.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
  test("where DSH's log only buffers (a cordis logger without exporters of its own), a failed start is also on stderr", async () => {
    const web = createWebServer()
    await web.listen()
    const buffered = []
    // cordis's logger service: callable for a named logger, its first exporter its own buffer.
    const cordisLogger = Object.assign((name) => ({ warn: (line) => buffered.push([name, line]), info: () => {} }), {
      exporters: new Map([[1, { export: () => {} }]]),
    })
    const ctx = createContext({ webServer: web.webServer, connection: { trustedHosts: [] } })
    ctx.logger = cordisLogger
    const printed = []
    const consoleError = console.error
    console.error = (line) => printed.push(String(line))
    try {
      apply(ctx, { python: path.join(os.tmpdir(), 'no-such-dir', 'python3'), sessionsRoot: FIXTURES })
      await waitFor(() => buffered.length > 0, 10000, 'the failed start to be logged')
      assert.equal(buffered[0][0], 'dsh-team-timeline')
      assert.match(buffered[0][1], /did not start with the host.*ENOENT/)
      assert.equal(printed.length, 1)
      assert.match(printed[0], /^dsh-team-timeline: dsh-task-gantt serve did not start with the host/)
    } finally {
      console.error = consoleError
      await ctx.dispose()
      await web.close()
    }
  })
})

describe("the child's stderr in DSH's log", { skip: SKIP }, () => {
  test('only the server\'s own announced lines are relayed, escaped; the rest of its stderr is not', async () => {
    // A Python that writes a flood of other lines, a forged announcement with terminal
    // escapes, and one overlong line before the real server starts.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-team-timeline-'))
    const noisy = path.join(dir, 'noisy-python')
    fs.writeFileSync(noisy, `#!/bin/sh
i=0; while [ $i -lt 2000 ]; do echo "Traceback line $i" >&2; i=$((i+1)); done
printf '${READY}read the team \\033[2Jx\\342\\200\\256y at start-up in 1 ms\\n' >&2
head -c 200000 /dev/zero | tr '\\0' 'a' >&2; echo >&2
exec ${JSON.stringify(PYTHON)} "$@"
`, { mode: 0o755 })
    const sessions = fixturesWrittenLastBy(LEAD)
    const host = await mount({ python: noisy, sessionsRoot: sessions.dir })
    try {
      await waitFor(() => host.messages.filter(([, line]) => line.includes(READY)).length === 2, READY_LINE_TIMEOUT_MS, 'both ready lines')
      const fromChild = host.messages.filter(([, line]) => !/proxying|serve ready/.test(line))
      assert.equal(fromChild.length, 2, JSON.stringify(fromChild).slice(0, 500))
      assert.equal(fromChild[0][1], `[dsh-team-timeline] ${READY}read the team \\u001b[2Jx\\u202ey at start-up in 1 ms`)
      assert.match(fromChild[1][1], new RegExp(`read the team ${LEAD} at start-up in \\d+ ms$`))
      assert.ok(host.messages.every(([, line]) => !line.includes('Traceback') && !line.includes('aaaa')))
    } finally {
      await host.close()
      sessions.remove()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test("where DSH's log only buffers, the ready line is also on stderr (as `dsh web` shows it)", async () => {
    const web = createWebServer()
    await web.listen()
    const buffered = []
    const cordisLogger = Object.assign((name) => ({ info: (line) => buffered.push([name, line]), warn: () => {} }), {
      exporters: new Map([[1, { export: () => {} }]]),
    })
    const ctx = createContext({ webServer: web.webServer, connection: { trustedHosts: [] } })
    ctx.logger = cordisLogger
    const printed = []
    const consoleError = console.error
    console.error = (line) => printed.push(String(line))
    const sessions = fixturesWrittenLastBy(LEAD)
    try {
      apply(ctx, { python: PYTHON, sessionsRoot: sessions.dir })
      await waitFor(() => printed.some((line) => line.includes(READY)), READY_LINE_TIMEOUT_MS, 'the ready line on stderr')
      assert.deepEqual(printed.filter((line) => !line.includes(READY)), [], 'nothing else from the child on stderr')
      assert.match(printed[0], new RegExp(`^dsh-team-timeline: ${READY}read the team ${LEAD} at start-up in \\d+ ms$`))
      assert.ok(buffered.some(([, line]) => line.includes(READY)), 'and in the logger too')
    } finally {
      console.error = consoleError
      await ctx.dispose()
      await web.close()
      sessions.remove()
    }
  })
})

describe('picking the announced lines out of a stderr stream', () => {
  test('whole lines only, however the chunks fall; other lines never', () => {
    const relay = new StderrRelay()
    assert.deepEqual(relay.push('dsh-task-gantt: serving /x\nINFO: something\ndsh-task-gantt: re'), [])
    assert.deepEqual(relay.push('ady; no team read at start-up (3 ms)'), [], 'not until its newline')
    assert.deepEqual(relay.push('\r\nTraceback\n'), ['dsh-task-gantt: ready; no team read at start-up (3 ms)'])
    assert.deepEqual(relay.push('  dsh-task-gantt: ready; indented is not ours\n'), [])
  })

  test('controls escaped, lines cut, an overlong line dropped, and a bounded number per child', () => {
    const relay = new StderrRelay()
    const [escaped] = relay.push(`${READY}a\u001b]0;title\u0007b\u2028c\u009bd\n`)
    assert.equal(escaped, `${READY}a\\u001b]0;title\\u0007b\\u2028c\\u009bd`)
    const [cut] = relay.push(`${READY}${'é'.repeat(1000)}\n`)
    assert.equal(cut.length, RELAYED_LINE_CHARS + 1)
    assert.ok(cut.endsWith('…'))
    // A line that never ends within a sane length is no announcement, even if it began as one.
    assert.deepEqual(relay.push(`${READY}${'x'.repeat(5000)}`), [])
    assert.deepEqual(relay.push(`${'x'.repeat(5000)}\n`), [])
    const flood = relay.push(`${READY}again\n`.repeat(100))
    assert.equal(flood.length, RELAYED_LINES_PER_CHILD - 2)
    assert.deepEqual(relay.push(`${READY}more\n`), [])
  })
})

/**
 * A copy of the fixtures in which `session`'s log was written last (the team a server
 * reads at start-up), and a remover.
 */
function fixturesWrittenLastBy(session) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-team-timeline-sessions-'))
  fs.cpSync(FIXTURES, dir, { recursive: true })
  // Later than the copies just made (whose times are finer than a Date's milliseconds).
  const now = new Date(Date.now() + 60000)
  for (const project of fs.readdirSync(dir)) {
    const folder = path.join(dir, project, session)
    if (!fs.existsSync(folder)) continue
    for (const file of fs.readdirSync(folder)) fs.utimesSync(path.join(folder, file), now, now)
  }
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

describe('the proxy with a stand-in upstream', () => {
  test('a streamed (chunked) answer reaches the browser as it is sent, not when it ends', async () => {
    // The child sends a page's head, then waits (as a cold server reads the logs) until
    // the browser has the head or a time limit has passed, and only then sends the rest.
    let headSeen
    const seen = new Promise((resolve) => { headSeen = resolve })
    let headArrivedFirst = null
    const streaming = http.createServer(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.write('<!doctype html><p role="status">Reading the team\'s logs…</p>')
      headArrivedFirst = await Promise.race([
        seen.then(() => true),
        new Promise((resolve) => setTimeout(() => resolve(false), 3000)),
      ])
      res.end('<main>the board</main>')
    })
    await new Promise((resolve) => streaming.listen(0, '127.0.0.1', resolve))
    const service = { ensure: async () => ({ port: streaming.address().port, secret: 's' }), lost: () => {} }
    const web = createWebServer()
    web.webServer.register({ kind: 'prefix', path: PREFIX, handler: createProxyHandler({ connection: () => ({ requestRejection: () => undefined }), service }) })
    const base = await web.listen()
    try {
      const chunks = await new Promise((resolve, reject) => {
        http.get(`${base}${PREFIX}/panel?session=s`, (res) => {
          assert.equal(res.statusCode, 200)
          assert.equal(res.headers['content-length'], undefined, 'no length: the answer is streamed')
          const got = []
          res.on('data', (chunk) => {
            got.push(String(chunk))
            if (got.join('').includes('Reading the team')) headSeen()
          })
          res.on('end', () => resolve(got))
          res.on('error', reject)
        }).on('error', reject)
      })
      assert.equal(headArrivedFirst, true, 'the head reached the browser while the child still held the rest')
      const body = chunks.join('')
      assert.ok(body.startsWith('<!doctype html>') && body.endsWith('<main>the board</main>'), body)
    } finally {
      await web.close()
      streaming.closeAllConnections()
      await new Promise((resolve) => streaming.close(resolve))
    }
  })

  test('a browser that goes away mid-request stops the upstream request and leaves the child alone', async () => {
    let upstreamClosed
    const closed = new Promise((resolve) => { upstreamClosed = resolve })
    const slow = http.createServer((req) => req.socket.once('close', upstreamClosed)) // never answers
    await new Promise((resolve) => slow.listen(0, '127.0.0.1', resolve))
    const lost = []
    const service = { ensure: async () => ({ port: slow.address().port, secret: 's' }), lost: (port) => lost.push(port) }
    const web = createWebServer()
    web.webServer.register({ kind: 'prefix', path: PREFIX, handler: createProxyHandler({ connection: () => ({ requestRejection: () => undefined }), service }) })
    const base = await web.listen()
    try {
      const req = http.get(`${base}${PREFIX}/api/timeline?session=s`)
      req.on('error', () => {})
      await new Promise((resolve) => setTimeout(resolve, 200))
      req.destroy()
      await closed
      await new Promise((resolve) => setTimeout(resolve, 50))
      assert.deepEqual(lost, [], 'an abandoned request is no sign of a dead child')
    } finally {
      await web.close()
      slow.closeAllConnections()
      await new Promise((resolve) => slow.close(resolve))
    }
  })

  test('an upstream that drops the connection is a 502, and nothing listening is a restart', async () => {
    const rude = http.createServer((req) => req.socket.destroy())
    await new Promise((resolve) => rude.listen(0, '127.0.0.1', resolve))
    const lost = []
    const rudePort = rude.address().port
    // A child that is still alive: a reset is its own doing, not a crash.
    const service = { ensure: async () => ({ port: rudePort, secret: 's' }), lost: (port) => lost.push(port), diedWithin: async () => false }
    const web = createWebServer()
    web.webServer.register({ kind: 'prefix', path: PREFIX, handler: createProxyHandler({ connection: () => ({ requestRejection: () => undefined }), service }) })
    const base = await web.listen()
    try {
      const dropped = await request(`${base}${PREFIX}/static/panel.css`)
      assert.equal(dropped.status, 502)
      assert.deepEqual(lost, [])
      rude.closeAllConnections()
      await new Promise((resolve) => rude.close(resolve))
      const refused = await request(`${base}${PREFIX}/static/panel.css`)
      assert.equal(refused.status, 503)
      assert.deepEqual(lost, [rudePort, rudePort], 'refused: the child is given up, and the one retry is refused too')
    } finally {
      await web.close()
    }
  })

  test('a reset from a child that is exiting restarts it and asks the new one once', async () => {
    const rude = http.createServer((req) => req.socket.destroy())
    await new Promise((resolve) => rude.listen(0, '127.0.0.1', resolve))
    const polite = http.createServer((req, res) => res.end('from the new child'))
    await new Promise((resolve) => polite.listen(0, '127.0.0.1', resolve))
    const ports = [rude.address().port, polite.address().port]
    const lost = []
    const service = { ensure: async () => ({ port: ports[lost.length], secret: 's' }), lost: (port) => lost.push(port), diedWithin: async () => true }
    const web = createWebServer()
    web.webServer.register({ kind: 'prefix', path: PREFIX, handler: createProxyHandler({ connection: () => ({ requestRejection: () => undefined }), service }) })
    const base = await web.listen()
    try {
      const answer = await request(`${base}${PREFIX}/static/panel.css`)
      assert.equal(answer.status, 200)
      assert.equal(String(answer.body), 'from the new child')
      assert.deepEqual(lost, [ports[0]])
    } finally {
      await web.close()
      rude.closeAllConnections()
      await new Promise((resolve) => rude.close(resolve))
      await new Promise((resolve) => polite.close(resolve))
    }
  })
  test('a child that cannot be started again says why, in the words of the first start', async () => {
    // A port nothing listens on: the first child is gone, and starting another fails.
    const gone = http.createServer()
    await new Promise((resolve) => gone.listen(0, '127.0.0.1', resolve))
    const port = gone.address().port
    await new Promise((resolve) => gone.close(resolve))
    for (const [failure, words] of [
      [new ServiceUnavailable('Python 3.11 or newer is needed'), 'Python 3.11 or newer is needed'],
      [new Error('spawn EAGAIN'), 'the timeline service could not start'],
    ]) {
      let starts = 0
      const service = {
        ensure: async () => {
          starts += 1
          if (starts > 1) throw failure
          return { port, secret: 's' }
        },
        lost: () => {},
        diedWithin: async () => true,
      }
      const web = createWebServer()
      web.webServer.register({ kind: 'prefix', path: PREFIX, handler: createProxyHandler({ connection: () => ({ requestRejection: () => undefined }), service }) })
      const base = await web.listen()
      try {
        const answer = await request(`${base}${PREFIX}/static/panel.css`)
        assert.equal(answer.status, 503)
        assert.equal(errorOf(answer).error, words)
        assert.equal(starts, 2)
      } finally {
        await web.close()
      }
    }
  })
})
