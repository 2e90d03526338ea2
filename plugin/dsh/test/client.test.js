'use strict'
/** The browser half, run as DSH runs it, against a fake DOM, React and client context. */

const assert = require('node:assert/strict')
const { test } = require('node:test')

const { createClientContext, createReact, createWindow, loadClient } = require('../testing/fake-browser.js')

const ORIGIN = 'http://dsh.test:3080'
const TAB_SEAT = 'sidebar.right.pane.tab'
const FOOTER = 'sidebar.footer.action'
/** DSH 0.1.5's seats; 0.1.0-rc.8 and 0.1.1-rc.2 have only the footer. */
const ALL_SEATS = [TAB_SEAT, 'sidebar.panellist', 'main', FOOTER]
const RC8_SEATS = [FOOTER]

/** A locale service like DSH's (`getLocale().active`, `subscribe`), switchable from the test. */
function createLocale(initial) {
  const listeners = new Set()
  let active = initial
  return {
    listeners,
    service: {
      getLocale: () => ({ active }),
      subscribe: (fn) => {
        listeners.add(fn)
        return () => listeners.delete(fn)
      },
    },
    set(next) {
      active = next
      for (const fn of listeners) fn()
    },
  }
}

/**
 * The client half in a fake DSH. By default DSH 0.1.5's shape (slots with all three
 * seats, sidebarRightTabs, locale, uiWorkspace); `without` drops services,
 * `seats` chooses the declared seats, `sessions` adds 0.1.0's session service.
 */
function setup({ dark = false, locale = 'en', htmlLang, without = [], seats = ALL_SEATS, sessions = false, extra = {} } = {}) {
  const win = createWindow(ORIGIN)
  if (htmlLang) win.document.documentElement.lang = htmlLang
  if (dark) win.document.body.setAttribute('data-ds-dark-theme', '')
  const { react, render } = createReact(win.document)
  const plugin = loadClient(win, react)
  const opened = []
  const lang = createLocale(locale)
  const services = { ...extra }
  if (!without.includes('locale')) services.locale = lang.service
  if (!without.includes('uiWorkspace')) services.uiWorkspace = { openSession: async (id) => { opened.push(['uiWorkspace', id]) } }
  if (sessions) services.sessions = { open: (id) => { opened.push(['sessions', id]) } }
  const dsh = createClientContext(services, { without, seats })
  dsh.load(plugin)
  return { win, dsh, plugin, render, opened, lang }
}

/** Render the tab body the way the sidebar does: its `inject` gives the props for a session. */
function showTab(env, sessionId) {
  const [seat] = env.dsh.seats(TAB_SEAT)
  const container = env.win.document.createElement('section')
  const root = env.render(seat.component, seat.spec.inject(sessionId), container)
  return { container, root, frame: () => container.querySelectorAll('iframe')[0] }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))
/** Past the client's "after DSH's plugins started" turn (a loader-less host: one timer). */
const settle = async () => {
  await tick() // the client's own timer is set first (from a microtask)…
  await new Promise((resolve) => setTimeout(resolve, 10)) // …and runs before this one
}
const notices = (env) => env.win.logged.filter((line) => line.text.startsWith('[dsh-team-timeline]'))

/** The footer link as the sidebar draws it: an element, or null where it stands aside. */
function renderLink(env, props = { wide: true }) {
  const [entry] = env.dsh.seats(FOOTER)
  const container = env.win.document.createElement('div')
  env.render(entry.component, props, container)
  return container.children[0] || null
}

function offered(env) {
  return {
    tab: env.dsh.tabTypes.size === 1 && env.dsh.seats(TAB_SEAT).length === 1,
    row: env.dsh.seats('sidebar.panellist').length === 1,
    page: env.dsh.seats('main').length === 1,
    link: env.dsh.seats(FOOTER).length === 1 && renderLink(env) !== null,
  }
}

test('the bundle registers under its package name and requires no service, so DSH never waits for it', () => {
  const env = setup()
  assert.deepEqual(env.win.registered.map((e) => e.id), ['dsh-team-timeline'])
  assert.equal(env.plugin.name, 'dsh-team-timeline')
  assert.deepEqual([...env.plugin.inject], [])
  // The fake boot refuses a plugin that waits for a missing service, as DSH 0.1.0-rc.8 did with
  // the earlier client.js ("dsh-team-timeline: pending (waiting for service: sidebarRightTabs)").
  const older = createClientContext({}, { without: ['sidebarRightTabs'] })
  assert.throws(() => older.load({ name: 'dsh-team-timeline', inject: ['slots', 'sidebarRightTabs'], apply: () => {} }),
    /dsh-team-timeline: pending \(waiting for service: sidebarRightTabs\)/)
})

