// dsh-task-gantt panel behaviour. No inline script anywhere (CSP script-src 'self').
// The server lays out positions as percentages of the timeline's extent; this file
// only widens the track for the zoom, scrolls it, keeps the user's view, focus and
// detail across polls, and writes times in the viewer's local time zone.
(function () {
  "use strict";

  var board, scroller, detail, viewForm;
  // The user's view: a time window (null = fit all) and whether it follows "now".
  var state = { from: null, to: null, follow: false, msg: null, list: false, listPage: 0, listTurns: false, taskPage: 0 };
  var lastOpener = null;
  // A detail fetched by the panel itself (not the user): it must not move the focus.
  var quietDetail = false;
  var scrollTimer = null;
  // Where the panel itself last put the scroller, and the geometry it was put there
  // with (null while the whole extent fits). A scroll position that differs from it was
  // the user's, whether its scroll event has fired yet or not.
  var placed = null;
  // A board asked for by the user (zoom, pages): it goes out even while a moment is asked for.
  var refreshing = false;
  // Bumped by every such board: a moment answer built for an older view (window, pages)
  // that lands after it would put the old view back.
  var viewGeneration = 0;

  function pad(n) { return n < 10 ? "0" + n : String(n); }
  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  function fmt(ms, kind) {
    var d = new Date(ms);
    var hm = pad(d.getHours()) + ":" + pad(d.getMinutes());
    var hms = hm + ":" + pad(d.getSeconds());
    var day = MONTHS[d.getMonth()] + " " + pad(d.getDate());
    if (kind === "hm") return hm;
    if (kind === "d") return day;
    if (kind === "dhm") return day + " " + hm;
    if (kind === "full" || kind === "fullms") {
      var ms3 = kind === "fullms" ? "." + String(d.getMilliseconds() + 1000).slice(1) : "";
      return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + hms + ms3;
    }
    return hms;
  }

  // Only what is not in local time yet: a delta poll brings a few new elements, and the
  // rest of the board keeps what it was given.
  function localize(root) {
    root.querySelectorAll("time[data-ms]:not([datetime])").forEach(function (el) {
      var ms = Number(el.getAttribute("data-ms"));
      if (!el.getAttribute("data-ms") || !isFinite(ms)) return;
      el.textContent = fmt(ms, el.getAttribute("data-fmt") || "hms");
      el.setAttribute("datetime", new Date(ms).toISOString());
    });
    root.querySelectorAll(".mark[data-ms]:not([data-local])").forEach(function (el) {
      el.setAttribute("data-local", "");
      var at = fmt(Number(el.getAttribute("data-ms")), "hms");
      var label = el.getAttribute("data-label") + " at " + at + (el.getAttribute("data-note") || "");
      el.setAttribute("aria-label", label);
      var preview = el.getAttribute("data-preview");
      el.setAttribute("title", preview ? label + " — " + preview : label);
    });
  }

  function meta() {
    var m = document.getElementById("board-meta");
    if (!m) return null;
    return {
      live: m.getAttribute("data-live") === "true",
      start: Number(m.getAttribute("data-extent-start")),
      end: Number(m.getAttribute("data-extent-end")),
      // The live edge ("now" and a little room): the extent end is rounded up past it.
      liveEnd: Number(m.getAttribute("data-live-end")) || Number(m.getAttribute("data-extent-end")),
      wStart: Number(m.getAttribute("data-window-start")),
      wEnd: Number(m.getAttribute("data-window-end")),
      trackPx: Number(m.getAttribute("data-track-px")),
      // The narrowest window the server draws: the zoom stops there.
      minWindow: Number(m.getAttribute("data-min-window")),
      span: m.getAttribute("data-span"),
      openT: m.getAttribute("data-open-t"),
      drawnFrom: m.getAttribute("data-drawn-from") ? Number(m.getAttribute("data-drawn-from")) : null,
      drawnTo: m.getAttribute("data-drawn-to") ? Number(m.getAttribute("data-drawn-to")) : null,
      empty: m.getAttribute("data-empty") === "true"
    };
  }

  // Everything left of the track (the sticky names and the track's margin).
  function trackOffset() {
    var track = board.querySelector(".row > .track");
    if (!track) return 0;
    return track.getBoundingClientRect().left - board.getBoundingClientRect().left;
  }
  function trackWidth() {
    var track = board.querySelector(".row > .track");
    return Math.max(track ? track.getBoundingClientRect().width : board.clientWidth, 1);
  }
  // The part of the scroller's width that shows the track (not the names or margins).
  function visibleTrack() {
    return Math.max(scroller.clientWidth - (board.getBoundingClientRect().width - trackWidth()), 1);
  }

  // Clamp the window into the extent; follow slides it to the live edge.
  function effectiveWindow(m) {
    if (state.from === null || state.to === null) return null;
    var width = Math.min(Math.max(state.to - state.from, m.minWindow), m.end - m.start);
    var lo = state.follow && m.live ? Math.min(m.liveEnd, m.end) - width : state.from;
    lo = Math.min(Math.max(lo, m.start), m.end - width);
    if (width >= m.end - m.start) return null;
    return { from: lo, to: lo + width };
  }

  // The chart places everything from three properties: the extent's length, where open
  // bars end and the now-line (seconds from the origin). A poll that changed only the
  // clock changes these and nothing else.
  function placeChart(m) {
    var chart = document.getElementById("chart");
    if (!chart || !m) return;
    if (chart.style.getPropertyValue("--span") !== m.span) chart.style.setProperty("--span", m.span);
    // Only the open bars and the now-line follow "now": set it on them, not the chart.
    chart.querySelectorAll(".open, .now").forEach(function (el) {
      if (el.style.getPropertyValue("--open-t") !== m.openT) el.style.setProperty("--open-t", m.openT);
    });
  }

  // Take a scroll the panel did not make into the view. A board that arrives in the same
  // frame as the user's scroll (before its scroll event) must not put the view back.
  function takeUserScroll() {
    if (!placed || state.from === null || state.to === null) return false;
    var left = scroller.scrollLeft;
    if (Math.abs(left - placed.left) < 1) return false;
    // A resized track (the sidebar's width changed) moves the scroll by itself: the
    // window in time stays, and apply() places it again.
    if (Math.abs(trackWidth() - placed.track) >= 1) return false;
    var width = state.to - state.from;
    state.from = placed.start + left / placed.track * placed.extent;
    state.to = state.from + width;
    placed.left = left;
    // Scrolling back from the live edge stops following; reaching it again resumes.
    var m = meta();
    var atEnd = left + scroller.clientWidth >= scroller.scrollWidth - 2;
    if (m && m.live) state.follow = atEnd && state.follow;
    // The URL, and a redraw past the drawn range, wait until the scrolling stops.
    window.clearTimeout(scrollTimer);
    scrollTimer = window.setTimeout(function () {
      syncInputs();
      syncUrl();
      // Only the chunks near the window are drawn: past them, ask for the board again.
      var cur = meta();
      if (cur && cur.drawnFrom !== null && (state.from < cur.drawnFrom || state.to > cur.drawnTo)) refresh();
    }, 150);
    return true;
  }

  function apply() {
    var m = meta();
    placeChart(m);
    placeCursor(m);
    if (!m || document.body.classList.contains("list-mode")) {
      if ((board.style.getPropertyValue("--zoom") || "1") !== "1") board.style.setProperty("--zoom", "1");
      placed = null;
      return;
    }
    takeUserScroll();
    var w = effectiveWindow(m);
    var extent = m.end - m.start;
    var zoom = w ? extent / (w.to - w.from) : 1;
    // Unchanged properties are not set again: a poll that moved nothing lays out nothing.
    // Unset is 1 (the stylesheet's initial value): a first load at fit-all sets nothing.
    if ((board.style.getPropertyValue("--zoom") || "1") !== String(zoom)) board.style.setProperty("--zoom", String(zoom));
    if (w) {
      state.from = w.from; state.to = w.to;
      var track = trackWidth();
      var left = (w.from - m.start) / extent * track;
      if (Math.abs(scroller.scrollLeft - left) >= 1) scroller.scrollLeft = left;
      // Read back: the browser may have clamped it.
      placed = { left: scroller.scrollLeft, start: m.start, extent: extent, track: track };
    } else {
      if (scroller.scrollLeft !== 0) scroller.scrollLeft = 0;
      placed = null;
    }
  }

  function syncInputs() {
    if (!viewForm) return;
    viewForm.elements.from.value = state.from === null ? "" : String(Math.round(state.from));
    viewForm.elements.to.value = state.to === null ? "" : String(Math.round(state.to));
    viewForm.elements.follow.value = state.follow ? "1" : "";
    viewForm.elements.w.value = String(Math.round(visibleTrack()));
    viewForm.elements.list.value = state.list ? "1" : "";
    viewForm.elements.lp.value = state.listPage ? String(state.listPage) : "";
    viewForm.elements.turns.value = state.listTurns ? "1" : "";
    viewForm.elements.tp.value = state.taskPage ? String(state.taskPage) : "";
    // Unset, the moment is left out of every request (disabled inputs are not sent).
    viewForm.elements.at.value = cursor.at === null ? "" : String(cursor.at);
    viewForm.elements.at.disabled = cursor.at === null;
  }

  function syncUrl() {
    var url = new URL(window.location.href);
    ["from", "to", "follow", "t", "msg", "list", "turns", "at"].forEach(function (k) { url.searchParams.delete(k); });
    if (state.from !== null && state.to !== null) {
      url.searchParams.set("from", String(Math.round(state.from)));
      url.searchParams.set("to", String(Math.round(state.to)));
    }
    if (state.follow) url.searchParams.set("follow", "1");
    if (state.msg) url.searchParams.set("msg", state.msg);
    if (state.list) url.searchParams.set("list", "1");
    if (state.listTurns) url.searchParams.set("turns", "1");
    if (cursor.at !== null) url.searchParams.set("at", String(cursor.at));
    // Unchanged (a first load, most swaps): no history write, which costs a few ms.
    if (url.toString() !== window.location.href) window.history.replaceState(null, "", url.toString());
    var follow = document.getElementById("follow");
    if (follow) follow.setAttribute("aria-pressed", state.follow ? "true" : "false");
    var list = document.getElementById("list-toggle");
    if (list) list.setAttribute("aria-pressed", state.list ? "true" : "false");
    var turns = document.getElementById("turns-toggle");
    if (turns) turns.setAttribute("aria-pressed", state.listTurns ? "true" : "false");
  }

  // Ask for the board again with the new view (ticks depend on the zoom); the cleared
  // version makes the server answer with a board rather than "unchanged".
  function refresh() {
    refreshing = true;
    viewGeneration++;
    syncInputs();
    syncUrl();
    var version = document.getElementById("board-version");
    if (version) version.value = "";
    var token = document.getElementById("board-token");
    if (token) token.value = "";
    if (window.htmx) window.htmx.ajax("GET", board.getAttribute("hx-get"), { source: board, target: board, swap: "innerHTML" });
    refreshing = false;
  }

  function currentWindow(m) {
    takeUserScroll();
    var w = effectiveWindow(m);
    return w || { from: m.start, to: m.end };
  }

  function zoomBy(factor) {
    var m = meta();
    if (!m) return;
    var w = currentWindow(m);
    var centre = (w.from + w.to) / 2;
    if (state.follow && m.live) centre = w.to - (w.to - w.from) * factor / 2;
    var width = Math.max((w.to - w.from) * factor, m.minWindow);
    if (width >= m.end - m.start) { state.from = state.to = null; }
    else { state.from = centre - width / 2; state.to = centre + width / 2; }
    apply();
    refresh();
  }

  function fitAll() { state.from = state.to = null; state.follow = false; apply(); refresh(); }

  function toggleFollow() {
    var m = meta();
    if (!m || !m.live) return;
    // "Now" while replaying: back to the present, following it.
    if (cursor.at !== null) { state.follow = false; clearCursor(true); }
    state.follow = !state.follow;
    if (state.follow && state.from === null) {
      var width = Math.max((m.end - m.start) / 4, m.minWindow);
      state.from = m.end - width; state.to = m.end;
    }
    apply();
    refresh();
  }

  // The list is drawn by the server a page at a time (never thousands of rows).
  function toggleList() {
    state.list = !state.list;
    state.listPage = 0;
    document.body.classList.toggle("list-mode", state.list);
    apply();
    // Replaying: the list opens on the page holding the moment.
    if (cursor.at !== null) { cursor.asked = null; cursor.listScrolled = null; requestMoment(); } else refresh();
  }

  // The list's turns (each with its member, length and tokens) on or off; the server
  // draws them, and the view form carries the switch through every poll.
  function toggleListTurns() {
    state.listTurns = !state.listTurns;
    state.listPage = 0;
    syncUrl();
    if (cursor.at !== null) { cursor.asked = null; cursor.listScrolled = null; requestMoment(); } else refresh();
  }

  // The window follows the scroll at once, so a board that arrives meanwhile (a poll,
  // the answer to a zoom) is placed where the user is, not where they were.
  function onScroll() { takeUserScroll(); }


  // -- detail ------------------------------------------------------------------
  function markTwins(msgId, on) {
    board.querySelectorAll(".mark").forEach(function (el) {
      if (el.getAttribute("data-msg") === msgId) el.classList.toggle("twin", on);
    });
  }
  // Where the open message's marks are, as its card says: [lane element id, ms] pairs.
  function openMarksAt() {
    var card = detail.querySelector(".message-card");
    if (!card || card.getAttribute("data-msg") !== state.msg) return [];
    return (card.getAttribute("data-marks") || "").split(" ").filter(Boolean).map(function (word) {
      var at = word.lastIndexOf("@");
      return [word.slice(0, at), Number(word.slice(at + 1))];
    });
  }
  // The open message's marks, or the clusters that hold it, are marked current. A
  // cluster lists its messages' ids (data-msgs), or, when it is a long run of its lane's
  // marks, holds the message whose mark on its lane falls in its range.
  function showCurrent() {
    board.querySelectorAll('.mark[aria-current="true"]').forEach(function (el) { el.removeAttribute("aria-current"); });
    if (!state.msg) return;
    var marksAt = openMarksAt();
    board.querySelectorAll(".mark").forEach(function (el) {
      var current = el.getAttribute("data-msg") === state.msg;
      var held = el.getAttribute("data-msgs");
      if (!current && held !== null) current = held.split(" ").indexOf(state.msg) >= 0;
      else if (!current && el.classList.contains("cluster")) {
        var lane = el.closest(".lane");
        var from = Number(el.getAttribute("data-from")), to = Number(el.getAttribute("data-to"));
        current = !!lane && marksAt.some(function (at) { return at[0] === lane.id && from <= at[1] && at[1] <= to; });
      }
      if (current) el.setAttribute("aria-current", "true");
    });
  }
  // An open "delivery pending" message whose marks now say delivered: fetch it again,
  // so the detail does not keep saying "pending" next to a board that says otherwise.
  function refreshPendingDetail() {
    if (!state.msg || detail.hidden || quietDetail) return;  // one refresh at a time
    var card = detail.querySelector(".message-card[data-pending='true']");
    if (!card || card.getAttribute("data-msg") !== state.msg) return;
    var mark = null, pending = false;
    board.querySelectorAll(".mark").forEach(function (el) {
      if (el.getAttribute("data-msg") !== state.msg) return;
      mark = mark || el;
      if (el.classList.contains("pending")) pending = true;
    });
    if (!mark || pending || !window.htmx) return;
    quietDetail = true;
    window.htmx.ajax("GET", detailUrl(mark), { source: mark, target: detail, swap: "innerHTML" });
  }
  // A mark's message or a task row's task, by the ids they carry: the board's buttons
  // have no hx-get of their own, so htmx sets up none of them when a board arrives.
  function teamUrl(path) {
    return document.body.getAttribute("data-prefix") + path + "?session=" +
      encodeURIComponent(document.body.getAttribute("data-session"));
  }
  function detailUrl(el) {
    var msg = el.getAttribute("data-msg");
    if (msg !== null) return teamUrl("/api/messages/" + encodeURIComponent(msg));
    return teamUrl("/panel/tasks/" + encodeURIComponent(el.getAttribute("data-task")));
  }
  function openDetail(el) {
    if (window.htmx) window.htmx.ajax("GET", detailUrl(el), { source: el, target: detail, swap: "innerHTML" });
  }
  // What an aggregate holds, as a list in the detail (its range on its lane).
  function openItems(el) {
    var lane = el.closest(".lane");
    if (!lane || !window.htmx) return;
    var url = teamUrl("/panel/items") + "&lane=" +
      encodeURIComponent(lane.getAttribute("data-lane")) + "&from=" + el.getAttribute("data-from") +
      "&to=" + el.getAttribute("data-to");
    window.htmx.ajax("GET", url, { source: el, target: detail, swap: "innerHTML" });
  }
  function closeDetail() {
    detail.hidden = true;
    detail.textContent = "";
    state.msg = null;
    showCurrent();
    syncUrl();
    if (lastOpener && document.contains(lastOpener)) lastOpener.focus();
  }

  // -- focus survives a swap: remember the element by a stable key -------------
  var focusKey = null;
  function keyOf(el) {
    if (!el || !board.contains(el)) return null;
    var lane = el.closest(".lane, .task");
    if (el.classList.contains("mark")) return { lane: lane && lane.getAttribute("data-lane"), msg: el.getAttribute("data-msg") };
    if (el.id) return { id: el.id };
    if (lane && lane.id) return { row: lane.id, cls: el.className };
    return null;
  }
  function restoreFocus(key) {
    if (!key) return;
    var target = null;
    if (key.msg !== undefined) {
      board.querySelectorAll(".mark").forEach(function (el) {
        var lane = el.closest(".lane");
        if (!target && el.getAttribute("data-msg") === key.msg && lane && lane.getAttribute("data-lane") === key.lane) target = el;
      });
    } else if (key.id) {
      target = document.getElementById(key.id);
    } else if (key.row) {
      var row = document.getElementById(key.row);
      target = row && row.querySelector("button");
    }
    if (target) target.focus({ preventScroll: true });
  }

  // -- replay: a time cursor over the chart --------------------------------------
  // One explicit state. The server says what held at the moment (rows, lanes, the
  // summary) and which events lie around it; this code only moves the cursor, dims
  // what follows it (the chart's --cursor-t and class) and asks for the moment, one
  // request at a time: the position at the time an answer lands is asked for next.
  var MINUTE = 60000;
  var DRAG_EVERY_MS = 80;
  var cursor = {
    el: null,
    at: null,         // the moment (epoch ms); null: the present
    shown: null,      // the moment the rows on screen were drawn for
    steps: [],        // event times around `shown` (sorted), for the arrow keys
    busy: false,      // a moment request is in flight
    again: false,     // the cursor moved meanwhile
    step: null,       // "prev"/"next" asked for meanwhile (the server finds the event)
    asked: null,      // the moment last asked for (an answer that failed is not retried)
    generation: 0,    // the view generation the request in flight was built for
    stale: false,     // its answer came for an older view and was dropped
    boardBusy: false, // a board request (poll, zoom) is in flight
    dragging: null,   // the pointer id while dragging
    lastAsk: 0,       // when a request last left (drag throttle)
    listScrolled: null // the moment the list was last scrolled to
  };

  function readMoment() {
    var data = document.getElementById("moment-data");
    var box = document.getElementById("moment");
    cursor.shown = data ? Number(data.getAttribute("data-at")) : null;
    cursor.steps = data ? (data.getAttribute("data-steps") || "").split(" ").filter(Boolean).map(Number) : [];
    if (data && data.getAttribute("data-list-page")) state.listPage = Number(data.getAttribute("data-list-page")) || 0;
    // An answer for a moment the user has left (or for none) is not shown as current.
    if (box) box.hidden = cursor.at === null || !data;
  }

  function msAtX(clientX) {
    var m = meta();
    // In the list view the cursor's own bar stands for the extent.
    var listBar = document.body.classList.contains("list-mode");
    var track = listBar ? cursor.el : board.querySelector(".row > .track");
    if (!m || !track) return null;
    var rect = track.getBoundingClientRect();
    if (listBar) {  // the bar's line runs inside its padding
      var pad = parseFloat(getComputedStyle(track).paddingLeft) || 0;
      rect = { left: rect.left + pad, width: rect.width - 2 * pad };
    }
    var frac = Math.min(Math.max((clientX - rect.left) / Math.max(rect.width, 1), 0), 1);
    return m.start + frac * (m.end - m.start);
  }

  function setAttr(el, name, value) {
    if (el.getAttribute(name) !== value) el.setAttribute(name, value);
  }

  // Where the cursor stands and what it dims; every board (whole or delta) passes here.
  // Unset, it touches nothing that changed (no layout is read): a poll costs the same.
  function placeCursor(m) {
    var chart = document.getElementById("chart");
    var el = cursor.el;
    if (!el || !m || m.empty) { if (el && !el.hidden) el.hidden = true; return; }
    if (el.hidden) el.hidden = false;
    var set = cursor.at !== null;
    if (chart && chart.classList.contains("replaying") !== set) chart.classList.toggle("replaying", set);
    if (el.classList.contains("parked") === set) el.classList.toggle("parked", !set);
    setAttr(el, "aria-valuemin", String(m.start));
    setAttr(el, "aria-valuemax", String(m.end));
    setAttr(el, "aria-valuenow", String(set ? cursor.at : m.end));
    setAttr(el, "aria-valuetext", set ? fmt(cursor.at, "full") : "the present");
    var frac = set ? (Math.min(Math.max(cursor.at, m.start), m.end) - m.start) / Math.max(m.end - m.start, 1) : 1;
    // The list view's bar places its knob from this alone (the chart is not laid out).
    if (el.style.getPropertyValue("--cursor-frac") !== String(frac)) el.style.setProperty("--cursor-frac", String(frac));
    if (!set) {
      // Parked at the end of the track, by the stylesheet.
      if (el.style.left) { el.style.left = ""; el.style.height = ""; }
      return;
    }
    var t = String((cursor.at - m.start) / 1000);
    if (chart && chart.style.getPropertyValue("--cursor-t") !== t) chart.style.setProperty("--cursor-t", t);
    el.style.left = (trackOffset() + frac * trackWidth()) + "px";
    // As tall as the chart (the scroller may be taller: it fills the window).
    var height = chart ? chart.offsetHeight + "px" : "";
    if (el.style.height !== height) el.style.height = height;
    placeListAt();
  }

  // The list view: what follows the moment is dimmed, and the list scrolls to it once.
  function placeListAt() {
    if (!document.body.classList.contains("list-mode")) return;
    var last = null;
    document.querySelectorAll("#list .item").forEach(function (item) {
      var time = item.querySelector("time[data-ms]");
      var after = cursor.at !== null && time && Number(time.getAttribute("data-ms")) > cursor.at;
      item.classList.toggle("after", !!after);
      item.removeAttribute("aria-current");
      if (cursor.at !== null && !after) last = item;
    });
    if (last) last.setAttribute("aria-current", "time");
    if (last && cursor.listScrolled !== cursor.shown) {
      cursor.listScrolled = cursor.shown;
      last.scrollIntoView({ block: "center" });
    }
  }

  function momentValues(step) {
    var values = {};
    if (viewForm) {
      Array.prototype.forEach.call(viewForm.elements, function (input) {
        if (input.name && !input.disabled && input.value !== "") values[input.name] = input.value;
      });
    }
    var token = document.getElementById("board-token");
    if (token && token.value) values.b = token.value;
    if (step) values.step = step;
    return values;
  }

  // Ask for the board at the cursor: one request at a time; a drag asks at most every
  // DRAG_EVERY_MS; the position when an answer lands is asked for next.
  function requestMoment(step) {
    if (!window.htmx) return;
    if (cursor.busy || cursor.boardBusy) {
      cursor.again = true;
      if (step) cursor.step = step;
      return;
    }
    var wait = cursor.dragging !== null ? cursor.lastAsk + DRAG_EVERY_MS - Date.now() : 0;
    if (wait > 0) {
      cursor.again = true;
      cursor.busy = true;
      window.setTimeout(function () { cursor.busy = false; settleMoment(); }, wait);
      return;
    }
    step = step || cursor.step;
    cursor.step = null;
    cursor.asked = cursor.at;
    cursor.generation = viewGeneration;
    cursor.stale = false;
    cursor.busy = true;
    cursor.again = false;
    cursor.lastAsk = Date.now();
    syncInputs();
    var url = board.getAttribute("hx-get").replace("/panel/board?", "/panel/moment?");
    window.htmx.ajax("GET", url, { source: cursor.el, target: board, swap: "innerHTML", values: momentValues(step) })
      .then(function () { cursor.busy = false; afterMoment(step); }, function () { cursor.busy = false; });
  }

  // htmx names the board, not the cursor, as the element of a moment request: the path tells.
  function isMomentAnswer(detail) {
    var config = detail.requestConfig;
    return !!(config && config.path && config.path.indexOf("/panel/moment?") >= 0);
  }

  function afterMoment(step) {
    if (cursor.stale) {
      // Dropped: the same question again, for the view on screen now.
      cursor.stale = false;
      cursor.again = true;
      if (step && !cursor.step) cursor.step = step;
      settleMoment();
      return;
    }
    readMoment();
    // A step the server resolved: the cursor goes to the event it found.
    if (step && cursor.shown !== null) cursor.at = cursor.shown;
    apply();
    syncInputs();
    if (cursor.dragging === null) syncUrl();
    settleMoment();
  }

  // Ask again when the rows on screen are not those of the cursor's moment.
  function settleMoment() {
    if (cursor.busy || cursor.boardBusy) return;
    var unanswered = cursor.shown !== cursor.at && cursor.asked !== cursor.at;
    if (cursor.again || cursor.step || unanswered) requestMoment(cursor.step);
  }

  function setCursor(ms, step) {
    var m = meta();
    if (ms === null || !m || m.empty) return;
    cursor.at = Math.round(Math.min(Math.max(ms, m.start), m.end));
    // The cursor stays where it was put: the window no longer slides to "now".
    state.follow = false;
    placeCursor(m);
    syncInputs();
    // A drag writes the URL when it ends (browsers throttle frequent history writes).
    if (cursor.dragging === null) syncUrl();
    requestMoment(step);
  }

  // Back to the present: the rows and lanes say what holds now.
  function clearCursor(quiet) {
    if (cursor.at === null) return;
    cursor.at = null;
    var box = document.getElementById("moment");
    if (box) { box.hidden = true; box.textContent = ""; }
    cursor.shown = null;
    cursor.steps = [];
    placeCursor(meta());
    placeListAt();
    syncInputs();
    syncUrl();
    if (!quiet) requestMoment();
  }

  function stepCursor(direction, minutes) {
    var m = meta();
    if (!m) return;
    var from = cursor.at === null ? m.liveEnd : cursor.at;
    if (minutes) { setCursor(from + direction * MINUTE); return; }
    // The steps the server sent are one unbroken run of event times: inside it, the
    // event before or after any time is in it (so a key held down steps on at once).
    var steps = cursor.steps;
    var inside = cursor.at !== null && steps.length > 1 &&
      (direction < 0 ? from > steps[0] && from <= steps[steps.length - 1]
                     : from >= steps[0] && from < steps[steps.length - 1]);
    if (inside) {
      var found = null;
      steps.forEach(function (ms) {
        if (direction < 0 && ms < from) found = ms;
        if (direction > 0 && ms > from && found === null) found = ms;
      });
      setCursor(found);
      return;
    }
    // None known on that side: the server finds the event (or stays put).
    setCursor(from, direction < 0 ? "prev" : "next");
  }

  function onCursorKey(ev) {
    var m = meta();
    if (!m || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var keys = {
      ArrowLeft: function () { stepCursor(-1, ev.shiftKey); },
      ArrowRight: function () { stepCursor(1, ev.shiftKey); },
      Home: function () { setCursor(m.start); },
      End: function () { setCursor(m.end); }
    };
    if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
  }

  // The arrow keys go on from where a click put the cursor.
  function focusCursor() { if (cursor.el) cursor.el.focus({ preventScroll: true }); }

  function onCursorDrag(ev) {
    if (cursor.dragging !== ev.pointerId) return;
    setCursor(msAtX(ev.clientX));
  }
  function startDrag(ev) {
    if (ev.button !== 0) return;
    cursor.dragging = ev.pointerId;
    cursor.el.setPointerCapture(ev.pointerId);
    focusCursor();
    ev.preventDefault();
    // The list view's bar: a press anywhere on it is the moment there.
    if (document.body.classList.contains("list-mode")) setCursor(msAtX(ev.clientX));
  }
  function endDrag(ev) {
    if (cursor.dragging !== ev.pointerId) return;
    cursor.dragging = null;
    syncUrl();
    settleMoment();
  }

  function initCursor() {
    cursor.el = document.getElementById("cursor");
    if (!cursor.el) return;
    var input = viewForm && viewForm.elements.at;
    cursor.at = input && !input.disabled && input.value !== "" ? Number(input.value) : null;
    readMoment();
    cursor.el.addEventListener("keydown", onCursorKey);
    cursor.el.addEventListener("pointerdown", startDrag);
    cursor.el.addEventListener("pointermove", onCursorDrag);
    cursor.el.addEventListener("pointerup", endDrag);
    cursor.el.addEventListener("pointercancel", endDrag);
    // Escape closes an open detail first (its own handler), then leaves the moment.
    document.addEventListener("keydown", function (ev) {
      if (ev.key !== "Escape" || ev.defaultPrevented || cursor.at === null || !detail.hidden) return;
      var t = ev.target;
      if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement) return;
      ev.preventDefault();
      clearCursor();
    });
    // A poll waits while a moment is asked for, and a moment while a board is.
    document.body.addEventListener("htmx:beforeRequest", function (ev) {
      if (ev.detail.elt !== board) return;
      if (cursor.busy && !refreshing) { ev.preventDefault(); return; }
      cursor.boardBusy = true;
    });
    document.body.addEventListener("htmx:afterRequest", function (ev) {
      if (ev.detail.elt !== board) return;
      cursor.boardBusy = false;
      if (cursor.at === null && cursor.shown === null && !cursor.again) return;  // unset: nothing to do
      readMoment();
      placeCursor(meta());
      settleMoment();
    });
  }

  function init() {
    board = document.getElementById("board");
    scroller = document.getElementById("scroller");
    detail = document.getElementById("detail");
    viewForm = document.getElementById("view");
    if (!board || !scroller || !detail) return;
    var params = new URL(window.location.href).searchParams;
    state.list = document.body.classList.contains("list-mode");
    if (viewForm) {
      state.listPage = Number(viewForm.elements.lp.value) || 0;
      state.listTurns = viewForm.elements.turns.value === "1";
      state.taskPage = Number(viewForm.elements.tp.value) || 0;
    }
    var m = meta();
    if (m && (m.wStart > m.start || m.wEnd < m.end)) { state.from = m.wStart; state.to = m.wEnd; }
    state.follow = !!(m && m.live && params.get("follow") === "1");
    state.msg = detail.hidden ? null : params.get("msg");
    localize(document);
    initCursor();
    apply();
    syncInputs();
    syncUrl();
    showCurrent();
    // The server guessed the track's width; ticks and mark rows depend on it.
    if (m && !m.empty && Math.abs(visibleTrack() - m.trackPx) > m.trackPx * 0.25) refresh();

    document.getElementById("zoom-in").addEventListener("click", function () { zoomBy(0.5); });
    document.getElementById("zoom-out").addEventListener("click", function () { zoomBy(2); });
    document.getElementById("fit").addEventListener("click", fitAll);
    document.getElementById("follow").addEventListener("click", toggleFollow);
    document.getElementById("list-toggle").addEventListener("click", toggleList);
    scroller.addEventListener("scroll", onScroll, { passive: true });
    window.addEventListener("resize", function () { apply(); syncInputs(); });
    // The ticks and mark rows were laid out for the track's width: when it changes by
    // much (a detail opens beside the chart, the window is resized), ask for the board
    // again, once the width has settled.
    if (window.ResizeObserver) {
      var resized = null;
      new ResizeObserver(function () {
        window.clearTimeout(resized);
        resized = window.setTimeout(function () {
          var cur = meta();
          if (!cur || cur.empty || document.body.classList.contains("list-mode")) return;
          if (Math.abs(visibleTrack() - cur.trackPx) > cur.trackPx * 0.2) refresh();
        }, 150);
      }).observe(scroller);
    }

    document.addEventListener("click", function (ev) {
      var t = ev.target instanceof Element ? ev.target : null;
      if (!t) return;
      if (t.closest("[data-close]")) { closeDetail(); return; }
      if (t.closest("[data-cursor-clear]")) { clearCursor(); return; }
      // The axis, or a lane's empty track: the moment under the pointer.
      if (!t.closest("button") && t.closest("#axis, .lane > .track")) { focusCursor(); setCursor(msAtX(ev.clientX)); return; }
      if (t.closest("#turns-toggle")) { toggleListTurns(); return; }
      var pager = t.closest("[data-list-page]");
      if (pager) { state.listPage = Math.max(0, Number(pager.getAttribute("data-list-page")) || 0); refresh(); return; }
      var taskPager = t.closest("[data-task-page]");
      if (taskPager) { state.taskPage = Math.max(0, Number(taskPager.getAttribute("data-task-page")) || 0); refresh(); return; }
      var aggregate = t.closest(".turn.group, .mark.cluster");
      if (aggregate && board.contains(aggregate)) { lastOpener = aggregate; state.msg = null; openItems(aggregate); return; }
      var opener = t.closest("[hx-target='#detail'], .mark[data-msg], .task-name[data-task]");
      if (opener) {
        lastOpener = opener;
        // Every message opener (a mark, a list row) names its message in data-msg.
        state.msg = opener.getAttribute("data-msg");
        // The list's rows ask by their own hx-get; the board's marks and tasks from here.
        if (!opener.hasAttribute("hx-get")) openDetail(opener);
      }
    });
    // An aggregate's tooltip is written when first hovered, not sent with every board.
    board.addEventListener("mouseover", function (ev) {
      var aggregate = ev.target instanceof Element ? ev.target.closest(".turn.group, .mark.cluster") : null;
      if (aggregate && !aggregate.title) aggregate.title = aggregate.getAttribute("aria-label") + " (open the list)";
    });
    // A message's two marks (sent, received) light up together, by pointer or by focus.
    [["mouseover", true], ["mouseout", false], ["focusin", true], ["focusout", false]].forEach(function (pair) {
      board.addEventListener(pair[0], function (ev) {
        var mark = ev.target instanceof Element ? ev.target.closest(".mark") : null;
        if (mark) markTwins(mark.getAttribute("data-msg"), pair[1]);
      });
    });

    // A task row focused or hovered lights its blockers and the tasks waiting on it.
    [["mouseover", true], ["mouseout", false], ["focusin", true], ["focusout", false]].forEach(function (pair) {
      board.addEventListener(pair[0], function (ev) {
        var row = ev.target instanceof Element ? ev.target.closest(".row.task") : null;
        if (row) taskGraphLight(row, pair[1]);
      });
    });

    document.addEventListener("keydown", function (ev) {
      var t = ev.target;
      if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement) return;
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (ev.key === "Escape" && !detail.hidden) { ev.preventDefault(); closeDetail(); }
      else if (ev.key === "+" || ev.key === "=") { ev.preventDefault(); zoomBy(0.5); }
      else if (ev.key === "-" || ev.key === "_") { ev.preventDefault(); zoomBy(2); }
      else if (ev.key === "0") { ev.preventDefault(); fitAll(); }
    });

    document.body.addEventListener("htmx:beforeSwap", function (ev) {
      if (isMomentAnswer(ev.detail) && cursor.generation !== viewGeneration) {
        ev.detail.shouldSwap = false;
        cursor.stale = true;
        return;
      }
      if (ev.detail.target === board) focusKey = keyOf(document.activeElement);
      // A message or task the logs no longer hold: show the server's "Not found" card
      // (htmx leaves 4xx answers unswapped) rather than nothing at all.
      if (ev.detail.target === detail && ev.detail.xhr && ev.detail.xhr.status === 404) {
        ev.detail.shouldSwap = true;
        ev.detail.isError = false;
      }
    });
    document.body.addEventListener("htmx:afterSwap", function (ev) {
      var target = ev.detail.target;
      if (target === board) {
        localize(board);
        apply();
        syncInputs();
        showCurrent();
        restoreFocus(focusKey);
        focusKey = null;
      } else if (target === detail) {
        detail.hidden = false;
        localize(detail);
        showCurrent();
        syncUrl();
        var title = detail.querySelector(".card-title");
        if (title && !quietDetail && !(lastOpener && lastOpener.classList.contains("mark"))) title.focus({ preventScroll: true });
      }
    });
    // Marks keep their ids across polls, so htmx gives them their new classes only when
    // the swap settles: read "pending" then.
    document.body.addEventListener("htmx:afterSettle", function (ev) {
      if (ev.detail.target === board) refreshPendingDetail();
      else if (ev.detail.target === detail) quietDetail = false;
    });
    ["htmx:responseError", "htmx:sendError"].forEach(function (name) {
      document.body.addEventListener(name, function (ev) {
        if (ev.detail.target === detail) quietDetail = false;
      });
    });
    // The status line is swapped out of band: keep the notes open if the user opened them.
    var notesOpen = false;
    document.body.addEventListener("htmx:oobBeforeSwap", function () {
      var notes = document.querySelector("#status details.notes");
      notesOpen = !!(notes && notes.open);
    });
    // The replay line comes out of band too, with every board: its time in local time
    // like the slider's, not the server's UTC.
    // While live, done tasks fold into one "N done" row; opened, it stays open.
    var doneOpen = false;
    function applyDoneFold() {
      var head = document.getElementById("tasks-head");
      var button = head ? head.querySelector("[data-done-fold]") : null;
      if (!head || !button) return;
      head.classList.toggle("open", doneOpen);
      button.setAttribute("aria-expanded", doneOpen ? "true" : "false");
    }
    document.addEventListener("click", function (ev) {
      var button = ev.target instanceof Element ? ev.target.closest("[data-done-fold]") : null;
      if (!button) return;
      doneOpen = !doneOpen;
      applyDoneFold();
    });
    ["htmx:afterSettle", "htmx:oobAfterSwap"].forEach(function (name) {
      document.body.addEventListener(name, applyDoneFold);
    });
    // "Where the time went" is redrawn with the tasks: it stays open once opened.
    var whereOpen = false;
    document.addEventListener("toggle", function (ev) {
      if (ev.target instanceof Element && ev.target.id === "where-time") whereOpen = ev.target.open;
    }, true);
    ["htmx:afterSettle", "htmx:oobAfterSwap"].forEach(function (name) {
      document.body.addEventListener(name, function () {
        var where = document.getElementById("where-time");
        if (where && whereOpen && !where.open) where.open = true;
      });
    });
    document.body.addEventListener("htmx:oobAfterSwap", function () {
      var line = document.getElementById("moment");
      if (line) localize(line);
      var status = document.getElementById("status");
      if (!status) return;
      localize(status);
      var notes = status.querySelector("details.notes");
      if (notes && notesOpen) notes.open = true;
    });
  }

  function taskGraphLight(row, on) {
    var marked = document.querySelectorAll(".row.task.hl-self, .row.task.hl-blocker, .row.task.hl-dependent");
    for (var i = 0; i < marked.length; i++) marked[i].classList.remove("hl-self", "hl-blocker", "hl-dependent");
    if (!on) return;
    var id = row.getAttribute("data-task-id");
    var blockers = (row.getAttribute("data-blockers") || "").split(" ").filter(Boolean);
    var rows = document.querySelectorAll(".row.task[data-task-id]");
    row.classList.add("hl-self");
    for (var j = 0; j < rows.length; j++) {
      var other = rows[j];
      if (other === row) continue;
      if (blockers.indexOf(other.getAttribute("data-task-id")) >= 0) other.classList.add("hl-blocker");
      var theirs = (other.getAttribute("data-blockers") || "").split(" ");
      if (id && theirs.indexOf(id) >= 0) other.classList.add("hl-dependent");
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
