// Start page: the first answer lists every team from its logs' headers; this fills each
// card with its summary (GET data-card-url, an HTML fragment rendered and escaped by the
// server) as it scrolls into view, filters the cards, and keeps the live badges current.
// No inline script: the page's CSP is 'self'.
"use strict";
(function () {
  const format = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
  // Each <time data-ms> in the reader's local time zone (the server renders UTC,
  // which stays as the tooltip).
  function localTimes(root) {
    for (const el of root.querySelectorAll("time[data-ms]")) {
      const ms = Number(el.dataset.ms);
      if (!Number.isFinite(ms)) continue;
      const when = new Date(ms);
      el.dateTime = when.toISOString();
      el.textContent = format.format(when);
    }
  }
  localTimes(document);

  const main = document.querySelector("main");
  const filter = document.getElementById("team-filter");
  const liveOnly = document.getElementById("live-only");
  const status = document.getElementById("filter-status");
  const noMatch = document.getElementById("no-match");
  const singles = document.getElementById("singles");
  if (!main || !filter || !liveOnly) return; // the empty root: nothing to fill

  // Summaries are built one log at a time on the server: two requests in flight keep it
  // busy without queueing a burst behind a card the reader has scrolled past.
  const IN_FLIGHT = 2;
  const LIVE_POLL_MS = 5000;
  const queue = [];
  const queued = new Set();
  let running = 0;

  const cards = () => main.querySelectorAll("li.team");
  const isPending = (card) => card.getAttribute("aria-busy") === "true";
  const cardFor = (lead) => main.querySelector(`li.team[data-lead="${CSS.escape(lead)}"]`);

  function enqueue(card, first) {
    const lead = card.dataset.lead;
    if (!lead || !card.dataset.cardUrl || queued.has(lead)) return;
    queued.add(lead);
    if (first) queue.unshift(lead);
    else queue.push(lead);
    pump();
  }

  function pump() {
    while (running < IN_FLIGHT && queue.length) {
      const lead = queue.shift();
      running += 1;
      fill(lead).finally(() => {
        running -= 1;
        queued.delete(lead);
        pump();
      });
    }
  }

  async function fill(lead) {
    const card = cardFor(lead);
    if (!card) return;
    let html;
    try {
      const answer = await fetch(card.dataset.cardUrl, { credentials: "same-origin" });
      if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
      html = await answer.text();
    } catch (error) {
      failed(cardFor(lead), error);
      return;
    }
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    const fresh = template.content.querySelector("li.team");
    const current = cardFor(lead);
    if (!fresh || !current) return;
    const focused = current.contains(document.activeElement);
    current.replaceWith(fresh);
    localTimes(fresh);
    if (focused) fresh.querySelector("a").focus();
    apply();
  }

  // Said on the card, not left as a card that waits forever.
  function failed(card, error) {
    if (!card) return;
    card.setAttribute("aria-busy", "false");
    card.classList.remove("is-pending");
    const badge = card.querySelector(".badge");
    if (badge) {
      badge.className = "badge failed";
      badge.textContent = "no summary";
    }
    const subject = card.querySelector(".subject");
    if (subject) {
      subject.textContent = `Summary could not be loaded (${error.message || error})`;
      subject.classList.add("warn");
    }
    apply();
  }

  const seen = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      seen.unobserve(entry.target);
      if (isPending(entry.target)) enqueue(entry.target, false);
    }
  }, { rootMargin: "300px 0px" });
  for (const card of cards()) if (isPending(card)) seen.observe(card);

  function counted(shown, total, noun, active) {
    const plural = total === 1 ? noun : `${noun}s`;
    return active ? `${shown} of ${total} ${plural}` : `${total} ${plural}`;
  }

  // Show the cards that match every word of the filter (and are live, when asked);
  // while a filter is on, every card still waiting is fetched so that it can match.
  function apply() {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    const onlyLive = liveOnly.checked;
    const active = words.length > 0 || onlyLive;
    const tally = { teams: [0, 0], singles: [0, 0] };
    let waiting = 0;
    for (const card of cards()) {
      const text = card.dataset.search || "";
      const pending = isPending(card);
      const match =
        !active ||
        (!pending && words.every((w) => text.includes(w)) && (!onlyLive || card.dataset.live === "true"));
      card.hidden = !match;
      const kind = singles && singles.contains(card) ? "singles" : "teams";
      tally[kind][1] += 1;
      if (match) tally[kind][0] += 1;
      if (active && pending) {
        waiting += 1;
        enqueue(card, false);
      }
    }
    for (const section of main.querySelectorAll("section.workspace")) {
      section.hidden = !section.querySelector("li.team:not([hidden])");
    }
    if (singles) {
      singles.querySelector(".count").textContent = active
        ? `${tally.singles[0]} of ${tally.singles[1]}`
        : `${tally.singles[1]}`;
    }
    const parts = [counted(tally.teams[0], tally.teams[1], "team", active)];
    if (singles) parts.push(counted(tally.singles[0], tally.singles[1], "single session", active));
    if (waiting) parts.push(`reading ${waiting} more…`);
    status.textContent = active ? `Showing ${parts.join(", ")}` : "";
    noMatch.hidden = !(active && !waiting && tally.teams[0] + tally.singles[0] === 0);
  }

  filter.addEventListener("input", apply);
  liveOnly.addEventListener("change", apply);

  const visibleLinks = () =>
    Array.from(main.querySelectorAll("li.team:not([hidden]) a.team-link")).filter(
      (a) => a.offsetParent !== null,
    );

  // "/" finds, Escape clears, the arrow keys walk the cards shown.
  document.addEventListener("keydown", (event) => {
    const typing = event.target instanceof HTMLInputElement && event.target.type !== "checkbox";
    if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      filter.focus();
      filter.select();
      return;
    }
    if (event.key === "Escape" && event.target === filter) {
      filter.value = "";
      apply();
      return;
    }
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const links = visibleLinks();
    if (!links.length) return;
    const at = links.indexOf(document.activeElement);
    if (event.target === filter) {
      if (event.key !== "ArrowDown") return;
      event.preventDefault();
      links[0].focus();
    } else if (at >= 0) {
      event.preventDefault();
      const next = event.key === "ArrowDown" ? at + 1 : at - 1;
      if (next < 0) filter.focus();
      else links[Math.min(next, links.length - 1)].focus();
    }
  });

  // The live badges: the server answers for the summarised teams from a listing of the
  // root, asking the timeline again only for a team whose logs changed; a card whose
  // state changed is fetched again.
  async function pollLive() {
    if (document.hidden) return;
    let states;
    try {
      const answer = await fetch(main.dataset.liveUrl, { credentials: "same-origin" });
      if (!answer.ok) return;
      states = (await answer.json()).live || {};
    } catch (error) {
      return; // the next poll tries again
    }
    for (const [lead, live] of Object.entries(states)) {
      const card = cardFor(lead);
      if (card && !isPending(card) && card.dataset.live !== String(live)) enqueue(card, true);
    }
  }
  setInterval(pollLive, LIVE_POLL_MS);
  apply();
})();
