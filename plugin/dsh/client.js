/**
 * dsh-team-timeline — the browser half, in DSH's client-bundle format (a classic
 * script that registers a factory with `window.__ModuleLoader__.load`; the id is
 * the package name; `require('react')` comes from DSH's own module table).
 * Hand-written: no build step.
 *
 * It requires no service (`inject: []`): DSH's web boot refuses to show its
 * window while any plugin waits for a service ("pending (waiting for service:
 * …)"), so each feature below waits in its own child fiber (`ctx.inject`) and
 * only the feature is missing where its service is:
 * - with `sidebarRightTabs` (DSH 0.1.5 on) and the `sidebar.right.pane.tab` seat:
 *   a right-sidebar tab type "Team timeline" whose body, keyed by the type's id,
 *   is the panel of the tab's session in a same-origin iframe (the iframe carries
 *   DSH's session cookie, so the host half's guard lets it through);
 * - with the `sidebar.panellist` and `main` seats (DSH 0.1.5 on): a left-sidebar
 *   row "Agent teams" and its page, the start page listing every team;
 * - without those two seats (DSH 0.1.0/0.1.1), where the sidebar's footer seat
 *   `sidebar.footer.action` exists: an "Agent teams" link there, opening the start
 *   page in a new browser tab;
 * - one console line says what this DSH lacks and what is offered instead;
 * - the frames follow DSH's theme (the `data-ds-dark-theme` attribute DSH's
 *   theme presenter writes on <body>) and language (`locale.getLocale().active`,
 *   else <html lang>): both go into the frame's URL and, on every change, into a
 *   postMessage to the frame;
 * - a frame may ask to open a member's conversation: a message from one of OUR
 *   frames (source and origin checked) with a valid session id goes to
 *   `uiWorkspace.openSession` (0.1.5) or `sessions.open` (0.1.0). Anything else
 *   is ignored.
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
    const LINK_ID = 'dsh-team-timeline/teams-link'
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
        teamsLink: 'Agent teams (opens the start page in a new tab)',
      },
      zh: {
        title: '团队时间线',
        guide: '团队的轮次、任务与消息，在同一条时间轴上',
        teams: '智能体团队',
        noSession: '这里没有打开的会话，因此没有可显示的团队。',
        frame: '会话的团队时间线',
        teamsFrame: '智能体团队',
        teamsLink: '智能体团队（在新标签页中打开起始页）',
      },
    }

    /**
     * A service on the client context, or undefined when this DSH has none (yet).
     * `ctx.get` is cordis's read "without the inject requirement": reading
     * `ctx[name]` for a service not declared in `inject` throws in cordis 4.
     */
    function optional(ctx, name) {
      try {
        return typeof ctx.get === 'function' ? ctx.get(name) : undefined
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
     * The language is read through `ctx.get('locale')` on every refresh, so a
     * locale service that arrives (or leaves) later is picked up; `listenTo`
     * subscribes to one once it is there.
     * @returns {{get(): {theme: string, lang: string}, refresh(): void, listenTo(locale): () => void, subscribe(fn): () => void, dispose(): void}}
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
      return {
        get: () => state,
        refresh,
        listenTo(locale) {
          refresh()
          const off = locale && typeof locale.subscribe === 'function' ? locale.subscribe(refresh) : undefined
          return () => {
            if (typeof off === 'function') off()
            refresh()
          }
        },
        subscribe(listener) {
          listeners.add(listener)
          return () => listeners.delete(listener)
        },
        dispose() {
          observer.disconnect()
          listeners.clear()
        },
      }
    }

    /**
     * How this DSH opens a conversation: `uiWorkspace.openSession` (0.1.5 on),
     * else `sessions.open` (0.1.0), else nothing.
     */
    function sessionOpener(ctx) {
      const workspace = optional(ctx, 'uiWorkspace')
      if (workspace && typeof workspace.openSession === 'function') return (id) => workspace.openSession(id)
      const sessions = optional(ctx, 'sessions')
      if (sessions && typeof sessions.open === 'function') return (id) => sessions.open(id)
      return null
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
        const open = sessionOpener(ctx)
        if (open === null) return
        Promise.resolve()
          .then(() => open(data.sessionId))
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

    function TeamsIcon(props) {
      const size = props && typeof props.size === 'number' ? props.size : 16
      return h('svg', { viewBox: '0 0 24 24', width: size, height: size, fill: 'currentColor', 'aria-hidden': 'true' },
        h('rect', { x: 2, y: 4, width: 11, height: 4, rx: 1.5 }),
        h('rect', { x: 7, y: 10, width: 13, height: 4, rx: 1.5 }),
        h('rect', { x: 4, y: 16, width: 8, height: 4, rx: 1.5 }))
    }

    /**
     * The start page from the foot of the left sidebar, for a DSH whose sidebar has
     * no panel rows (0.1.0, 0.1.1): a plain link into a new browser tab on DSH's own
     * origin. Where the row and its page are offered it draws nothing.
     */
    function teamsLink(host, offered) {
      const startPage = (state) => `${PREFIX}/?theme=${encodeURIComponent(state.theme)}&lang=${encodeURIComponent(state.lang)}`
      return function TeamsLink(props) {
        const ref = React.useRef(null)
        // The link follows DSH's theme and language without a render of its own.
        React.useEffect(() => {
          const follow = (state) => {
            if (ref.current) ref.current.setAttribute('href', startPage(state))
          }
          follow(host.get())
          return host.subscribe(follow)
        }, [])
        if (offered.row && offered.page) return null
        const wide = !props || props.wide !== false
        const label = text(host, 'teamsLink')
        return h('a', {
          ref,
          href: startPage(host.get()),
          target: '_blank',
          rel: 'noopener',
          title: label,
          'aria-label': label,
          'data-dsh-team-timeline': 'teams-link',
          style: {
            display: 'flex', alignItems: 'center', gap: '8px', boxSizing: 'border-box',
            width: wide ? '100%' : '36px', height: '36px', padding: wide ? '0 8px' : '0',
            justifyContent: wide ? 'flex-start' : 'center', borderRadius: '10px',
            color: 'var(--dsw-alias-label-primary, inherit)', textDecoration: 'none', fontSize: '14px',
          },
        }, h(TeamsIcon, { size: 16 }), wide ? text(host, 'teams') : null)
      }
    }

    /**
     * Once DSH's plugins have all started (its loader's `await()`, where there is
     * one), then one more turn: what is not offered by then is worth a word.
     */
    function whenSettled(ctx, win) {
      const loader = optional(ctx, 'loader')
      const started = loader && typeof loader.await === 'function'
        ? Promise.resolve().then(() => loader.await()).catch(() => undefined)
        : Promise.resolve()
      return started.then(() => new Promise((resolve) => win.setTimeout(resolve, 0)))
    }

    /** The one console line saying what this DSH lacks and what is offered instead. */
    function notice(offered, ctx) {
      const lines = []
      if (!offered.tab) {
        const seats = [offered.row ? null : '"sidebar.panellist"', offered.page ? null : '"main"'].filter(Boolean).join(' and ')
        let instead = 'Offered instead: the "Agent teams" row in the left sidebar and its page (the start page).'
        if (!(offered.row && offered.page)) {
          instead = offered.link
            ? `Its layout has no ${seats} seat either, so an "Agent teams" link at the foot of the left sidebar opens the start page (${PREFIX}/) in a new tab instead.`
            : `Its layout has no ${seats} seat either, and no "sidebar.footer.action" seat, so nothing is added to the window; the start page is at ${PREFIX}/.`
        }
        lines.push(`This DSH has no right-sidebar tab API (service "sidebarRightTabs", DSH 0.1.5 and later): the Team timeline tab is not offered. ${instead}`)
      }
      if (optional(ctx, 'locale') === undefined) lines.push('No "locale" service: the frames follow the page\'s <html lang> instead.')
      if (sessionOpener(ctx) === null) lines.push('No "uiWorkspace" or "sessions" service: a click on a member cannot open that conversation.')
      return lines.length === 0 ? null : `[dsh-team-timeline] ${lines.join(' ')}`
    }

    /**
     * Run `callback` with a context that has `names` while they are all present:
     * cordis's `ctx.inject` (a child fiber: pending until every service is there,
     * restarted when one is replaced, unloaded when one goes). A context without
     * `inject` gets one try with what is there now.
     */
    function whenPresent(ctx, names, callback) {
      if (typeof ctx.inject === 'function') return ctx.inject(names, callback)
      if (names.every((name) => optional(ctx, name) !== undefined)) {
        callback(new Proxy(ctx, { get: (target, key) => (names.includes(key) ? optional(target, key) : target[key]) }))
      }
      return undefined
    }

    /**
     * Never block the host: this plugin requires no service (`inject` is empty),
     * so DSH's boot never waits for it. Each feature waits, in its own child fiber
     * (`ctx.inject(names, callback)`), for the services it uses; a feature whose
     * service this DSH lacks stays pending without holding anything up, starts if
     * the service appears later, and stops if it goes. The slot seats are waited
     * for the same way (`slots.inject` runs once the seat is declared).
     */
    function apply(ctx) {
      const win = window
      const host = watchHost(ctx, win)
      const frames = createFrames(ctx, win, host)
      const offered = { tab: false, row: false, page: false, link: false }
      let disposed = false
      ctx.effect(() => () => {
        disposed = true
        frames.dispose()
        host.dispose()
      }, 'dsh-team-timeline: theme, language and frame messages')

      whenPresent(ctx, ['locale'], (inner) => {
        inner.effect(() => host.listenTo(inner.locale), 'dsh-team-timeline: language')
      })

      /** Mark a feature offered while `install` holds; returns its disposer. */
      const holding = (feature, install) => () => {
        const dispose = install()
        offered[feature] = true
        return () => {
          offered[feature] = false
          if (typeof dispose === 'function') dispose()
        }
      }

      const tabType = {
        id: TAB_ID,
        kind: TAB_KIND,
        title: () => text(host, 'title'),
        guide: [{ id: 'dsh-team-timeline', order: 300, title: () => text(host, 'title'), description: () => text(host, 'guide') }],
      }
      function TeamTimeline(props) {
        const sessionId = props && typeof props.sessionId === 'string' ? props.sessionId : ''
        const Frame = React.useMemo(
          () => (SESSION_ID.test(sessionId) ? framed(frames, panelPath(sessionId), `${text(host, 'frame')} ${sessionId}`) : null),
          [sessionId],
        )
        if (Frame === null) return h('div', { style: { padding: '16px', opacity: 0.7 } }, text(host, 'noSession'))
        return h(Frame, { key: sessionId })
      }
      whenPresent(ctx, ['slots', 'sidebarRightTabs'], (inner) => {
        inner.effect(() => inner.slots.inject('sidebar.right.pane.tab', holding('tab', () => {
          const stopType = inner.sidebarRightTabs.register(tabType)
          const stopBody = inner.slots.register({
            name: 'sidebar.right.pane.tab',
            key: TAB_ID,
            // A session-scoped seat: DSH passes the session id to `inject` (and as the `sessionId` prop).
            inject: (sessionId) => ({ sessionId: typeof sessionId === 'string' ? sessionId : '' }),
          }, TeamTimeline)
          return () => {
            stopBody()
            if (typeof stopType === 'function') stopType()
          }
        })), 'dsh-team-timeline: tab type and body')
      })

      const TeamsPage = framed(frames, `${PREFIX}/`, text(host, 'teamsFrame'))
      whenPresent(ctx, ['slots'], (inner) => {
        inner.effect(() => inner.slots.inject('sidebar.panellist', holding('row', () => inner.slots.register({
          name: 'sidebar.panellist',
          id: PAGE_ID,
          order: 520,
          label: () => text(host, 'teams'),
        }, TeamsIcon))), 'dsh-team-timeline: teams row')
        inner.effect(() => inner.slots.inject('main', holding('page', () => inner.slots.register({
          name: 'main',
          key: PAGE_ID,
        }, TeamsPage))), 'dsh-team-timeline: teams page')
        inner.effect(() => inner.slots.inject('sidebar.footer.action', holding('link', () => inner.slots.register({
          name: 'sidebar.footer.action',
          id: LINK_ID,
        }, teamsLink(host, offered)))), 'dsh-team-timeline: teams link')
      })

      whenSettled(ctx, win).then(() => {
        if (disposed) return
        const line = notice(offered, ctx)
        if (line !== null) win.console.info(line)
      })
    }

    module.exports = { name: 'dsh-team-timeline', inject: [], apply, TAB_ID, TAB_KIND, PAGE_ID, LINK_ID }
    return module.exports
  },
})
