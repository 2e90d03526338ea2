// What DSH's client runtime does for a bundle, reduced to one module: register the
// factory, then materialize it with DSH's `require` (here: only 'react').
(function () {
  'use strict'
  window.__miniDom = window.MiniDsh.createReact(document)
  window.__ModuleLoader__ = {
    load: function (entry) {
      if (entry.id !== 'dsh-team-timeline') throw new Error('unexpected bundle id ' + entry.id)
      window.__dshTeamTimeline = entry.factory(function (name) {
        if (name === 'react') return window.__miniDom.react
        throw new Error('no module ' + name)
      })
    },
  }
})()
