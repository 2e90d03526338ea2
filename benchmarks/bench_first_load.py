"""Where the browser's part of the panel's first load goes: real Chromium, a Chrome trace.

Generates a team (``--team real|big|both``, the same teams as ``bench_panel.py``), serves
it with ``dsh-task-gantt serve`` in a child process as DSH starts it (the server reads the
latest team at start-up; the page is opened once its CPU is idle again, so the server
answers in a few ms and what is left is the browser's), and opens the panel in headless
Chromium (``/usr/bin/chromium``) at ``--width``x``--height`` ``--runs`` times, each on a
freshly started server and in a fresh page, with a Chrome trace running. For each run it
takes the renderer's main thread between the navigation's start and the load event (the
board's lanes are in the page itself: a page without them is an error) and prints the
medians of:

- the load: navigation start to the load event, and the Navigation Timing marks
  (response end, DOM interactive, DOMContentLoaded, load) and when the last static
  file had arrived;
- the main thread's busy time by kind, from the trace's events, for the run whose load
  time is the median (so that the kinds add up to its total): each event's own time
  (its length minus the events nested in it) goes to the kind of the nearest event
  that has one (parse HTML, parse CSS, style, layout, script, paint; other: the
  tasks' own bookkeeping, navigation and loading), and how much of style and layout a
  script forced (nested in a script event); the median busy time of all runs; and the
  same split in the thread's CPU time (``tdur``), which moves much less than the wall
  time when other processes share the cores;
- the page's bytes: the HTML, and each static file (decoded sizes);
- the DOM: elements, text nodes (and how many of them are only whitespace), the board's
  elements.

Figures only: nothing here asserts a time. The machine's load moves these by 2x; run
it more than once. ``--cold`` opens the page as soon as a server that read nothing
before (``serve --no-warm-up``) answers: the server's share is then in the load too.
``--again`` opens the panel once in the same browser profile before the traced load:
the browser then holds the files the page lets it keep (a panel opened again).

Run: ``python benchmarks/bench_first_load.py [--team real|big|both] [--runs 5] [--cold]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from bench_panel import serving, wait_until_idle  # the same child-process host
from screenshots import CHROMIUM, CHROMIUM_ARGS, PREFIX  # the same browser, same flags
from teams import TEAMS, generate_recent_team

#: The trace categories that hold the main thread's tasks and what they did.
TRACE_CATEGORIES = [
    "toplevel",
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "v8.execute",
    "blink.user_timing",
    "loading",
]

#: The kind of work each trace event is (the names DevTools' performance panel groups).
KINDS: dict[str, str] = {
    "ParseHTML": "parse HTML",
    "ParseAuthorStyleSheet": "parse CSS",
    "UpdateLayoutTree": "style",
    "RecalculateStyles": "style",
    "ScheduleStyleRecalculation": "style",
    "InvalidateLayout": "layout",
    "Layout": "layout",
    "EvaluateScript": "script",
    "v8.compile": "script",
    "v8.compileModule": "script",
    "v8.evaluateModule": "script",
    "v8.produceCache": "script",
    "FunctionCall": "script",
    "EventDispatch": "script",
    "TimerFire": "script",
    "FireIdleCallback": "script",
    "FireAnimationFrame": "script",
    "RunMicrotasks": "script",
    "XHRReadyStateChange": "script",
    "XHRLoad": "script",
    "MinorGC": "script",
    "MajorGC": "script",
    "V8.GC_SCAVENGER": "script",
    "Paint": "paint",
    "PrePaint": "paint",
    "Layerize": "paint",
    "PaintImage": "paint",
    "UpdateLayer": "paint",
    "UpdateLayerTree": "paint",
    "CompositeLayers": "paint",
    "Commit": "paint",
}
KIND_ORDER = ["parse HTML", "parse CSS", "style", "layout", "script", "paint", "other"]


@dataclass
class Span:
    """One trace event with a length on the main thread, and what is nested in it."""

    name: str
    start: float  # µs
    end: float
    #: The thread's CPU time over the event (µs; ``tdur``), when the trace has it: unlike
    #: the wall time it does not grow while other processes hold the cores.
    cpu: float | None = None
    children: list[Span] = field(default_factory=list)

    @property
    def own(self) -> float:
        return (self.end - self.start) - sum(c.end - c.start for c in self.children)

    def inside(self, lo: float, hi: float) -> float:
        """The share of the event's wall time that lies in [lo, hi]."""
        wall = self.end - self.start
        return max(0.0, min(self.end, hi) - max(self.start, lo)) / wall if wall > 0 else 1.0


