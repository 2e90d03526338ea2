'use strict'
/**
 * A DSH-like page for the browser test and the README's screenshot: the fake host
 * (real Node HTTP server, DSH's routing rules, a guard that lets everything in) with
 * the host half applied, so /plugins/dsh-task-gantt/* is the real proxy to the real
 * Python server, plus `/` = a page that mounts the real client half with a fake
 * client context. Prints `{"url": ...}` on stdout once it listens; stops on SIGTERM.
 *
 *   node plugin/dsh/testing/demo-host.js [sessions root]
 */

const fs = require('node:fs')
const path = require('node:path')

const { apply } = require('../index.js')
const { createContext, createWebServer } = require('./fake-host.js')
const { FIXTURES, testPython } = require('./python.js')

const FILES = {
  '/': ['demo/page.html', 'text/html; charset=utf-8'],
  '/demo/page.js': ['demo/page.js', 'text/javascript; charset=utf-8'],
  '/demo/page.css': ['demo/page.css', 'text/css; charset=utf-8'],
  '/demo/mini-dsh.js': ['mini-dsh.js', 'text/javascript; charset=utf-8'],
  '/demo/loader.js': ['demo/loader.js', 'text/javascript; charset=utf-8'],
  '/demo/client.js': ['../client.js', 'text/javascript; charset=utf-8'],
}

async function main() {
  const python = testPython()
  if (python === null) {
    process.stderr.write('no Python with dsh_task_gantt installed\n')
    process.exit(2)
  }
  const web = createWebServer()
  for (const [route, [file, type]] of Object.entries(FILES)) {
    web.webServer.register({
      kind: 'exact',
      path: route,
      handler: (req, res) => {
        res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' })
        res.end(fs.readFileSync(path.join(__dirname, file)))
      },
    })
  }
  const ctx = createContext({ webServer: web.webServer, connection: { requestRejection: () => undefined } })
  apply(ctx, { python, sessionsRoot: process.argv[2] || FIXTURES })
  const url = await web.listen()
  process.stdout.write(`${JSON.stringify({ url })}\n`)
  const stop = async () => {
    await ctx.dispose()
    await web.close()
    process.exit(0)
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}

main()