test('on DSH 0.1.5 (right-sidebar tabs, panel row, main page): tab type, its body, the row and its page', async () => {
  const env = setup()
  const [type] = [...env.dsh.tabTypes.values()]
  assert.equal(type.kind, 'dsh-team-timeline')
  assert.equal(type.title(), 'Team timeline')
  assert.equal(type.guide.length, 1)
  assert.equal(type.guide[0].title(), 'Team timeline')
  const [body] = env.dsh.seats(TAB_SEAT)
  assert.equal(body.spec.key, type.id, 'a body is found by the type id')
  assert.deepEqual({ ...body.spec.inject('session-42') }, { sessionId: 'session-42' })
  const [row] = env.dsh.seats('sidebar.panellist')
  const [page] = env.dsh.seats('main')
  assert.equal(page.spec.key, row.spec.id, 'the teams row opens its page')
  assert.equal(row.spec.label(), 'Agent teams')
  assert.equal(renderLink(env), null, 'where the row is offered the footer link stands aside')
  assert.deepEqual(env.dsh.pending(), [])
  await settle()
  assert.deepEqual(notices(env), [], 'nothing is missing, so nothing is said')

  env.dsh.dispose()
  assert.equal(env.dsh.tabTypes.size, 0)
  for (const seat of ALL_SEATS) assert.deepEqual(env.dsh.seats(seat), [], seat)
  assert.equal(env.win.listenerCount('message'), 0, 'no listener outlives the plugin')
  assert.equal(env.lang.listeners.size, 0, 'no locale subscription outlives the plugin')
})

