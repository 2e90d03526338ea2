// Inside DSH's sidebar (a same-origin frame): follow DSH's theme and language, and let a
// click on a lane's name open that member's conversation in DSH. On its own (no parent
// window) this does nothing. No inline script anywhere (CSP script-src 'self').
(function () {
  "use strict";

  if (window.parent === window) return;

  var HOST_STATE = "dsh-task-gantt:host";
  var OPEN_SESSION = "dsh-task-gantt:open-session";
  var LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/;
  var DARK_QUERY = /\(\s*prefers-color-scheme\s*:\s*dark\s*\)/;
  var root = document.documentElement;
  // Each "(prefers-color-scheme: dark)" rule's own media text, before we rewrote it.
  var originals = new Map();

  // The stylesheets choose dark by the system's preference; DSH has its own. Rewrite the
  // condition of every such rule so it holds exactly when DSH is dark.
  function rewrite(rules, theme) {
    for (var i = 0; i < rules.length; i++) {
      var rule = rules[i];
      if (rule.media && rule.cssRules) {
        var text = originals.has(rule) ? originals.get(rule) : rule.media.mediaText;
        if (DARK_QUERY.test(text)) {
          originals.set(rule, text);
          rule.media.mediaText = theme === "dark" ? text.replace(DARK_QUERY, "(min-width: 0px)") : "not all";
        }
        rewrite(rule.cssRules, theme);
      }
    }
  }

  function applyTheme(theme) {
    if (theme !== "light" && theme !== "dark") return;
    root.style.colorScheme = theme;
    root.setAttribute("data-theme", theme);
    for (var i = 0; i < document.styleSheets.length; i++) {
      var rules = null;
      try { rules = document.styleSheets[i].cssRules; } catch (e) { rules = null; }
      if (rules) rewrite(rules, theme);
    }
  }

  function applyLanguage(lang) {
    if (typeof lang === "string" && LANGUAGE.test(lang)) root.lang = lang;
  }

  var params = new URL(window.location.href).searchParams;
  applyTheme(params.get("theme"));
  applyLanguage(params.get("lang"));

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent || event.origin !== window.location.origin) return;
    var data = event.data;
    if (!data || data.type !== HOST_STATE) return;
    applyTheme(data.theme);
    applyLanguage(data.lang);
  });

  // Lane names open conversations. The lane's own session id is in the timeline (the
  // lead's lane is keyed "lead"), read once per page and kept.
  var body = document.body;
  var session = body.getAttribute("data-session");
  var prefix = body.getAttribute("data-prefix");
  if (!session || prefix === null) return;
  var lanes = null;

  function laneSessions() {
    if (lanes === null) {
      lanes = fetch(prefix + "/api/timeline?session=" + encodeURIComponent(session), { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : { lanes: [] }; })
        .then(function (timeline) {
          var byLane = {};
          (timeline.lanes || []).forEach(function (lane) {
            if (typeof lane.sessionId === "string") byLane[lane.id] = lane.sessionId;
          });
          return byLane;
        })
        .catch(function () { lanes = null; return {}; });
    }
    return lanes;
  }

  function laneOf(target) {
    var chip = target instanceof Element ? target.closest(".lane .name .chip") : null;
    var row = chip && chip.closest("[data-lane]");
    return row ? { chip: chip, id: row.getAttribute("data-lane") } : null;
  }

  function open(lane, again) {
    laneSessions().then(function (byLane) {
      var sessionId = byLane[lane.id];
      if (sessionId) {
        window.parent.postMessage({ type: OPEN_SESSION, sessionId: sessionId }, window.location.origin);
      } else if (!again) {
        lanes = null; // a member who joined after the first read
        open(lane, true);
      }
    });
  }

  // Chips become buttons here only: outside DSH there is nowhere to open a conversation.
  function markChips(scope) {
    scope.querySelectorAll(".lane .name .chip").forEach(function (chip) {
      var row = chip.closest("[data-lane]");
      if (!row || row.getAttribute("data-lane") === "unassigned" || chip.hasAttribute("role")) return;
      chip.setAttribute("role", "button");
      chip.setAttribute("tabindex", "0");
      chip.setAttribute("title", "Open " + chip.textContent + "'s conversation in DSH");
      chip.style.cursor = "pointer";
    });
  }

  document.addEventListener("click", function (event) {
    var lane = laneOf(event.target);
    if (lane && lane.chip.getAttribute("role") === "button") open(lane);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" && event.key !== " ") return;
    var lane = laneOf(event.target);
    if (!lane || lane.chip.getAttribute("role") !== "button") return;
    event.preventDefault();
    open(lane);
  });
  markChips(document);
  document.addEventListener("htmx:afterSettle", function (event) {
    markChips(event.target instanceof Element ? event.target : document);
  });
})();
