'use strict'
/**
 * Just enough of a browser, of React and of DSH's client context to run client.js:
 * elements with attributes, styles, children and listeners; iframes whose
 * `contentWindow` records what was posted to it (and is null once removed, as in
 * a browser); a MutationObserver that reports attribute changes after the current
 * task; a window with `message` listeners and a console that records what it is
 * told. React and the client context come from
 * mini-dsh.js (which also runs in a real browser for the screenshot page).
 */

const fs = require('node:fs')
const path = require('node:path')

const { createClientContext, createReact } = require('./mini-dsh.js')

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
  /** What the page printed to its console: `{level, text}`. */
  const logged = []
  const record = (level) => (...args) => logged.push({ level, text: args.map(String).join(' ') })
  const win = {
    document,
    location: { origin, href: `${origin}/` },
    URL,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    console: { info: record('info'), warn: record('warn'), log: record('log'), error: record('error') },
    logged,
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

module.exports = { createWindow, loadClient, createReact, createClientContext }

