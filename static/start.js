// Start page: the first answer lists every team from its logs' headers; this fills each
// card with its summary (GET data-card-url, an HTML fragment rendered and escaped by the
// server) as it scrolls into view, filters the cards, and polls the server for where
// every card goes: live teams move first, new teams and single sessions appear, and a
// card whose team changed is fetched again. No inline script: the page's CSP is 'self'.
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
  const tools = document.querySelector(".tools");
  const empty = document.getElementById("empty");
  const summary = document.getElementById("summary");
  if (!main || !filter || !liveOnly || !singles || !tools || !empty || !summary) return;

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

  // A card's own URL, or (a team this page has no card for yet) the page's card URL.
  const urlFor = (lead) => {
    const card = cardFor(lead);
    if (card && card.dataset.cardUrl) return card.dataset.cardUrl;
    return `${main.dataset.cardUrl}?session=${encodeURIComponent(lead)}`;
  };

  function enqueue(lead, first) {
    if (!lead || queued.has(lead)) return;
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
    let html;
    try {
      const answer = await fetch(urlFor(lead), { credentials: "same-origin" });
      if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
      html = await answer.text();
    } catch (error) {
      failed(cardFor(lead), error);
      return;
    }
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    const fresh = template.content.querySelector("li.team");
    if (!fresh) return;
    const current = cardFor(lead);
    if (current) {
      const focused = current.contains(document.activeElement);
      current.replaceWith(fresh);
      if (focused) fresh.querySelector("a").focus();
    } else {
      // A team that appeared while the page was open: into its list, then into place.
      const list = listFor(lead);
      if (!list) return;
      list.append(fresh);
      arrange();
    }
    localTimes(fresh);
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
      if (isPending(entry.target)) enqueue(entry.target.dataset.lead, false);
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
        enqueue(card.dataset.lead, false);
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

  // Where every card goes, as the server last said: {groups: [{workspace, name, leads}],
  // singles: [leads], live: {lead: bool}, stamps: {lead: version}, summary}.
  let placed = null;

  function listFor(lead) {
    if (!placed) return null;
    if (placed.singles.includes(lead)) return singles.querySelector("ul.teams");
    const group = placed.groups.find((g) => g.leads.includes(lead));
    return group ? sectionFor(group).querySelector("ul.teams") : null;
  }

  function sectionFor(group) {
    for (const section of main.querySelectorAll("section.workspace")) {
      if (section.dataset.workspace === group.workspace) return section;
    }
    // A new workspace: the same markup as the server's, its texts set as text.
    const section = document.createElement("section");
    section.className = "workspace";
    section.dataset.workspace = group.workspace;
    const heading = document.createElement("h2");
    heading.title = group.workspace;
    const name = document.createElement("span");
    name.className = "ws-name";
    name.textContent = group.name;
    const path = document.createElement("span");
    path.className = "ws-path";
    path.textContent = group.workspace;
    heading.append(name, " ", path);
    const list = document.createElement("ul");
    list.className = "teams";
    section.append(heading, list);
    main.insertBefore(section, singles);
    return section;
  }

  // Moving a focused card would drop its focus: put it back.
  function moving(move) {
    const focused = document.activeElement;
    move();
    if (focused && focused !== document.activeElement && main.contains(focused)) {
      focused.focus({ preventScroll: true });
    }
  }

  // Each list's cards in the server's order (only the ones out of place move); the
  // workspaces in the order of their first team.
  function order(list, leads) {
    let at = list.firstElementChild;
    for (const lead of leads) {
      const card = cardFor(lead);
      if (!card) continue;
      if (card === at) {
        at = at.nextElementSibling;
        continue;
      }
      moving(() => list.insertBefore(card, at));
    }
  }

  function arrange() {
    if (!placed) return;
    let previous = empty;
    for (const group of placed.groups) {
      const section = sectionFor(group);
      if (previous.nextElementSibling !== section) {
        moving(() => main.insertBefore(section, previous.nextElementSibling));
      }
      previous = section;
      order(section.querySelector("ul.teams"), group.leads);
    }
    order(singles.querySelector("ul.teams"), placed.singles);
    const any = placed.groups.length > 0 || placed.singles.length > 0;
    empty.hidden = any;
    tools.hidden = !any;
    singles.hidden = placed.singles.length === 0;
    summary.textContent = placed.summary ? `${placed.summary} · ` : "";
  }

  async function poll() {
    if (document.hidden) return;
    let answer;
    try {
      const response = await fetch(main.dataset.liveUrl, { credentials: "same-origin" });
      if (!response.ok) return;
      answer = await response.json();
    } catch (error) {
      return; // the next poll tries again
    }
    placed = {
      groups: Array.isArray(answer.groups) ? answer.groups : [],
      singles: Array.isArray(answer.singles) ? answer.singles : [],
      summary: typeof answer.summary === "string" ? answer.summary : "",
    };
    arrange();
    // New teams are fetched at once (they are what the reader is waiting for); a
    // summarised card whose team changed, again.
    for (const lead of [...placed.groups.flatMap((g) => g.leads), ...placed.singles]) {
      if (!cardFor(lead)) enqueue(lead, true);
    }
    const live = answer.live || {};
    const stamps = answer.stamps || {};
    for (const [lead, stamp] of Object.entries(stamps)) {
      const card = cardFor(lead);
      if (!card || isPending(card)) continue;
      if (card.dataset.stamp !== stamp || card.dataset.live !== String(live[lead])) {
        enqueue(lead, true);
      }
    }
    apply();
  }
  // One poll at a time, the next one LIVE_POLL_MS after the last one ended: answers
  // never overlap, so a slow older answer cannot arrive last and move cards back.
  async function pollThenWait() {
    try {
      await poll();
    } finally {
      setTimeout(pollThenWait, LIVE_POLL_MS);
    }
  }
  setTimeout(pollThenWait, LIVE_POLL_MS);
  apply();
})();
