'use strict'
/**
 * The Python service behind the proxy: one `dsh-task-gantt serve --behind-proxy`
 * child on a loopback port, started with the host (`startInBackground`) or on first
 * use, waited for until it answers, started again on the next use after it died, and
 * stopped with the plugin.
 *
 * The per-boot secret reaches the child in its environment, never on its command
 * line (where `ps` shows it to every user of the machine).
 */

const crypto = require('node:crypto')
const http = require('node:http')
const net = require('node:net')
const os = require('node:os')
const { spawn } = require('node:child_process')

const { PROXY_HEADER, ROUTE_PREFIX } = require('./constants.js')

/** Where the child reads the proxy's secret (the Python side's PROXY_SECRET_ENV). */
const SECRET_ENV = 'DSH_TASK_GANTT_PROXY_SECRET'
/** The environment variable naming the Python executable when the config does not. */
const PYTHON_ENV = 'DSH_TASK_GANTT_PYTHON'
/** A cheap request that only a ready server answers with 200 (a file read at start-up). */
const READY_PATH = `${ROUTE_PREFIX}/static/panel.css`
const READY_POLL_MS = 100
const DEFAULT_READY_TIMEOUT_MS = 20000
const STOP_GRACE_MS = 5000
/** After a failed start, requests get the same reason for this long instead of a new child each. */
const FAILED_START_COOLDOWN_MS = 2000
/** How much of the child's stderr is kept to explain a failed start. */
const STDERR_TAIL_BYTES = 4096
/**
 * The child's stderr lines relayed into DSH's log: only the server's own announcements,
 * by how they begin (warm_up.py's READY_PREFIX: its start-up read is over, so the first
 * panel opened is warm). Anything else it writes stays in the tail above.
 */
const ANNOUNCED = ['dsh-task-gantt: ready; ']
/** A relayed line (escaped) is cut to this many characters (a team root is a folder's name). */
const RELAYED_LINE_CHARS = 300
/** At most this many lines relayed per child: its log cannot flood DSH's. */
const RELAYED_LINES_PER_CHILD = 4
/** A line longer than this (no newline yet) is not an announcement: dropped up to its end. */
const PENDING_LINE_CHARS = 2048
/** C0/C1 controls, and the marks that reorder or break a terminal's line. */
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/** `text` with every control character written as an escape (one line, nothing a terminal obeys). */
function escapeControls(text) {
  return text.replace(UNSAFE_CHARS, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * Picks the announced lines out of a child's stderr as it arrives in chunks: whole lines
 * only, each escaped and cut, at most `RELAYED_LINES_PER_CHILD` of them.
 */
class StderrRelay {
  constructor() {
    this.pending = ''
    this.overlong = false
    this.relayed = 0
  }

  /** The announced lines completed by `text` (a decoded chunk). */
  push(text) {
    const lines = []
    const parts = text.split('\n')
    const last = parts.pop()
    for (const part of parts) {
      const line = this.overlong ? null : this.pending + part
      this.pending = ''
      this.overlong = false
      if (line !== null) lines.push(line)
    }
    if (!this.overlong) {
      this.pending += last
      if (this.pending.length > PENDING_LINE_CHARS) {
        this.pending = ''
        this.overlong = true
      }
    }
    const announced = []
    for (const raw of lines) {
      const line = raw.replace(/\r$/, '')
      if (this.relayed >= RELAYED_LINES_PER_CHILD) break
      if (!ANNOUNCED.some((prefix) => line.startsWith(prefix))) continue
      this.relayed += 1
      const safe = escapeControls(line)
      announced.push(safe.length > RELAYED_LINE_CHARS ? `${safe.slice(0, RELAYED_LINE_CHARS)}…` : safe)
    }
    return announced
  }
}

class ServiceUnavailable extends Error {
  /** @param {string} reason - one sentence a user can act on. */
  constructor(reason) {
    super(reason)
    this.reason = reason
  }
}

/** The Python to run: the plugin's `python` setting, else $DSH_TASK_GANTT_PYTHON, else python3. */
function pythonExecutable(config, env = process.env) {
  const configured = config && typeof config.python === 'string' ? config.python.trim() : ''
  if (configured) return configured
  const fromEnv = typeof env[PYTHON_ENV] === 'string' ? env[PYTHON_ENV].trim() : ''
  if (fromEnv) return fromEnv
  return process.platform === 'win32' ? 'python' : 'python3'
}

/** A port the OS just handed out on 127.0.0.1 (free now; the child binds it a moment later). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** GET the ready path once: true on 200, false on anything else (including no answer yet). */
function answers(port, secret) {
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: READY_PATH, headers: { [PROXY_HEADER]: secret }, timeout: 2000 },
      (res) => {
        res.resume()
        resolve(res.statusCode === 200)
      },
    )
    req.once('timeout', () => req.destroy())
    req.once('error', () => resolve(false))
  })
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Why a child that exited before answering could not serve, in words. */
function exitReason(python, code, signal, stderrTail) {
  if (/No module named '?dsh_task_gantt/.test(stderrTail)) {
    return `the Python at "${python}" has no dsh_task_gantt package: install it there `
      + `(pip install <path to the dsh-task-gantt repository>) or point the "python" setting `
      + `(or ${PYTHON_ENV}) at a Python that has it`
  }
  const lines = stderrTail.split('\n').map((line) => line.trim()).filter(Boolean)
  const last = lines.length > 0 ? `: ${lines[lines.length - 1].slice(0, 300)}` : ''
  const how = signal ? `signal ${signal}` : `code ${code}`
  return `dsh-task-gantt serve (${python}) exited with ${how} before answering${last}`
}