def main_thread_spans(events: list[dict[str, Any]], pid: int, tid: int) -> list[Span]:
    """The thread's events with a length (complete ``X`` events and ``B``/``E`` pairs),
    nested by time: the roots are its tasks."""
    flat: list[Span] = []
    open_begins: list[dict[str, Any]] = []
    for e in sorted(
        (e for e in events if e.get("pid") == pid and e.get("tid") == tid), key=lambda e: e["ts"]
    ):
        if e.get("ph") == "X" and "dur" in e:
            flat.append(Span(e["name"], e["ts"], e["ts"] + e["dur"], e.get("tdur")))
        elif e.get("ph") == "B":
            open_begins.append(e)
        elif e.get("ph") == "E" and open_begins:
            begin = open_begins.pop()
            cpu = e["tts"] - begin["tts"] if "tts" in e and "tts" in begin else None
            flat.append(Span(begin["name"], begin["ts"], e["ts"], cpu))
    flat.sort(key=lambda s: (s.start, -(s.end - s.start)))
    roots: list[Span] = []
    stack: list[Span] = []
    for span in flat:
        while stack and span.start >= stack[-1].end:
            stack.pop()
        if stack and span.end <= stack[-1].end:
            stack[-1].children.append(span)
        else:
            # Clipped or overlapping oddly: a root of its own rather than lost.
            stack.clear()
            roots.append(span)
        stack.append(span)
    return roots


@dataclass
class Breakdown:
    ms: Counter[str] = field(default_factory=Counter)
    forced_ms: float = 0.0
    #: The same split in the thread's CPU time, of the events that carry one.
    cpu_ms: Counter[str] = field(default_factory=Counter)


def breakdown(roots: Iterable[Span], lo: float, hi: float) -> Breakdown:
    """Each span's own time (inside [lo, hi]) to the kind of its nearest kinded event;
    style and layout inside a script event are also counted as forced."""
    out = Breakdown()

    def walk(span: Span, kind: str, in_script: bool) -> None:
        kind = KINDS.get(span.name, kind)
        own = span.own if lo <= span.start and span.end <= hi else clipped_own(span, lo, hi)
        out.ms[kind] += own / 1000
        if span.cpu is not None:
            nested = sum((c.cpu or 0.0) * c.inside(lo, hi) for c in span.children)
            out.cpu_ms[kind] += max(0.0, span.cpu * span.inside(lo, hi) - nested) / 1000
        if in_script and kind in ("style", "layout"):
            out.forced_ms += own / 1000
        for child in span.children:
            walk(child, kind, in_script or kind == "script")

    for root in roots:
        if root.end > lo and root.start < hi:
            walk(root, "other", False)
    return out


def clipped_own(span: Span, lo: float, hi: float) -> float:
    def inside(s: Span) -> float:
        return max(0.0, min(s.end, hi) - max(s.start, lo))

    return inside(span) - sum(inside(c) for c in span.children)


