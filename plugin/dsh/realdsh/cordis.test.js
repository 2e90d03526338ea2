'use strict'
/**
 * The browser half under DSH's real plugin framework: @deepseek-ai/cordis as DSH
 * installs it (the folder named by DSH_TASK_GANTT_CORDIS; the repository's pytest
 * points it at the cordis inside its cached DSH 0.1.0-rc.8 install). What the fake
 * client context assumes about cordis is checked here against the real thing:
 * a plugin with an empty `inject` activates with no service at all, a child fiber
 * (`ctx.inject`) waits for services that come later and stops when they go, and a
 * plugin that requires a missing service stays pending (which DSH's web boot turns
 * into "Failed to load plugins"). Skipped, saying so, without that folder.
 */

const assert = require('node:assert/strict')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { test } = require('node:test')

const { createClientContext, createReact, createWindow, loadClient } = require('../testing/fake-browser.js')

const CORDIS = process.env.DSH_TASK_GANTT_CORDIS || ''
const SKIP = CORDIS === '' ? 'DSH_TASK_GANTT_CORDIS names no @deepseek-ai/cordis folder (the pytest run installs DSH and sets it)' : false
/** cordis's FiberState: PENDING 0, LOADING 1, ACTIVE 2. */
const PENDING = 0
const ACTIVE = 2

const turn = () => new Promise((resolve) => setTimeout(resolve, 10))

async function start() {
  const { Context } = await import(pathToFileURL(path.join(CORDIS, 'lib', 'index.js')).href)
  const root = new Context()
  const win = createWindow()
  const { react } = createReact(win.document)
  const plugin = loadClient(win, react)
  // The fake's own slot registry and tab registry, provided into real cordis when the test says so.
  const parts = createClientContext()
  const provide = async (name, value) => {
    const provider = root.plugin({ name: `provides ${name}`, apply: (ctx) => { ctx.provide(name, value) } })
    await provider
    await turn()
    return async () => {
      await provider.dispose()
      await turn()
    }
  }
  return { root, win, plugin, parts, provide }
}

const offered = (parts) => ({
  tab: parts.tabTypes.size,
  body: parts.seats('sidebar.right.pane.tab').length,
  row: parts.seats('sidebar.panellist').length,
  page: parts.seats('main').length,
})

test('under real cordis the plugin is active with no service at all; one that requires sidebarRightTabs stays pending', { skip: SKIP }, async () => {
  const env = await start()
  const fiber = env.root.plugin(env.plugin)
  await fiber
  assert.equal(fiber.state, ACTIVE, 'what DSH\'s web boot asserts of every plugin')
  const older = env.root.plugin({ name: 'dsh-team-timeline (before)', inject: ['slots', 'sidebarRightTabs'], apply: () => {} })
  await turn()
  assert.equal(older.state, PENDING, 'the shape DSH 0.1.0-rc.8 refused to boot with')
  await turn()
  const said = env.win.logged.filter((line) => line.text.startsWith('[dsh-team-timeline]'))
  assert.equal(said.length, 1)
  assert.match(said[0].text, /no right-sidebar tab API/)
  await fiber.dispose()
})

test('under real cordis each feature starts when its services appear and stops when they go', { skip: SKIP }, async () => {
  const env = await start()
  const fiber = env.root.plugin(env.plugin)
  await fiber
  assert.deepEqual(offered(env.parts), { tab: 0, body: 0, row: 0, page: 0 })

  const dropSlots = await env.provide('slots', env.parts.builtins.slots)
  assert.deepEqual(offered(env.parts), { tab: 0, body: 0, row: 1, page: 1 }, 'slots: the row and its page')
  const dropTabs = await env.provide('sidebarRightTabs', env.parts.builtins.sidebarRightTabs)
  assert.deepEqual(offered(env.parts), { tab: 1, body: 1, row: 1, page: 1 }, 'the tab API: the tab type and its body')
  const type = env.parts.tabTypes.get(env.plugin.TAB_ID)
  assert.equal(type.title(), 'Team timeline')

  const listeners = new Set()
  const dropLocale = await env.provide('locale', {
    getLocale: () => ({ active: 'zh' }),
    subscribe: (fn) => {
      listeners.add(fn)
      return () => listeners.delete(fn)
    },
  })
  assert.equal(type.title(), '团队时间线', 'a locale that arrives later is followed')
  assert.equal(listeners.size, 1)
  await dropLocale()
  assert.equal(listeners.size, 0, 'and left when it goes')
  assert.equal(type.title(), 'Team timeline')

  await dropTabs()
  assert.deepEqual(offered(env.parts), { tab: 0, body: 0, row: 1, page: 1 }, 'the tab goes with its API')
  const dropTabsAgain = await env.provide('sidebarRightTabs', env.parts.builtins.sidebarRightTabs)
  assert.deepEqual(offered(env.parts), { tab: 1, body: 1, row: 1, page: 1 }, 'and comes back once, without a duplicate')
  await dropSlots()
  assert.deepEqual(offered(env.parts), { tab: 0, body: 0, row: 0, page: 0 }, 'without slots nothing can be shown')
  await dropTabsAgain()
  assert.equal(fiber.state, ACTIVE, 'the plugin itself never stopped')
  await fiber.dispose()
  assert.equal(env.win.listenerCount('message'), 0)
})
