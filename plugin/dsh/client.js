/**
 * dsh-team-timeline — the browser half, in DSH's client-bundle format (a classic
 * script that registers a factory with `window.__ModuleLoader__.load`; the id is
 * the package name; `require('react')` comes from DSH's own module table).
 * Hand-written: no build step.
 *
 * What it adds:
 * - a right-sidebar tab type "Team timeline" (`ctx.sidebarRightTabs.register`) whose
 *   body, in the keyed slot `sidebar.right.pane.tab` under the type's id, is the panel
 *   of the session the tab is shown for, in a same-origin iframe (the iframe carries
 *   DSH's session cookie, so the host half's guard lets it through);
 * - a left-sidebar row (`sidebar.panellist`) and its page (`main`, keyed by the row's
 *   id): the start page listing every team;
 * - the frames follow DSH's theme (the `data-ds-dark-theme` attribute DSH's theme
 *   writes on <body>) and language (`ctx.locale.getLocale().active`): both go into
 *   the frame's URL and, on every change, into a postMessage to the frame;
 * - a frame may ask to open a member's conversation: a message from one of OUR
 *   frames (source and origin checked) with a valid session id goes to
 *   `ctx.uiWorkspace.openSession`. Anything else is ignored.
 *
 * Where the sources found are silent: whether `slots.inject` may be called before
 * the sidebar declares its seats (the official examples do, inside `ctx.effect`),
 * and whether `uiWorkspace` and `locale` exist on every DSH build, so both are
 * looked up when needed and their absence only turns the feature off.
 */
