// Mounts the real client half with a fake DSH client context: the tab body for the
// session in ?session= (DSH hands it to the body through the seat's inject).
(function () {
  'use strict'
  var params = new URL(window.location.href).searchParams
  if (params.get('theme') === 'dark') document.body.setAttribute('data-ds-dark-theme', '')
  var mini = window.MiniDsh
  var dom = window.__miniDom
  var active = params.get('lang') || 'en'
  var listeners = new Set()
  window.openedSessions = []
  window.setLocale = function (lang) { active = lang; listeners.forEach(function (fn) { fn() }) }
  var dsh = mini.createClientContext({
    locale: { getLocale: function () { return { active: active } }, subscribe: function (fn) { listeners.add(fn); return function () { listeners.delete(fn) } } },
    uiWorkspace: { openSession: function (id) { window.openedSessions.push(id); return Promise.resolve() } },
  })
  dsh.load(window.__dshTeamTimeline)
  var type = Array.from(dsh.tabTypes.values())[0]
  document.getElementById('tab-title').textContent = type.title()
  if (params.get('view') === 'teams') {
    // The left-sidebar row's page, in place of the conversation.
    var row = dsh.seats('sidebar.panellist')[0]
    var page = dsh.seats('main').filter(function (entry) { return entry.spec.key === row.spec.id })[0]
    var main = document.querySelector('.conversation')
    main.textContent = ''
    main.classList.add('page')
    dom.render(page.component, {}, main)
  }
  var seat = dsh.seats('sidebar.right.pane.tab')[0]
  dom.render(seat.component, seat.spec.inject(params.get('session') || ''), document.getElementById('pane'))
})()