test('every combination of missing services and seats: DSH boots, each feature is there exactly when its services are', async () => {
  const optional = ['slots', 'sidebarRightTabs', 'locale', 'uiWorkspace']
  const seatSets = [ALL_SEATS, [], [TAB_SEAT], ['sidebar.panellist', 'main'], RC8_SEATS, [TAB_SEAT, FOOTER]]
  let cases = 0
  for (let mask = 0; mask < 1 << optional.length; mask += 1) {
    const without = optional.filter((_, i) => mask & (1 << i))
    for (const seats of seatSets) {
      for (const sessions of [false, true]) {
        const label = `without [${without}] seats [${seats}] sessions ${sessions}`
        const env = setup({ without, seats, sessions })
        const has = (name) => !without.includes(name)
        const want = {
          tab: has('slots') && has('sidebarRightTabs') && seats.includes(TAB_SEAT),
          row: has('slots') && seats.includes('sidebar.panellist'),
          page: has('slots') && seats.includes('main'),
        }
        want.link = has('slots') && seats.includes(FOOTER) && !(want.row && want.page)
        assert.deepEqual(offered(env), want, label)
        await settle()
        const said = notices(env)
        const missing = !want.tab || !has('locale') || (!has('uiWorkspace') && !sessions)
        assert.equal(said.length, missing ? 1 : 0, `${label}: ${JSON.stringify(said)}`)
        if (missing) {
          const [line] = said
          const instead = !want.tab && !(want.row && want.page)
          assert.equal(line.level, 'info', label)
          assert.equal(/sidebarRightTabs/.test(line.text), !want.tab, label)
          assert.equal(/Offered instead: the "Agent teams" row/.test(line.text), !want.tab && want.row && want.page, label)
          assert.equal(/an "Agent teams" link at the foot of the left sidebar/.test(line.text), instead && want.link, label)
          assert.equal(/nothing is added to the window; the start page is at \/plugins\/dsh-task-gantt\//.test(line.text), instead && !want.link, label)
          assert.equal(/No "locale" service/.test(line.text), !has('locale'), label)
          assert.equal(/cannot open that conversation/.test(line.text), !has('uiWorkspace') && !sessions, label)
        }
        env.dsh.dispose()
        cases += 1
      }
    }
  }
  assert.equal(cases, 192)
})

test('DSH 0.1.0-rc.8 as it is (slots with only the footer seat, locale, sessions; no sidebarRightTabs): a footer link, one line, no wait', async () => {
  const env = setup({ without: ['sidebarRightTabs', 'uiWorkspace'], seats: RC8_SEATS, sessions: true })
  assert.deepEqual(offered(env), { tab: false, row: false, page: false, link: true })
  assert.deepEqual(env.dsh.pending(), [['sidebarRightTabs']], 'only the tab waits, in its own fiber')
  await settle()
  await settle()
  const said = notices(env)
  assert.equal(said.length, 1, 'said once, however long the page stays')
  assert.match(said[0].text, /no right-sidebar tab API \(service "sidebarRightTabs", DSH 0\.1\.5 and later\)/)
  assert.match(said[0].text, /no "sidebar\.panellist" and "main" seat either, so an "Agent teams" link/)
})

test('the footer link opens the start page in a new tab, in DSH theme and language, wide or as a rail icon', async () => {
  const env = setup({ without: ['sidebarRightTabs'], seats: RC8_SEATS, dark: true, locale: 'zh' })
  const link = renderLink(env)
  assert.equal(link.tagName, 'A')
  assert.equal(link.getAttribute('href'), '/plugins/dsh-task-gantt/?theme=dark&lang=zh')
  assert.equal(link.getAttribute('target'), '_blank')
  assert.equal(link.getAttribute('rel'), 'noopener')
  assert.equal(link.getAttribute('aria-label'), '智能体团队（在新标签页中打开起始页）')
  assert.equal(link.children.at(-1).textContent, '智能体团队', 'wide: the label beside the icon')
  env.win.document.body.removeAttribute('data-ds-dark-theme')
  await tick()
  assert.equal(link.getAttribute('href'), '/plugins/dsh-task-gantt/?theme=light&lang=zh', 'it follows DSH\'s theme')
  env.lang.set('en')
  assert.equal(link.getAttribute('href'), '/plugins/dsh-task-gantt/?theme=light&lang=en', 'and its language')
  const rail = renderLink(env, { wide: false })
  assert.equal(rail.getAttribute('aria-label'), 'Agent teams (opens the start page in a new tab)')
  assert.equal(rail.children.filter((c) => c.tagName === '#TEXT').length, 0, 'rail: the icon alone')
})

test('the notice waits for DSH\'s loader: a service that arrives while plugins still start is not reported missing', async () => {
  let release
  const started = new Promise((resolve) => { release = resolve })
  const env = setup({ without: ['sidebarRightTabs'], extra: { loader: { await: () => started } } })
  await settle()
  assert.deepEqual(notices(env), [], 'the loader has not settled yet')
  env.dsh.provide('sidebarRightTabs', env.dsh.builtins.sidebarRightTabs)
  release()
  await settle()
  assert.deepEqual(offered(env), { tab: true, row: true, page: true, link: false })
  assert.deepEqual(notices(env), [])
})

test('a service or seat that appears later is used then, and withdrawn cleanly when it goes', async () => {
  const env = setup({ without: ['sidebarRightTabs', 'slots'], seats: [] })
  assert.deepEqual(offered(env), { tab: false, row: false, page: false, link: false })
  await settle()
  assert.equal(notices(env).length, 1)

  const registry = env.dsh.builtins.sidebarRightTabs
  env.dsh.provide('slots', env.dsh.builtins.slots)
  assert.deepEqual(offered(env), { tab: false, row: false, page: false, link: false }, 'slots alone: the seats are not declared yet')
  env.dsh.declare('sidebar.panellist')
  env.dsh.declare('main')
  assert.deepEqual(offered(env), { tab: false, row: true, page: true, link: false })
  env.dsh.declare(TAB_SEAT)
  assert.deepEqual(offered(env), { tab: false, row: true, page: true, link: false }, 'the seat without the tab API')
  env.dsh.provide('sidebarRightTabs', registry)
  assert.deepEqual(offered(env), { tab: true, row: true, page: true, link: false })

  env.dsh.remove('sidebarRightTabs')
  assert.deepEqual(offered(env), { tab: false, row: true, page: true, link: false }, 'the tab goes with its API, its body too')
  env.dsh.provide('sidebarRightTabs', registry)
  assert.deepEqual(offered(env), { tab: true, row: true, page: true, link: false }, 'and comes back without a duplicate registration')
  env.dsh.withdraw('main')
  assert.deepEqual(offered(env), { tab: true, row: true, page: false, link: false })
  env.dsh.declare('main')
  assert.deepEqual(offered(env), { tab: true, row: true, page: true, link: false })
  assert.equal(notices(env).length, 1, 'still one line in all')
})

test('the tab body is the panel of the given session in a same-origin iframe', () => {
  const env = setup()
  const tab = showTab(env, 'session-bbea4661-0acc-4317-8d18-889da97edfab')
  const frame = tab.frame()
  assert.ok(frame, 'an iframe is rendered')
  assert.equal(frame.getAttribute('src'), '/plugins/dsh-task-gantt/panel?session=session-bbea4661-0acc-4317-8d18-889da97edfab&theme=light&lang=en')
  assert.match(frame.getAttribute('title'), /session-bbea4661/)

  // Another session in the same seat: a new frame for it, the old one gone.
  tab.root.update(env.dsh.seats(TAB_SEAT)[0].spec.inject('lead.2'))
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
  assert.equal(env.dsh.tabTypes.get(env.plugin.TAB_ID).title(), '团队时间线')
  const tab = showTab(env, 's1')
  const frame = tab.frame()
  assert.equal(frame.getAttribute('src'), '/plugins/dsh-task-gantt/panel?session=s1&theme=dark&lang=zh')

  frame.dispatch('load')
  assert.deepEqual(frame.contentWindow.posted.at(-1), { data: { type: 'dsh-task-gantt:host', theme: 'dark', lang: 'zh' }, targetOrigin: ORIGIN })

  env.win.document.body.removeAttribute('data-ds-dark-theme')
  await tick()
  assert.deepEqual(frame.contentWindow.posted.at(-1), { data: { type: 'dsh-task-gantt:host', theme: 'light', lang: 'zh' }, targetOrigin: ORIGIN })
  assert.equal(frame.style.colorScheme, 'light')

  env.lang.set('en-GB')
  assert.deepEqual(frame.contentWindow.posted.at(-1).data, { type: 'dsh-task-gantt:host', theme: 'light', lang: 'en-GB' })
  const count = frame.contentWindow.posted.length
  env.win.document.body.setAttribute('data-other', '1') // not the theme: nothing to say
  await tick()
  assert.equal(frame.contentWindow.posted.length, count)
  env.dsh.dispose()
  assert.equal(env.lang.listeners.size, 0)
})

test('without a locale service the language is the page\'s; a locale that arrives later takes over, and leaves cleanly', () => {
  const env = setup({ without: ['locale'], htmlLang: 'de' })
  const tab = showTab(env, 's1')
  assert.equal(tab.frame().getAttribute('src'), '/plugins/dsh-task-gantt/panel?session=s1&theme=light&lang=de')
  const frame = tab.frame()

  const later = createLocale('zh')
  env.dsh.provide('locale', later.service)
  assert.deepEqual(frame.contentWindow.posted.at(-1).data, { type: 'dsh-task-gantt:host', theme: 'light', lang: 'zh' })
  later.set('en')
  assert.equal(frame.contentWindow.posted.at(-1).data.lang, 'en')
  env.dsh.remove('locale')
  assert.equal(later.listeners.size, 0, 'unsubscribed when the service went')
  assert.equal(frame.contentWindow.posted.at(-1).data.lang, 'de', 'back to the page language')
})

test('a member click from our frame opens that conversation in DSH', async () => {
  const env = setup()
  const frame = showTab(env, 'lead-1').frame()
  env.win.deliver({ type: 'dsh-task-gantt:open-session', sessionId: 'member-7' }, { source: frame.contentWindow })
  await tick()
  assert.deepEqual(env.opened, [['uiWorkspace', 'member-7']])
})

test('a member click on a DSH with only the sessions service (0.1.0) opens it there', async () => {
  const env = setup({ without: ['uiWorkspace'], sessions: true })
  const frame = showTab(env, 'lead-1').frame()
  env.win.deliver({ type: 'dsh-task-gantt:open-session', sessionId: 'member-7' }, { source: frame.contentWindow })
  await tick()
  assert.deepEqual(env.opened, [['sessions', 'member-7']])
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

test('without uiWorkspace or sessions a member click does nothing (and throws nothing)', async () => {
  const env = setup({ without: ['uiWorkspace'] })
  const frame = showTab(env, 'lead-1').frame()
  env.win.deliver({ type: 'dsh-task-gantt:open-session', sessionId: 'member-7' }, { source: frame.contentWindow })
  await tick()
  assert.deepEqual(env.opened, [])
})

test('the teams page is the start page under the prefix', () => {
  const env = setup()
  const [page] = env.dsh.seats('main')
  const container = env.win.document.createElement('main')
  env.render(page.component, {}, container)
  assert.equal(container.querySelectorAll('iframe')[0].getAttribute('src'), '/plugins/dsh-task-gantt/?theme=light&lang=en')
})
