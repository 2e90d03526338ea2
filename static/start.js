// Start page: show each <time data-ms> in the reader's local time zone (the server
// renders UTC, which stays as the tooltip). No inline script: the page's CSP is 'self'.
"use strict";
(function () {
  const format = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
  for (const el of document.querySelectorAll("time[data-ms]")) {
    const ms = Number(el.dataset.ms);
    if (!Number.isFinite(ms)) continue;
    const when = new Date(ms);
    el.dateTime = when.toISOString();
    el.textContent = format.format(when);
  }
})();
