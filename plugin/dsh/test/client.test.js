'use strict'
/** The browser half, run as DSH runs it, against a fake DOM, React and client context. */

const assert = require('node:assert/strict')
const { test } = require('node:test')

const { createClientContext, createReact, createWindow, loadClient } = require('../testing/fake-browser.js')

const ORIGIN = 'http://dsh.test:3080'

function setup({ dark = false, locale = 'en', workspace = true } = {}) {
  const win = createWindow(ORIGIN)
  if (dark) win.document.body.setAttribute('data-ds-dark-theme', '')
  const { react, render } = createReact(win.document)
  const plugin = loadClient(win, react)
  const opened = []
  const localeListeners = new Set()
  let active = locale
  const services = {
    locale: {
      getLocale: () => ({ active }),
      subscribe: (fn) => {
        localeListeners.add(fn)
        return () => localeListeners.delete(fn)
      },
    },
    ...(workspace ? { uiWorkspace: { openSession: async (id) => { opened.push(id) } } } : {}),
  }
  const ctx = createClientContext(services)
  plugin.apply(ctx)
  const setLocale = (next) => {
    active = next
    for (const fn of localeListeners) fn()
  }
  return { win, ctx, plugin, render, opened, setLocale, localeListeners }
}

/** Render the tab body the way the sidebar does: its `inject` gives the props for a session. */
function showTab(env, sessionId) {
  const [seat] = env.ctx.seats('sidebar.right.pane.tab')
  const container = env.win.document.createElement('section')
  const root = env.render(seat.component, seat.spec.inject(sessionId), container)
  return { container, root, frame: () => container.querySelectorAll('iframe')[0] }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

test('the bundle registers under its package name and declares the services it needs', () => {
  const env = setup()
  assert.deepEqual(env.win.registered.map((e) => e.id), ['dsh-team-timeline'])
  assert.equal(env.plugin.name, 'dsh-team-timeline')
  assert.deepEqual([...env.plugin.inject], ['slots', 'sidebarRightTabs'])
})

test('the tab type is registered and its body sits under the same id in the right seat', () => {
  const env = setup()
  const [type] = [...env.ctx.tabTypes.values()]
  assert.equal(type.kind, 'dsh-team-timeline')
  assert.equal(type.title(), 'Team timeline')
  assert.equal(type.guide.length, 1)
  assert.equal(type.guide[0].title(), 'Team timeline')
  const [body] = env.ctx.seats('sidebar.right.pane.tab')
  assert.equal(body.spec.key, type.id, 'a body is found by the type id')
  assert.deepEqual({ ...body.spec.inject('session-42') }, { sessionId: 'session-42' })
  const [row] = env.ctx.seats('sidebar.panellist')
  const [page] = env.ctx.seats('main')
  assert.equal(page.spec.key, row.spec.id, 'the teams row opens its page')
  assert.equal(row.spec.label(), 'Agent teams')

  env.ctx.dispose()
  assert.equal(env.ctx.tabTypes.size, 0)
  for (const seat of ['sidebar.right.pane.tab', 'sidebar.panellist', 'main']) assert.deepEqual(env.ctx.seats(seat), [], seat)
  assert.equal(env.win.listenerCount('message'), 0, 'no listener outlives the plugin')
})

test('the tab body is the panel of the given session in a same-origin iframe', () => {
  const env = setup()
  const tab = showTab(env, 'session-bbea4661-0acc-4317-8d18-889da97edfab')
  const frame = tab.frame()
  assert.ok(frame, 'an iframe is rendered')
  assert.equal(frame.getAttribute('src'), '/plugins/dsh-task-gantt/panel?session=session-bbea4661-0acc-4317-8d18-889da97edfab&theme=light&lang=en')
  assert.match(frame.getAttribute('title'), /session-bbea4661/)

  // Another session in the same seat: a new frame for it, the old one gone.
  tab.root.update(env.ctx.seats('sidebar.right.pane.tab')[0].spec.inject('lead.2'))
  const frames = tab.container.querySelectorAll('iframe')
  assert.equal(frames.length, 1)
  assert.equal(frames[0].getAttribute('src'), '/plugins/dsh-task-gantt/panel?session=lead.2&theme=light&lang=en')
  assert.equal(frame.contentWindow, null, 'the old frame was removed')
  tab.root.unmount()
  assert.equal(tab.container.querySelectorAll('iframe').length, 0)
})

test('no frame for a missing or malformed session id', () => {
  const env = setup()
  for (const bad of ['', '../../api', 'a b', '"><script>', 'x'.repeat(129)]) {
    const tab = showTab(env, bad)
    assert.equal(tab.frame(), undefined, bad)
    assert.equal(tab.container.children.length, 1)
  }
})

test('the frame starts in DSH theme and language and hears every change', async () => {
  const env = setup({ dark: true, locale: 'zh' })
  assert.equal(env.ctx.tabTypes.get(env.plugin.TAB_ID).title(), '团队时间线')
  const tab = showTab(env, 's1')
  const frame = tab.frame()
  assert.equal(frame.getAttribute('src'), '/plugins/dsh-task-gantt/panel?session=s1&theme=dark&lang=zh')

  frame.dispatch('load')
  assert.deepEqual(frame.contentWindow.posted.at(-1), { data: { type: 'dsh-task-gantt:host', theme: 'dark', lang: 'zh' }, targetOrigin: ORIGIN })

  env.win.document.body.removeAttribute('data-ds-dark-theme')
  await tick()
  assert.deepEqual(frame.contentWindow.posted.at(-1), { data: { type: 'dsh-task-gantt:host', theme: 'light', lang: 'zh' }, targetOrigin: ORIGIN })
  assert.equal(frame.style.colorScheme, 'light')

  env.setLocale('en-GB')
  assert.deepEqual(frame.contentWindow.posted.at(-1).data, { type: 'dsh-task-gantt:host', theme: 'light', lang: 'en-GB' })
  const count = frame.contentWindow.posted.length
  env.win.document.body.setAttribute('data-other', '1') // not the theme: nothing to say
  await tick()
  assert.equal(frame.contentWindow.posted.length, count)
  env.ctx.dispose()
  assert.equal(env.localeListeners.size, 0)
})

test('a member click from our frame opens that conversation in DSH', async () => {
  const env = setup()
  const frame = showTab(env, 'lead-1').frame()
  env.win.deliver({ type: 'dsh-task-gantt:open-session', sessionId: 'member-7' }, { source: frame.contentWindow })
  await tick()
  assert.deepEqual(env.opened, ['member-7'])
})

test('a forged postMessage is ignored: other windows, other origins, bad ids, removed frames', async () => {
  const env = setup()
  const tab = showTab(env, 'lead-1')
  const frame = tab.frame()
  const stranger = env.win.document.createElement('iframe') // a frame that is not ours
  const open = (sessionId) => ({ type: 'dsh-task-gantt:open-session', sessionId })
  env.win.deliver(open('member-7'), { source: stranger.contentWindow })
  env.win.deliver(open('member-7'), { source: env.win })
  env.win.deliver(open('member-7'), { source: undefined })
  env.win.deliver(open('member-7'), { source: frame.contentWindow, origin: 'http://evil.example' })
  env.win.deliver(open('member-7'), { source: frame.contentWindow, origin: 'null' })
  for (const bad of ['../x', '', 'a b', 42, null]) env.win.deliver(open(bad), { source: frame.contentWindow })
  env.win.deliver({ type: 'something-else', sessionId: 'member-7' }, { source: frame.contentWindow })
  env.win.deliver('member-7', { source: frame.contentWindow })
  const window = frame.contentWindow
  tab.root.unmount()
  env.win.deliver(open('member-7'), { source: window })
  await tick()
  assert.deepEqual(env.opened, [])
})

test('without uiWorkspace a member click does nothing (and throws nothing)', async () => {
  const env = setup({ workspace: false })
  const frame = showTab(env, 'lead-1').frame()
  env.win.deliver({ type: 'dsh-task-gantt:open-session', sessionId: 'member-7' }, { source: frame.contentWindow })
  await tick()
  assert.deepEqual(env.opened, [])
})

test('the teams page is the start page under the prefix', () => {
  const env = setup()
  const [page] = env.ctx.seats('main')
  const container = env.win.document.createElement('main')
  env.render(page.component, {}, container)
  assert.equal(container.querySelectorAll('iframe')[0].getAttribute('src'), '/plugins/dsh-task-gantt/?theme=light&lang=en')
})
