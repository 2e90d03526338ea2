/**
 * A minimal React and DSH client context, for the tests (over the fake DOM) and for
 * the screenshot page (over a real one). Runs as CommonJS or as a classic script
 * (then it is `window.MiniDsh`).
 */
(function (exports) {
  'use strict'

  /**
   * Function components, rendered into (fake or real) elements: `createElement` builds a tree,
   * `render` calls the components (hooks kept per position), gives every `ref` its
   * element, then runs the effects whose dependencies changed (cleanups first).
   */
  function createReact(document) {
    const same = (a, b) => a !== undefined && b !== undefined && a.length === b.length && a.every((v, i) => Object.is(v, b[i]))
    let current = null
    const react = {
      createElement: (type, props, ...children) => ({ type, props: props || {}, children }),
      useRef(initial) {
        const slot = current.slot()
        if (!slot.ref) slot.ref = { current: initial }
        return slot.ref
      },
      useMemo(compute, deps) {
        const slot = current.slot()
        if (!('value' in slot) || !same(slot.deps, deps)) {
          slot.value = compute()
          slot.deps = deps
        }
        return slot.value
      },
      useEffect(effect, deps) {
        const slot = current.slot()
        if (!slot.effect || !same(slot.deps, deps)) {
          current.pending.push({ slot, effect })
          slot.deps = deps
        }
        slot.effect = true
      },
    }

    /** One mounted component (and the component it renders, if any). */
    function mount(Component, container) {
      const state = { hooks: [], inner: null, innerType: null, element: null }
      function renderWith(props) {
        const pending = []
        let index = 0
        current = { slot: () => (state.hooks[index] ||= {}) && state.hooks[index++], pending }
        const tree = Component(props)
        current = null
        if (tree && typeof tree.type === 'function') {
          if (state.innerType !== tree.type || state.innerKey !== tree.props.key) {
            state.inner?.unmount()
            state.inner = mount(tree.type, container)
            state.innerType = tree.type
            state.innerKey = tree.props.key
          }
          state.inner.update(tree.props)
        } else {
          state.inner?.unmount()
          state.inner = null
          state.innerType = null
          if (state.element) state.element.remove()
          state.element = build(tree)
          if (state.element) container.appendChild(state.element)
        }
        for (const { slot, effect } of pending) {
          if (typeof slot.cleanup === 'function') slot.cleanup()
          slot.cleanup = effect()
        }
      }
      function build(tree) {
        if (tree === null || tree === undefined) return null
        if (typeof tree === 'string') {
          if (typeof document.createTextNode === 'function') return document.createTextNode(tree)
          const text = document.createElement('#text')
          text.textContent = tree
          return text
        }
        if (typeof tree.type === 'function') return build(tree.type({ ...tree.props, children: tree.children })) // a stateless child
        if (tree.type === 'svg' || tree.type === 'rect') return null // icons are not drawn here
        const element = document.createElement(tree.type)
        for (const [name, value] of Object.entries(tree.props)) {
          if (name === 'ref') value.current = element
          else if (name === 'style') Object.assign(element.style, value)
          else element.setAttribute(name, value)
        }
        for (const c of tree.children) {
          const built = build(c)
          if (built) element.appendChild(built)
        }
        return element
      }
      return {
        update: renderWith,
        unmount() {
          state.inner?.unmount()
          for (const slot of state.hooks) if (typeof slot.cleanup === 'function') slot.cleanup()
          if (state.element) state.element.remove()
        },
      }
    }

    return {
      react,
      render(Component, props, container) {
        const root = mount(Component, container)
        root.update(props)
        return root
      },
    }
  }

  /** The seats client.js uses, with their kinds as DSH declares them (the footer since 0.1.0, the rest since 0.1.5). */
  const SEATS = { 'sidebar.right.pane.tab': 'keyed', 'sidebar.panellist': 'list', main: 'keyed', 'sidebar.footer.action': 'list' }
  /** Service names DSH's client knows; reading one off a context that did not inject it throws, as in cordis 4. */
  const KNOWN_SERVICES = ['slots', 'sidebarRightTabs', 'sidebarRight', 'locale', 'uiWorkspace', 'sessions', 'workspaces', 'layout', 'theme', 'loader', 'resources']

  /**
   * DSH's client side as a plugin meets it, reduced to what client.js touches, with
   * cordis 4's rules (read from @deepseek-ai/cordis 4.0.2 and DSH 0.1.0-rc.8's web
   * boot):
   * - `load(plugin)` applies a plugin only when every service in its `inject` is
   *   present; otherwise it throws the web boot's own error ("web boot: 1 entry
   *   did not activate — <name>: pending (waiting for service: …)"), which DSH
   *   shows in place of its whole window;
   * - `ctx.get(name)` reads a service or undefined; `ctx[name]` for a service the
   *   context did not inject throws "cannot get property … without inject";
   * - `ctx.inject(names, callback)` is a child fiber: it runs once all `names`
   *   are present, is unloaded (its effects disposed) when one goes or is
   *   replaced, and runs again when they are all back;
   * - `slots.inject(seat, install)` installs once the seat is declared and
   *   uninstalls when it is withdrawn; `slots.register` into an undeclared seat
   *   throws, as does a second entry under the same key or id;
   * - `sidebarRightTabs.register(type)` throws on a second type with the same id.
   * `services` are present from the start, besides `slots` and `sidebarRightTabs`
   * (unless named in `without`); `seats` are declared from the start (default:
   * all four). `provide`, `remove`, `declare` and `withdraw` change that later.
   */
  function createClientContext(services = {}, options = {}) {
    const without = options.without || []
    const store = new Map()
    const tabTypes = new Map()
    const declared = new Set(options.seats || Object.keys(SEATS))
    const entries = new Map()
    const seatListeners = new Map()
    const fibers = new Set()
    const known = new Set(KNOWN_SERVICES.concat(Object.keys(services)))

    const entriesOf = (name) => entries.get(name) || entries.set(name, []).get(name)
    const listenersOf = (name) => seatListeners.get(name) || seatListeners.set(name, new Set()).get(name)
    const slots = {
      inject(name, install) {
        let active
        const reconcile = () => {
          if (declared.has(name) && active === undefined) {
            const dispose = install()
            active = typeof dispose === 'function' ? dispose : () => {}
          } else if (!declared.has(name) && active !== undefined) {
            const dispose = active
            active = undefined
            dispose()
          }
        }
        listenersOf(name).add(reconcile)
        reconcile()
        return () => {
          listenersOf(name).delete(reconcile)
          if (active !== undefined) {
            const dispose = active
            active = undefined
            dispose()
          }
        }
      },
      register(spec, component) {
        if (!declared.has(spec.name)) throw new Error(`slot "${spec.name}" is not declared (a parent entry's children table must declare it)`)
        const kind = SEATS[spec.name]
        const field = kind === 'list' ? 'id' : 'key'
        if (spec[field] === undefined) throw new Error(`${kind} slot "${spec.name}" requires options.${field}`)
        if (entriesOf(spec.name).some((e) => e.spec[field] === spec[field])) throw new Error(`${kind} slot "${spec.name}" already has an entry for ${field} "${spec[field]}"`)
        const entry = { spec, component }
        entriesOf(spec.name).push(entry)
        return () => {
          const list = entriesOf(spec.name)
          if (list.includes(entry)) list.splice(list.indexOf(entry), 1)
        }
      },
    }
    const sidebarRightTabs = {
      register(definition) {
        if (tabTypes.has(definition.id)) throw new Error(`tab type id "${definition.id}" is already registered`)
        tabTypes.set(definition.id, definition)
        return () => tabTypes.delete(definition.id)
      },
    }
    if (!without.includes('slots')) store.set('slots', slots)
    if (!without.includes('sidebarRightTabs')) store.set('sidebarRightTabs', sidebarRightTabs)
    for (const [name, value] of Object.entries(services)) store.set(name, value)

    /** One fiber: a context whose injected services are `names`, effects, children. */
    function createFiber(names, callback, parent) {
      const fiber = { names, callback, parent, effects: [], children: new Set(), state: 'pending', bound: null }
      fiber.ctx = new Proxy({}, {
        get(target, prop) {
          if (prop === 'get') return (name) => store.get(name)
          if (prop === 'effect') return (execute) => {
            const dispose = execute()
            if (typeof dispose !== 'function') return () => {}
            let done = false
            const once = () => {
              if (done) return
              done = true
              fiber.effects.splice(fiber.effects.indexOf(once), 1)
              dispose()
            }
            fiber.effects.push(once)
            return once
          }
          if (prop === 'inject') return (childNames, childCallback) => {
            const child = createFiber([...childNames], childCallback, fiber)
            fiber.children.add(child)
            reconcile(child)
            return child
          }
          if (typeof prop === 'string' && names.includes(prop)) return store.get(prop)
          if (typeof prop === 'string' && known.has(prop)) throw new Error(`cannot get property "${prop}" without inject`)
          return undefined
        },
      })
      fibers.add(fiber)
      return fiber
    }
    function unload(fiber) {
      for (const child of [...fiber.children]) dispose(child)
      while (fiber.effects.length > 0) fiber.effects[fiber.effects.length - 1]()
      fiber.state = 'pending'
      fiber.bound = null
    }
    function dispose(fiber) {
      unload(fiber)
      fiber.state = 'disposed'
      fibers.delete(fiber)
      if (fiber.parent) fiber.parent.children.delete(fiber)
    }
    function reconcile(fiber) {
      if (fiber.state === 'disposed') return
      const ready = fiber.names.every((name) => store.get(name) !== undefined)
      const same = ready && fiber.bound !== null && fiber.names.every((name, i) => store.get(name) === fiber.bound[i])
      if (fiber.state === 'active' && same) return
      if (fiber.state === 'active') unload(fiber)
      if (!ready) return
      fiber.state = 'active'
      fiber.bound = fiber.names.map((name) => store.get(name))
      fiber.callback(fiber.ctx)
    }
    const reconcileAll = () => {
      for (const fiber of [...fibers]) if (fiber.parent === null || fiber.parent.state === 'active') reconcile(fiber)
    }
    const notifySeat = (name) => {
      for (const listener of [...listenersOf(name)]) listener()
    }

    let root = null
    const dsh = {
      /** Start `plugin` as DSH's web boot does; returns its context. */
      load(plugin) {
        const names = Array.isArray(plugin.inject) ? [...plugin.inject] : Object.keys(plugin.inject || {})
        const missing = names.filter((name) => store.get(name) === undefined)
        if (missing.length > 0) {
          throw new Error(`web boot: 1 entry did not activate\n${plugin.name}: pending (waiting for service${missing.length === 1 ? '' : 's'}: ${missing.join(', ')})`)
        }
        root = createFiber(names, (ctx) => plugin.apply(ctx), null)
        reconcile(root)
        return root.ctx
      },
      provide(name, value) {
        known.add(name)
        store.set(name, value)
        reconcileAll()
      },
      remove(name) {
        store.delete(name)
        reconcileAll()
      },
      declare(name) {
        declared.add(name)
        notifySeat(name)
      },
      withdraw(name) {
        declared.delete(name)
        entries.delete(name)
        notifySeat(name)
      },
      /** Child fibers still waiting, as lists of the services they wait for. */
      pending: () => [...fibers].filter((f) => f.parent !== null && f.state === 'pending').map((f) => f.names.filter((n) => store.get(n) === undefined)),
      /** This fake's own `slots` and `sidebarRightTabs`, to provide later when left out at first. */
      builtins: { slots, sidebarRightTabs },
      tabTypes,
      seats: (name) => [...entriesOf(name)],
      dispose() {
        if (root !== null) dispose(root)
        root = null
      },
    }
    return dsh
  }

  exports.createReact = createReact
  exports.createClientContext = createClientContext
})(typeof module !== 'undefined' ? module.exports : (window.MiniDsh = {}))