class PythonService {
  /**
   * @param {object} options
   * @param {string} options.python - the executable (run as `python -m dsh_task_gantt.cli`).
   * @param {string} [options.sessionsRoot] - passed as --sessions-root; else Python's default
   *   ($DSH_HOME/sessions or ~/.dsh/sessions, the folder DSH writes).
   * @param {number} [options.readyTimeoutMs]
   * @param {(level: string, message: string, options?: {shown?: boolean}) => void} [options.log]
   *   `shown`: also on the terminal where the host's log only buffers.
   */
  constructor({ python, sessionsRoot, readyTimeoutMs = DEFAULT_READY_TIMEOUT_MS, log = () => {} }) {
    this.python = python
    this.sessionsRoot = sessionsRoot
    this.readyTimeoutMs = readyTimeoutMs
    this.log = log
    // One secret per plugin boot, shared by every child of this boot.
    this.secret = crypto.randomBytes(32).toString('hex')
    this.child = null
    this.port = null
    this.starting = null
    this.failure = null
    this.disposed = false
    this.killOnExit = () => {
      if (this.child) this.child.kill('SIGKILL')
    }
    process.once('exit', this.killOnExit)
  }

  /** The pid of the running child, or null. */
  get pid() {
    return this.child ? this.child.pid : null
  }

  /**
   * A ready child: `{port, secret}`. Starts one when none runs; concurrent callers share
   * one start. Rejects with ServiceUnavailable (and its reason) when it cannot start.
   */
  ensure() {
    if (this.disposed) return Promise.reject(new ServiceUnavailable('the plugin has been stopped'))
    if (this.child && this.port !== null && !this.starting) {
      return Promise.resolve({ port: this.port, secret: this.secret })
    }
    if (this.starting) return this.starting
    if (this.failure && Date.now() - this.failure.at < FAILED_START_COOLDOWN_MS) {
      return Promise.reject(this.failure.error)
    }
    this.starting = this.start().then(
      (ready) => {
        this.starting = null
        this.failure = null
        return ready
      },
      (error) => {
        this.starting = null
        const unavailable = error instanceof ServiceUnavailable ? error : new ServiceUnavailable(String(error && error.message))
        this.failure = { at: Date.now(), error: unavailable }
        throw unavailable
      },
    )
    return this.starting
  }

  /**
   * Start a child now, without anyone waiting for it: the host's own start goes on, and
   * the server's start-up read (the team written last) and lane cache make the first
   * panel warm. A start that fails is logged and leaves no cooldown behind, so the
   * first request tries again (and then answers with the reason).
   */
  startInBackground() {
    if (this.disposed) return
    this.ensure().catch((error) => {
      if (this.disposed) return
      const reason = error instanceof ServiceUnavailable ? error.reason : String(error && error.message)
      this.log('warn', `dsh-task-gantt serve did not start with the host; the first request tries again: ${reason}`)
      this.failure = null
    })
  }