def renderer_main(events: list[dict[str, Any]], url_part: str) -> tuple[int, int, float, float]:
    """The renderer main thread that loaded ``url_part``, and its navigation start and load
    event end (trace µs)."""
    nav = [
        e
        for e in events
        if e.get("name") == "navigationStart"
        and url_part in str(e.get("args", {}).get("data", {}).get("documentLoaderURL", ""))
    ]
    if not nav:
        raise RuntimeError("no navigationStart for the panel in the trace")
    start = nav[-1]
    pid, tid = start["pid"], start["tid"]
    ends = [
        e["ts"]
        for e in events
        if e.get("name") == "loadEventEnd" and e.get("pid") == pid and e["ts"] >= start["ts"]
    ]
    if not ends:
        raise RuntimeError("no loadEventEnd after the panel's navigation in the trace")
    return pid, tid, float(start["ts"]), float(min(ends))


PAGE_FACTS = """(sel) => {
  const nav = performance.getEntriesByType("navigation")[0].toJSON();
  const res = performance.getEntriesByType("resource")
    .map(r => [r.name, r.decodedBodySize, r.responseEnd]);
  const walker = document.createTreeWalker(document, NodeFilter.SHOW_TEXT);
  let text = 0, blank = 0;
  while (walker.nextNode()) { text++; if (!walker.currentNode.data.trim()) blank++; }
  const board = document.querySelector(sel);
  return {nav, res, text, blank,
          elements: document.getElementsByTagName("*").length,
          board: board ? board.getElementsByTagName("*").length : -1,
          lanes: board ? board.querySelectorAll(".lane").length : 0};
}"""


@dataclass
class Run:
    load_ms: float
    marks: dict[str, float]
    kinds: Breakdown
    html_bytes: int
    static_bytes: dict[str, int]
    elements: int
    text_nodes: int
    blank_text_nodes: int
    board_elements: int


