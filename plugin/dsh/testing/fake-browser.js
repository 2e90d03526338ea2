'use strict'
/**
 * Just enough of a browser, of React and of DSH's client context to run client.js:
 * elements with attributes, styles, children and listeners; iframes whose
 * `contentWindow` records what was posted to it (and is null once removed, as in
 * a browser); a MutationObserver that reports attribute changes after the current
 * task; a window with `message` listeners; function components with useRef,
 * useMemo and useEffect; slots and a sidebar tab registry that keep what was
 * registered until its disposer runs.
 */

const fs = require('node:fs')
const path = require('node:path')

const CLIENT = path.resolve(__dirname, '..', 'client.js')

class FakeElement {
  constructor(document, tagName) {
    this.ownerDocument = document
    this.tagName = tagName.toUpperCase()
    this.attributes = new Map()
    this.style = {}
    this.children = []
    this.parentNode = null
    this.listeners = new Map()
    this.contentWindow = this.tagName === 'IFRAME' ? new FakeFrameWindow() : undefined
  }

  setAttribute(name, value) {
    const old = this.attributes.get(name)
    this.attributes.set(name, String(value))
    this.ownerDocument.changed(this, name, old)
  }

  getAttribute(name) {
    return this.attributes.has(name) ? this.attributes.get(name) : null
  }

  hasAttribute(name) {
    return this.attributes.has(name)
  }

  removeAttribute(name) {
    const old = this.attributes.get(name)
    this.attributes.delete(name)
    this.ownerDocument.changed(this, name, old)
  }

  appendChild(child) {
    child.parentNode = this
    this.children.push(child)
    return child
  }

  remove() {
    if (this.parentNode) this.parentNode.children.splice(this.parentNode.children.indexOf(this), 1)
    this.parentNode = null
    if (this.tagName === 'IFRAME') this.contentWindow = null
  }

  addEventListener(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set())
    this.listeners.get(type).add(listener)
  }

  removeEventListener(type, listener) {
    this.listeners.get(type)?.delete(listener)
  }

  dispatch(type, event = {}) {
    for (const listener of [...(this.listeners.get(type) || [])]) listener({ type, target: this, ...event })
  }

  querySelectorAll(tagName) {
    const found = []
    const walk = (node) => {
      for (const c of node.children) {
        if (c.tagName === tagName.toUpperCase()) found.push(c)
        walk(c)
      }
    }
    walk(this)
    return found
  }
}

class FakeFrameWindow {
  constructor() {
    this.posted = []
  }

  postMessage(data, targetOrigin) {
    this.posted.push({ data: JSON.parse(JSON.stringify(data)), targetOrigin })
  }
}

class FakeDocument {
  constructor() {
    this.observers = new Set()
    this.documentElement = new FakeElement(this, 'html')
    this.body = this.documentElement.appendChild(new FakeElement(this, 'body'))
  }

  createElement(tagName) {
    return new FakeElement(this, tagName)
  }

  changed(target, attributeName, oldValue) {
    for (const observer of this.observers) observer.notice(target, attributeName, oldValue)
  }
}

function createWindow(origin = 'http://dsh.test:3080') {
  const document = new FakeDocument()
  const listeners = new Map()
  const registered = []
  const win = {
    document,
    location: { origin, href: `${origin}/` },
    URL,
    console: { warn: () => {}, log: () => {}, error: () => {} },
    registered,
    __ModuleLoader__: { load: (entry) => registered.push(entry) },
    addEventListener(type, listener) {
      if (!listeners.has(type)) listeners.set(type, new Set())
      listeners.get(type).add(listener)
    },
    removeEventListener(type, listener) {
      listeners.get(type)?.delete(listener)
    },
    /** What a browser does for `postMessage`: a `message` event with the sender's window and origin. */
    deliver(data, { source, origin: from = origin } = {}) {
      for (const listener of [...(listeners.get('message') || [])]) listener({ type: 'message', data, source, origin: from })
    },
    listenerCount: (type) => (listeners.get(type) || new Set()).size,
  }
  win.MutationObserver = class {
    constructor(callback) {
      this.callback = callback
      this.targets = []
    }

    observe(target, options) {
      this.targets.push({ target, filter: options.attributeFilter })
      document.observers.add(this)
    }

    disconnect() {
      document.observers.delete(this)
    }

    notice(target, attributeName, oldValue) {
      const watched = this.targets.some((t) => t.target === target && (!t.filter || t.filter.includes(attributeName)))
      if (watched) queueMicrotask(() => this.callback([{ type: 'attributes', target, attributeName, oldValue }]))
    }
  }
  return win
}

/** Run client.js as a browser would (a classic script against `window`) and return its factory's exports. */
function loadClient(win, react) {
  const source = fs.readFileSync(CLIENT, 'utf8')
  // eslint-disable-next-line no-new-func
  new Function('window', source)(win)
  const entry = win.registered.find((e) => e.id === 'dsh-team-timeline')
  if (!entry) throw new Error('client.js did not register "dsh-team-timeline" with __ModuleLoader__.load')
  return entry.factory((name) => {
    if (name === 'react') return react
    throw new Error(`client.js required ${name}, which this test does not provide`)
  })
}

/**
 * Function components, rendered into fake elements: `createElement` builds a tree,
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
        const text = document.createElement('#text')
        text.textContent = tree
        return text
      }
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

module.exports = { createWindow, loadClient, createReact, createClientContext }