  /**
   * A request found nothing listening on `port`: that child is dead or dying, even if
   * its exit has not been seen yet. Forget it (and make sure it is gone) so the next
   * `ensure` starts another.
   */
  lost(port) {
    if (this.port !== port || !this.child || this.starting) return
    const child = this.child
    this.child = null
    this.port = null
    child.kill('SIGKILL')
  }

  /**
   * Whether the child serving `port` is gone, or goes within `ms`. A connection reset can
   * mean a child killed a moment ago (its socket torn down before its exit is seen) or a
   * live child dropping one request; only the first is worth a restart.
   */
  async diedWithin(port, ms) {
    if (this.port !== port || !this.child) return true
    const ended = this.childEnded
    return Promise.race([ended.then(() => true), delay(ms).then(() => false)])
  }

  async start() {
    const port = await freePort()
    const args = ['-m', 'dsh_task_gantt.cli', 'serve', '--behind-proxy', '--host', '127.0.0.1', '--port', String(port)]
    if (this.sessionsRoot) args.push('--sessions-root', this.sessionsRoot)
    let child
    try {
      child = spawn(this.python, args, {
        // Not the host's working directory: `-m` puts the cwd first on sys.path.
        cwd: os.tmpdir(),
        env: { ...process.env, [SECRET_ENV]: this.secret, PYTHONUNBUFFERED: '1' },
        stdio: ['ignore', 'ignore', 'pipe'],
        windowsHide: true,
      })
    } catch (error) {
      throw new ServiceUnavailable(this.notFound(error))
    }
    let stderrTail = ''
    const relay = new StderrRelay()
    // Decoded as a stream: a character split between two chunks stays whole.
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (text) => {
      stderrTail = (stderrTail + text).slice(-STDERR_TAIL_BYTES)
      // Shown on the terminal too where DSH's log only buffers: a user sees when the first
      // panel will be warm.
      for (const line of relay.push(text)) this.log('info', line, { shown: true })
    })
    const ended = new Promise((resolve) => {
      child.once('error', (error) => resolve({ error }))
      child.once('exit', (code, signal) => resolve({ code, signal }))
    })
    this.child = child
    this.port = port
    this.childEnded = ended
    ended.then((end) => {
      if (this.child === child) {
        this.child = null
        this.port = null
      }
      if (!this.disposed && !end.error) this.log('warn', `dsh-task-gantt serve (pid ${child.pid}) exited (${end.signal || end.code}); it restarts on the next request`)
    })

    const deadline = Date.now() + this.readyTimeoutMs
    for (;;) {
      const race = await Promise.race([ended, answers(port, this.secret).then((ok) => ({ ok }))])
      if (race.error) throw new ServiceUnavailable(this.notFound(race.error))
      if ('code' in race || 'signal' in race) {
        throw new ServiceUnavailable(exitReason(this.python, race.code, race.signal, stderrTail))
      }
      if (race.ok) break
      if (this.disposed) {
        await this.stop()
        throw new ServiceUnavailable('the plugin has been stopped')
      }
      if (Date.now() > deadline) {
        await this.stop()
        throw new ServiceUnavailable(`dsh-task-gantt serve (${this.python}) did not answer within ${this.readyTimeoutMs} ms`)
      }
      await delay(READY_POLL_MS)
    }
    this.log('info', `dsh-task-gantt serve ready on 127.0.0.1:${port} (pid ${child.pid})`)
    return { port, secret: this.secret }
  }

  notFound(error) {
    const code = error && error.code ? ` (${error.code})` : ''
    return `the Python executable "${this.python}" could not be started${code}: set the plugin's `
      + `"python" setting (or ${PYTHON_ENV}) to a Python ≥ 3.11 with dsh-task-gantt installed`
  }

  /** Stop the child (SIGTERM, then SIGKILL after a grace period); resolves when it is gone. */
  async stop() {
    const child = this.child
    this.child = null
    this.port = null
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
    await gone
    clearTimeout(timer)
  }

  /** The plugin is going away: no new child, and the running one stops. */
  async dispose() {
    this.disposed = true
    process.removeListener('exit', this.killOnExit)
    const starting = this.starting
    await this.stop()
    if (starting) await starting.catch(() => {})
    await this.stop()
  }
}

module.exports = { PythonService, ServiceUnavailable, StderrRelay, pythonExecutable, PYTHON_ENV, RELAYED_LINE_CHARS, RELAYED_LINES_PER_CHILD, SECRET_ENV }
