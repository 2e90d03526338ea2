'use strict'
/** The real Python server for the tests: which Python to run, and a direct instance to compare with. */

const crypto = require('node:crypto')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')

const REPOSITORY = path.resolve(__dirname, '..', '..', '..')
const FIXTURES = path.join(REPOSITORY, 'fixtures', 'sessions')

/**
 * A Python that can import dsh_task_gantt: $DSH_TASK_GANTT_TEST_PYTHON (the pytest driver
 * sets it to its own interpreter), else python3 on PATH; null when neither can.
 */
function testPython() {
  const candidates = [process.env.DSH_TASK_GANTT_TEST_PYTHON, 'python3'].filter(Boolean)
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ['-c', 'import dsh_task_gantt'], { stdio: 'ignore', timeout: 30000 })
    if (!probe.error && probe.status === 0) return candidate
  }
  return null
}

/** GET (or any method) with the raw answer: status, lower-cased headers, body bytes. */
function request(url, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** The direct servers these tests started themselves (not the plugin's children). */
const directPids = new Set()

/** Children of this process running `dsh_task_gantt.cli serve`, the direct servers aside (Linux: /proc). */
function servingChildren() {
  const pids = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || directPids.has(Number(entry))) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid !== process.pid) continue
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (cmdline.includes('dsh_task_gantt.cli') && cmdline.includes('serve')) pids.push(Number(entry))
    } catch {
      // The process ended while we looked.
    }
  }
  return pids
}

function alive(pid) {
  try {
    process.kill(pid, 0)
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

async function waitFor(predicate, timeoutMs = 15000, what = 'a condition') {
  const deadline = Date.now() + timeoutMs
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A `serve --behind-proxy` of our own over `root`, to compare the proxy's answers with. */
async function startDirect(python, root) {
  const port = await freePort()
  const secret = crypto.randomBytes(32).toString('hex')
  const child = spawn(python, ['-m', 'dsh_task_gantt.cli', 'serve', '--behind-proxy', '--port', String(port), '--sessions-root', root], {
    env: { ...process.env, DSH_TASK_GANTT_PROXY_SECRET: secret },
    stdio: 'ignore',
  })
  directPids.add(child.pid)
  const base = `http://127.0.0.1:${port}`
  await waitFor(async () => {
    try {
      return (await request(`${base}/plugins/dsh-task-gantt/static/panel.css`, { headers: { 'x-dsh-task-gantt-proxy': secret } })).status === 200
    } catch {
      return false
    }
  }, 30000, 'the direct server')
  return {
    get: (pathname, headers = {}) => request(`${base}${pathname}`, { headers: { ...headers, 'x-dsh-task-gantt-proxy': secret } }),
    stop: () => new Promise((resolve) => {
      child.once('exit', resolve)
      child.kill('SIGTERM')
    }),
  }
}

module.exports = { FIXTURES, REPOSITORY, testPython, request, servingChildren, alive, waitFor, startDirect }
