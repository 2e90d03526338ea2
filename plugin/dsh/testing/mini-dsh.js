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

  /** DSH's client context as client.js uses it; `services` adds or removes optional ones. */
  function createClientContext(services = {}) {
    const disposers = []
    const tabTypes = new Map()
    const slots = new Map()
    const ctx = {
      effect(fn) {
        const dispose = fn()
        if (typeof dispose === 'function') disposers.push(dispose)
      },
      get: (name) => services[name],
      sidebarRightTabs: {
        register(definition) {
          if (tabTypes.has(definition.id)) throw new Error(`tab type ${definition.id} registered twice`)
          tabTypes.set(definition.id, definition)
          return () => tabTypes.delete(definition.id)
        },
      },
      slots: {
        // The seat is declared: install at once and hand back the removal.
        inject(name, install) {
          const dispose = install()
          return () => dispose()
        },
        register(spec, component) {
          const entry = { spec, component }
          if (!slots.has(spec.name)) slots.set(spec.name, new Set())
          slots.get(spec.name).add(entry)
          return () => slots.get(spec.name).delete(entry)
        },
      },
      tabTypes,
      seats: (name) => [...(slots.get(name) || [])],
      dispose() {
        while (disposers.length > 0) disposers.pop()()
      },
    }
    return ctx
  }

  exports.createReact = createReact
  exports.createClientContext = createClientContext
})(typeof module !== 'undefined' ? module.exports : (window.MiniDsh = {}))