window.__ModuleLoader__.load({
  id: 'dsh-team-timeline',
  factory: (require) => {
    const module = { exports: {} }
    const React = require('react')
    const h = React.createElement

    const PREFIX = '/plugins/dsh-task-gantt'
    const TAB_ID = 'dsh-team-timeline/panel'
    const TAB_KIND = 'dsh-team-timeline'
    const PAGE_ID = 'dsh-team-timeline/teams'
    /** Host → frame: `{type, theme, lang}`. Frame → host: `{type, sessionId}`. */
    const HOST_STATE = 'dsh-task-gantt:host'
    const OPEN_SESSION = 'dsh-task-gantt:open-session'
    const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/
    const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/

    const TEXT = {
      en: {
        title: 'Team timeline',
        guide: "The team's turns, tasks and messages on one time axis",
        teams: 'Agent teams',
        noSession: 'No conversation is open here, so there is no team to show.',
        frame: 'Team timeline of session',
        teamsFrame: 'Agent teams',
      },
      zh: {
        title: '团队时间线',
        guide: '团队的轮次、任务与消息，在同一条时间轴上',
        teams: '智能体团队',
        noSession: '这里没有打开的会话，因此没有可显示的团队。',
        frame: '会话的团队时间线',
        teamsFrame: '智能体团队',
      },
    }

    /** A service on the client context, or undefined when this DSH build has none. */
    function optional(ctx, name) {
      try {
        return typeof ctx.get === 'function' ? ctx.get(name) : ctx[name]
      } catch {
        return undefined
      }
    }

    function languageOf(ctx, doc) {
      const locale = optional(ctx, 'locale')
      try {
        const snapshot = locale && typeof locale.getLocale === 'function' ? locale.getLocale() : undefined
        const active = snapshot && (snapshot.active || snapshot.id)
        if (typeof active === 'string' && LANGUAGE.test(active)) return active
      } catch {
        // Fall back to the page's own language.
      }
      const lang = doc.documentElement && doc.documentElement.lang
      return typeof lang === 'string' && LANGUAGE.test(lang) ? lang : 'en'
    }

    function themeOf(doc) {
      return doc.body && doc.body.hasAttribute('data-ds-dark-theme') ? 'dark' : 'light'
    }

    /**
     * DSH's theme and language now, and a way to hear when either changes.
     * @returns {{get(): {theme: string, lang: string}, subscribe(fn): () => void, dispose(): void}}
     */
    function watchHost(ctx, win) {
      const doc = win.document
      const listeners = new Set()
      let state = { theme: themeOf(doc), lang: languageOf(ctx, doc) }
      const refresh = () => {
        const next = { theme: themeOf(doc), lang: languageOf(ctx, doc) }
        if (next.theme === state.theme && next.lang === state.lang) return
        state = next
        for (const listener of listeners) listener(state)
      }
      const observer = new win.MutationObserver(refresh)
      if (doc.body) observer.observe(doc.body, { attributes: true, attributeFilter: ['data-ds-dark-theme'] })
      const locale = optional(ctx, 'locale')
      let unsubscribe = () => {}
      if (locale && typeof locale.subscribe === 'function') {
        const off = locale.subscribe(refresh)
        if (typeof off === 'function') unsubscribe = off
      }
      return {
        get: () => state,
        subscribe(listener) {
          listeners.add(listener)
          return () => listeners.delete(listener)
        },
        dispose() {
          observer.disconnect()
          unsubscribe()
          listeners.clear()
        },
      }
    }

    function text(host, key) {
      const lang = host.get().lang.slice(0, 2).toLowerCase()
      return (TEXT[lang] || TEXT.en)[key]
    }

    /**
     * The frames this plugin shows, and the one listener that takes their requests.
     * A message counts only when its source is one of these frames' windows and its
     * origin is this page's: another window (or a frame of another plugin) cannot
     * make DSH switch conversations.
     */
    function createFrames(ctx, win, host) {
      const frames = new Set()
      const onMessage = (event) => {
        if (event.origin !== win.location.origin) return
        let mine = false
        for (const frame of frames) if (frame.contentWindow !== null && frame.contentWindow === event.source) mine = true
        if (!mine) return
        const data = event.data
        if (!data || data.type !== OPEN_SESSION || typeof data.sessionId !== 'string' || !SESSION_ID.test(data.sessionId)) return
        const workspace = optional(ctx, 'uiWorkspace')
        if (!workspace || typeof workspace.openSession !== 'function') return
        Promise.resolve()
          .then(() => workspace.openSession(data.sessionId))
          .catch((error) => win.console.warn('[dsh-team-timeline] could not open the conversation:', error))
      }
      win.addEventListener('message', onMessage)

      /** Put an iframe of `path` into `container`; returns the function that takes it out. */
      function mount(container, path, title) {
        const doc = win.document
        const frame = doc.createElement('iframe')
        const { theme, lang } = host.get()
        const url = new win.URL(path, win.location.origin)
        url.searchParams.set('theme', theme)
        url.searchParams.set('lang', lang)
        frame.setAttribute('src', url.pathname + url.search)
        frame.setAttribute('title', title)
        frame.style.border = '0'
        frame.style.display = 'block'
        frame.style.width = '100%'
        frame.style.height = '100%'
        frame.style.colorScheme = theme
        const push = (state) => {
          frame.style.colorScheme = state.theme
          if (frame.contentWindow) frame.contentWindow.postMessage({ type: HOST_STATE, theme: state.theme, lang: state.lang }, win.location.origin)
        }
        // A frame that loads (or reloads) after a change hears the current state at once.
        const onLoad = () => push(host.get())
        frame.addEventListener('load', onLoad)
        const stop = host.subscribe(push)
        container.appendChild(frame)
        frames.add(frame)
        return () => {
          stop()
          frame.removeEventListener('load', onLoad)
          frames.delete(frame)
          frame.remove()
        }
      }

      return {
        mount,
        dispose() {
          win.removeEventListener('message', onMessage)
          frames.clear()
        },
      }
    }

    /** A React component whose only child is one of our frames (kept while `path` stays). */
    function framed(frames, path, title) {
      return function FrameHost() {
        const ref = React.useRef(null)
        React.useEffect(() => {
          if (!ref.current) return undefined
          return frames.mount(ref.current, path, title)
        }, [path, title])
        return h('div', { ref, style: { width: '100%', height: '100%', minHeight: 0, overflow: 'hidden' } })
      }
    }

    function panelPath(sessionId) {
      return `${PREFIX}/panel?session=${encodeURIComponent(sessionId)}`
    }

    function TeamsIcon() {
      return h('svg', { viewBox: '0 0 24 24', width: 16, height: 16, fill: 'currentColor', 'aria-hidden': 'true' },
        h('rect', { x: 2, y: 4, width: 11, height: 4, rx: 1.5 }),
        h('rect', { x: 7, y: 10, width: 13, height: 4, rx: 1.5 }),
        h('rect', { x: 4, y: 16, width: 8, height: 4, rx: 1.5 }))
    }

    function apply(ctx) {
      const win = window
      const host = watchHost(ctx, win)
      const frames = createFrames(ctx, win, host)
      ctx.effect(() => () => {
        frames.dispose()
        host.dispose()
      }, 'dsh-team-timeline: theme, language and frame messages')

      const tabType = {
        id: TAB_ID,
        kind: TAB_KIND,
        title: () => text(host, 'title'),
        guide: [{ id: 'dsh-team-timeline', order: 300, title: () => text(host, 'title'), description: () => text(host, 'guide') }],
      }
      ctx.effect(() => ctx.sidebarRightTabs.register(tabType), 'dsh-team-timeline: tab type')

      function TeamTimeline(props) {
        const sessionId = props && typeof props.sessionId === 'string' ? props.sessionId : ''
        const Frame = React.useMemo(
          () => (SESSION_ID.test(sessionId) ? framed(frames, panelPath(sessionId), `${text(host, 'frame')} ${sessionId}`) : null),
          [sessionId],
        )
        if (Frame === null) return h('div', { style: { padding: '16px', opacity: 0.7 } }, text(host, 'noSession'))
        return h(Frame, { key: sessionId })
      }
      ctx.effect(() => ctx.slots.inject('sidebar.right.pane.tab', () => ctx.slots.register({
        name: 'sidebar.right.pane.tab',
        key: TAB_ID,
        inject: (sessionId) => ({ sessionId: typeof sessionId === 'string' ? sessionId : '' }),
      }, TeamTimeline)), 'dsh-team-timeline: tab body')

      const TeamsPage = framed(frames, `${PREFIX}/`, text(host, 'teamsFrame'))
      ctx.effect(() => ctx.slots.inject('sidebar.panellist', () => ctx.slots.register({
        name: 'sidebar.panellist',
        id: PAGE_ID,
        order: 520,
        label: () => text(host, 'teams'),
      }, TeamsIcon)), 'dsh-team-timeline: teams row')
      ctx.effect(() => ctx.slots.inject('main', () => ctx.slots.register({
        name: 'main',
        key: PAGE_ID,
      }, TeamsPage)), 'dsh-team-timeline: teams page')
    }

    module.exports = { name: 'dsh-team-timeline', inject: ['slots', 'sidebarRightTabs'], apply, TAB_ID, TAB_KIND, PAGE_ID }
    return module.exports
  },
})