def one_run(
    browser: Any, base: str, path: str, width: int, height: int, trace: Path, again: bool = False
) -> Run:
    context = browser.new_context(viewport={"width": width, "height": height})
    if again:  # the panel was open before in this browser: it holds what it may keep
        context.new_page().goto(base + path, wait_until="load", timeout=120_000)
    page = context.new_page()
    try:
        # A page in the renderer first, so the trace holds the panel's navigation whole.
        page.goto(base + PREFIX + "/static/colors.css")
        browser.start_tracing(page=page, path=str(trace), categories=TRACE_CATEGORIES)
        try:
            page.goto(base + path, wait_until="load", timeout=120_000)
        finally:
            browser.stop_tracing()
        facts = page.evaluate(PAGE_FACTS, "#board")
    finally:
        context.close()
    if not facts["lanes"]:
        raise RuntimeError("the first page came without the board's lanes")
    data = json.loads(trace.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    pid, tid, lo, hi = renderer_main(events, "/panel?")
    kinds = breakdown(main_thread_spans(events, pid, tid), lo, hi)
    nav = facts["nav"]
    marks = {
        "response end": nav["responseEnd"],
        "static files in": max((r[2] for r in facts["res"]), default=0.0),
        "DOM interactive": nav["domInteractive"],
        "DOMContentLoaded": nav["domContentLoadedEventStart"],
        "load": nav["loadEventEnd"],
    }
    return Run(
        load_ms=float(nav["loadEventEnd"] - nav["startTime"]),
        marks=marks,
        kinds=kinds,
        html_bytes=int(nav["decodedBodySize"]),
        static_bytes={
            name.rsplit("/", 1)[-1].split("?")[0]: int(size) for name, size, _ in facts["res"]
        },
        elements=int(facts["elements"]),
        text_nodes=int(facts["text"]),
        blank_text_nodes=int(facts["blank"]),
        board_elements=int(facts["board"]),
    )


def med(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


def report(name: str, runs: list[Run], width: int, height: int, cold: bool, again: bool) -> None:
    loads = [r.load_ms for r in runs]
    server = "truly cold server" if cold else "after start"
    if again:
        server += ", the browser had opened the panel before"
    print(
        f"[{name}] first load at {width}x{height} ({server}), "
        f"navigation start to load event: median {med(loads):.0f} ms "
        f"(runs: {', '.join(f'{v:.0f}' for v in loads)})"
    )
    print(
        f"[{name}]   marks (median ms): "
        + ", ".join(f"{k} {med(r.marks[k] for r in runs):.0f}" for k in runs[0].marks)
    )
    # One run's split (the median one by load time), so that the kinds add up to its total.
    typical = sorted(runs, key=lambda r: r.load_ms)[(len(runs) - 1) // 2]
    print(
        f"[{name}]   main thread busy until load (the median run, {typical.load_ms:.0f} ms): "
        f"{sum(typical.kinds.ms.values()):.0f} ms: "
        + ", ".join(f"{k} {typical.kinds.ms.get(k, 0.0):.0f}" for k in KIND_ORDER)
        + f"; of style and layout, forced by scripts {typical.kinds.forced_ms:.0f}"
    )
    print(
        f"[{name}]   main thread busy until load (median of the runs): "
        f"{med(sum(r.kinds.ms.values()) for r in runs):.0f} ms"
    )
    cpu = [sum(r.kinds.cpu_ms.values()) for r in runs]
    print(
        f"[{name}]   main thread CPU until load (median of the runs): {med(cpu):.0f} ms: "
        + ", ".join(f"{k} {med(r.kinds.cpu_ms.get(k, 0.0) for r in runs):.0f}" for k in KIND_ORDER)
        + " (each kind's median; the tasks' own bookkeeping has no CPU time in the trace)"
    )
    last = runs[-1]
    statics = sum(last.static_bytes.values())
    print(
        f"[{name}]   bytes: page {last.html_bytes / 1024:.1f} KB, static {statics / 1024:.1f} KB ("
        + ", ".join(f"{k} {v / 1024:.1f} KB" for k, v in last.static_bytes.items())
        + ")"
    )
    print(
        f"[{name}]   DOM: {last.elements:,} elements ({last.board_elements:,} in the board), "
        f"{last.text_nodes:,} text nodes ({last.blank_text_nodes:,} only whitespace), "
        f"{last.elements + last.text_nodes:,} nodes in all"
    )


def team(teams: Path, name: str) -> tuple[Path, str]:
    """The team's sessions root and lead id, generated unless ``teams`` already holds it
    (``--teams DIR`` keeps them between runs; the history then ends when it was made)."""
    root, lead = teams / name / "sessions", teams / name / "lead"
    if not lead.exists():
        started = time.perf_counter()
        lead.parent.mkdir(parents=True, exist_ok=True)
        lead.write_text(generate_recent_team(root, TEAMS[name]).lead_id)
        print(f"[{name}] team generated in {time.perf_counter() - started:.1f} s", flush=True)
    return root, lead.read_text()


def measure(browser: Any, name: str, args: argparse.Namespace, work: Path) -> None:
    root, lead_id = team(args.teams or work, name)
    path = f"{PREFIX}/panel?session={lead_id}"
    runs: list[Run] = []
    for _ in range(args.runs):
        # A fresh server each time: its first answers are part of a first load.
        with serving(root, warm_up=not args.cold) as server:
            if not args.cold:
                wait_until_idle(server.proc.pid)
            trace = work / "t.json"
            runs.append(
                one_run(browser, server.base, path, args.width, args.height, trace, args.again)
            )
    report(name, runs, args.width, args.height, args.cold, args.again)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--team", choices=("real", "big", "both", "small"), default="both")
    parser.add_argument("--runs", type=int, default=5, help="page loads (medians are printed)")
    parser.add_argument("--width", type=int, default=400)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument(
        "--cold", action="store_true", help="a fresh server per load, no start-up read"
    )
    parser.add_argument("--teams", type=Path, help="keep the generated teams here (reused)")
    parser.add_argument(
        "--again", action="store_true", help="the browser opened the panel before (its cache)"
    )
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    import dsh_task_gantt

    print(f"(code under test: {Path(dsh_task_gantt.__file__).parent})", flush=True)
    names = ["real", "big"] if args.team == "both" else [args.team]
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-first-load-"))
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for name in names:
                    measure(browser, name, args, work)
            finally:
                browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
