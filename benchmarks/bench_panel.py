"""What the live panel costs a browser: real Chromium, the real embedded host.

Generates a team, serves it with ``dsh-task-gantt serve`` (uvicorn, loopback) in a
child process, opens the panel in headless Chromium (``/usr/bin/chromium`` through
Playwright) and, while a ``LiveTeam`` appends real-format frames every 2 s, prints:

- poll bytes: the body of each poll that followed an append (median, p90) and of the
  unchanged polls (status 204 expected), counted on the browser's side (Playwright's
  request sizes, which come from the DevTools network events);
- busy: the browser main thread's busy share of one core while live, from the DevTools
  ``Performance.getMetrics`` deltas (TaskDuration; ScriptDuration, LayoutDuration and
  RecalcStyleDuration as the breakdown) over ``--seconds`` of live polling / wall time,
  and the server's CPU over the same window (from ``/proc``), per poll;
- DOM: elements in the whole document and inside the board, at each ``--widths``
  viewport, at the default zoom, zoomed fully out, at x2, x4, x8 and x16 (one click of
  the panel's zoom-in button each, in the middle of the history) and zoomed fully in
  (clicked until the view stops changing), and the most at any of them;
- first load: navigation start to the load event (Navigation Timing) of the panel page
  (which holds the board's lanes) on a freshly started server (median of
  ``--cold-runs`` servers), four ways: truly cold (``serve --no-warm-up`` with an
  empty lane cache folder, the page opened as soon as the server answers); a
  restarted server (the same, over the cache the truly cold server wrote when it was
  stopped); and after start (``serve`` as DSH starts it, reading the most recently
  written team at start-up, from an empty cache folder; the page opened once the
  server's CPU is idle again, and how long that took is printed); and the same start-up
  read after a restart, through the cache. Each with the server's CPU for the page and
  its assets (from ``/proc``).

Teams (``--team``), each its history in the hour before now, then live:

- ``real``: sized like the biggest real team: the fixture generator's large "full" team
  (a lead of ~19k lines, 9 lanes with logs) with ~360 messages and ~30 tasks;
- ``big``: the same with 5x the messages and 8x the tasks (long runs get there);
- ``big-deps``: ``big`` whose extra tasks wait on earlier ones (eight chains, a fan-in of
  three every tenth task; work finishes sooner) and share write scopes: dependencies
  drawn;
- ``small``: a small team, for the smoke test that keeps this script working.

Figures only: nothing here asserts a time. The board is found by ``BOARD_SELECTOR``
and the zoom by ``ZOOM_IN``/``ZOOM_OUT`` (with the ``+``/``-`` keys as a fallback), so
the script measures whatever board markup the checkout has.

The design before the live board was reworked (the whole board re-sent and re-swapped
on each poll after an append), measured with this script on the project's 2-core
machine while three other jobs shared it (two runs each; busy shares and load times
move a lot with the machine's load):

====================================  ==================  ==================
                                      real                big
====================================  ==================  ==================
poll body after an append (median)    1,083 KB            4,964-4,967 KB
unchanged poll                        204, no body        204, no body
main thread busy while live (400 px)  32-45 % of a core   81-87 % of a core
DOM elements at 400x900 (board)       6,005 (5,960)       25,755 (25,710)
... at 1280x800                       6,026               25,773
... zoomed fully in                   6,707               26,457
first load of a cold server           1,256-1,491 ms      4,626-6,420 ms
====================================  ==================  ==================

(Zoomed fully out is the default, fit-all, view. On the big team a poll takes longer
than 2 s, so the panel polls less often than every 2 s.)

Run: ``python benchmarks/bench_panel.py [--team real|big|both] [--seconds 30]
[--widths 400x900,1280x800] [--cold-runs 3]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from bench_timeline import Server, cpu_s  # the same child-process host
from screenshots import CHROMIUM, CHROMIUM_ARGS, PREFIX  # the same browser, same flags
from teams import TEAMS, TeamShape, generate_recent_team

from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec

#: The board: every element inside it is the board's cost.
BOARD_SELECTOR = "#board"
#: The panel's zoom controls (buttons); the keys are the fallback.
ZOOM_IN, ZOOM_OUT = "#zoom-in", "#zoom-out"
ZOOM_IN_KEY, ZOOM_OUT_KEY = "+", "-"
#: Enough clicks to go from an hour (or a day) to the panel's smallest window and back.
MAX_ZOOM_CLICKS = 20
#: Zooms reported between fit-all and fully in (each zoom-in click halves the window).
INTERMEDIATE_ZOOMS = (2, 4, 8, 16)
APPEND_EVERY_S = 2.0
#: A poll in flight is done when nothing was requested for this long.
QUIET_MS = 700


# ---------------------------------------------------------------------------
# the browser side


@dataclass
class Poll:
    status: int
    body_bytes: int


@dataclass
class NetworkLog:
    """Requests the page made after it loaded (xhr/fetch: the polls and their kin)."""

    in_flight: int = 0
    last_activity: float = field(default_factory=time.monotonic)
    polls: list[Poll] = field(default_factory=list)

    def attach(self, page: Any) -> None:
        page.on("request", self._started)
        page.on("requestfinished", self._finished)
        page.on("requestfailed", self._failed)

    def _started(self, request: Any) -> None:
        self.in_flight += 1
        self.last_activity = time.monotonic()

    def _finished(self, request: Any) -> None:
        self.in_flight -= 1
        self.last_activity = time.monotonic()
        if request.resource_type not in ("xhr", "fetch"):
            return
        response = request.response()
        sizes = request.sizes()
        self.polls.append(
            Poll(
                status=response.status if response is not None else 0,
                body_bytes=int(sizes["responseBodySize"]),
            )
        )

    def _failed(self, request: Any) -> None:
        self.in_flight -= 1
        self.last_activity = time.monotonic()

    def settle(self, page: Any, timeout_s: float = 30.0) -> None:
        """Wait until no request is in flight and none started for ``QUIET_MS``."""
        page.wait_for_timeout(150)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            quiet = (time.monotonic() - self.last_activity) * 1000
            if self.in_flight <= 0 and quiet >= QUIET_MS:
                return
            page.wait_for_timeout(50)


def dom_counts(page: Any) -> tuple[int, int]:
    counts = page.evaluate(
        """(sel) => {
            const board = document.querySelector(sel);
            return [document.getElementsByTagName("*").length,
                    board ? board.getElementsByTagName("*").length : -1];
        }""",
        BOARD_SELECTOR,
    )
    return int(counts[0]), int(counts[1])


def zoom_fully(
    page: Any,
    net: NetworkLog,
    selector: str,
    key: str,
    steps: dict[int, tuple[int, int]] | None = None,
) -> int:
    """Click a zoom control until neither the URL nor the board's size changes; each
    click halves (or doubles) the window, so ``steps`` gets the counts after click n at
    zoom 2**n."""
    clicks = 0
    before = (page.url, dom_counts(page))
    for _ in range(MAX_ZOOM_CLICKS):
        control = page.query_selector(selector)
        if control is not None and control.is_visible():
            control.click()
        else:
            page.keyboard.press(key)
        net.settle(page)
        clicks += 1
        after = (page.url, dom_counts(page))
        if steps is not None:
            steps[2**clicks] = after[1]
        if after == before:
            break
        before = after
    return clicks


def cpu_metrics(cdp: Any) -> dict[str, float]:
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return {m["name"]: float(m["value"]) for m in metrics}


def navigation_ms(page: Any) -> float:
    entry = page.evaluate("JSON.stringify(performance.getEntriesByType('navigation')[0].toJSON())")
    nav = json.loads(entry)
    return float(nav["loadEventEnd"] - nav["startTime"])


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def kb(n: float) -> str:
    return f"{n / 1024:.1f} KB" if n >= 1024 else f"{n:.0f} B"


@contextmanager
def serving(
    root: Path, *, warm_up: bool = False, cache_dir: Path | None = None
) -> Iterator[Server]:
    server = Server(root, warm_up=warm_up, cache_dir=cache_dir)
    try:
        yield server
    finally:
        server.stop()


def wait_until_idle(pid: int, timeout_s: float = 60.0) -> float:
    """Seconds until the server used under 10 ms of CPU in a quarter second: its
    start-up reading is over (how long a user must wait at least, after DSH started it)."""
    started = time.perf_counter()
    before = cpu_s(pid)
    while time.perf_counter() - started < timeout_s:
        time.sleep(0.25)
        now = cpu_s(pid)
        if now - before < 0.010:
            return time.perf_counter() - started - 0.25
        before = now
    return float("nan")


@dataclass
class FirstLoads:
    """One kind of first load over the cold runs: load times and the server's CPU."""

    loads: list[float] = field(default_factory=list)
    server_cpu_ms: list[float] = field(default_factory=list)
    #: Navigation start to the first contentful paint (whatever the page showed first).
    first_paints: list[float] = field(default_factory=list)

    def add(self, browser: Any, server: Server, path: str, width: int, height: int) -> None:
        before = cpu_s(server.proc.pid)
        load, first_paint = first_load(browser, server, path, width, height)
        self.loads.append(load)
        self.first_paints.append(first_paint)
        self.server_cpu_ms.append((cpu_s(server.proc.pid) - before) * 1000)

    def summary(self) -> str:
        return (
            f"{statistics.median(self.loads):.0f} ms (runs: "
            f"{', '.join(f'{v:.0f}' for v in self.loads)}); server CPU for the page and its "
            f"assets {statistics.median(self.server_cpu_ms):.0f} ms; first contentful paint "
            f"{statistics.median(self.first_paints):.0f} ms"
        )


def first_load(
    browser: Any, server: Server, path: str, width: int, height: int
) -> tuple[float, float]:
    """Navigation start to the load event; the board (its lanes) is in the page itself,
    so the load event is when it is drawn (checked: a page without lanes is an error).
    And navigation start to the first contentful paint (NaN when none was recorded)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(server.base + path, wait_until="load", timeout=120_000)
        if not page.evaluate(f"document.querySelectorAll('{BOARD_SELECTOR} .lane').length"):
            raise RuntimeError("the first page came without the board's lanes")
        first_paint = page.evaluate(
            "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime"
        )
        return navigation_ms(page), float("nan") if first_paint is None else float(first_paint)
    finally:
        page.close()


class Appender:
    """A ``LiveTeam`` tick every ``APPEND_EVERY_S`` on a thread, at wall-clock time."""

    def __init__(self, live: LiveTeam) -> None:
        self.live = live
        self.ticks = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.live.tick(int(time.time() * 1000))
            self.ticks += 1
            self._stop.wait(APPEND_EVERY_S)

    def __enter__(self) -> Appender:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


@dataclass
class LiveWindow:
    """The browser's CPU metrics at both ends of a live window, and its length."""

    wall: float
    before: dict[str, float]
    after: dict[str, float]
    appends: int
    #: The server's CPU seconds over the window (0 when no server pid was given).
    server_cpu: float = 0.0

    def busy(self, metric: str) -> float:
        """The metric's share of one core over the window, in %."""
        return (self.after.get(metric, 0.0) - self.before.get(metric, 0.0)) / self.wall * 100


def live_window(
    page: Any,
    cdp: Any,
    net: NetworkLog,
    live: LiveTeam,
    seconds: float,
    server_pid: int | None = None,
) -> LiveWindow:
    """``seconds`` of live polling while ``live`` is appended to every 2 s; ``net.polls``
    then holds that window's polls."""
    net.polls.clear()
    with Appender(live) as appender:
        page.wait_for_timeout(1000)  # the first tick's poll is underway
        net.polls.clear()
        before = cpu_metrics(cdp)
        server_cpu = cpu_s(server_pid) if server_pid is not None else 0.0
        wall = time.perf_counter()
        page.wait_for_timeout(seconds * 1000)
        after = cpu_metrics(cdp)
        wall = time.perf_counter() - wall
        if server_pid is not None:
            server_cpu = cpu_s(server_pid) - server_cpu
    return LiveWindow(wall, before, after, appender.ticks, server_cpu)


def measure_team(
    browser: Any,
    name: str,
    shape: TeamShape,
    widths: list[tuple[int, int]],
    seconds: float,
    cold_runs: int,
    report: Callable[[str], None],
    live_no_cache: bool = False,
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-panel-bench-"))
    figures: dict[str, Any] = {}
    try:
        root = work / "sessions"
        started = time.perf_counter()
        spec = generate_recent_team(root, shape)
        lanes = sum(1 for m in spec.members if m.rel_path is not None)
        report(
            f"[{name}] team: lead {spec.lead.line_count} lines, {lanes} member logs, "
            f"{len(spec.tasks)} tasks, {len(spec.messages)} messages, "
            f"{len(spec.human_prompts)} prompts, history "
            f"{(spec.last_event_time - spec.start_ms) / 60000:.0f} min up to "
            f"{(time.time() * 1000 - spec.last_event_time) / 1000:.0f} s ago "
            f"(generated in {time.perf_counter() - started:.1f} s)"
        )
        panel_path = f"{PREFIX}/panel?session={spec.lead_id}"
        width, height = widths[0]

        cold, restarted, after_start = FirstLoads(), FirstLoads(), FirstLoads()
        restarted_after_start = FirstLoads()
        warm_waits, restarted_waits = [], []
        for run in range(cold_runs):
            # Truly cold: no start-up read, an empty cache folder, the page opened at once.
            # Stopping it writes its cache, as a server DSH stops does.
            cache = work / f"cache-{run}"
            with serving(root, cache_dir=cache) as server:
                cold.add(browser, server, panel_path, width, height)
            # DSH restarted (or the machine rebooted): a new server over the cache the
            # earlier one wrote, no start-up read, the page opened at once.
            with serving(root, cache_dir=cache) as server:
                restarted.add(browser, server, panel_path, width, height)
            # The same as DSH runs it: the start-up read, now through that cache.
            with serving(root, warm_up=True, cache_dir=cache) as server:
                restarted_waits.append(wait_until_idle(server.proc.pid))
                restarted_after_start.add(browser, server, panel_path, width, height)
            # What a user of DSH got before the cache (and gets on a team it never read):
            # the server read the team written last at start-up, from an empty cache
            # folder, and the panel is opened once that reading is over.
            with serving(root, warm_up=True, cache_dir=work / f"cache-warm-{run}") as server:
                warm_waits.append(wait_until_idle(server.proc.pid))
                after_start.add(browser, server, panel_path, width, height)
        figures["first_load_ms"] = statistics.median(cold.loads)
        figures["first_load_restarted_ms"] = statistics.median(restarted.loads)
        figures["first_load_after_start_ms"] = statistics.median(after_start.loads)
        report(
            f"[{name}] first load of a truly cold server (started with --no-warm-up and an "
            f"empty cache folder, opened at once) at {width}x{height} (navigation start to "
            f"load event, median of {cold_runs}): {cold.summary()}"
        )
        report(
            f"[{name}] first load of a restarted server (the cache written by an earlier "
            f"server, --no-warm-up, opened at once): {restarted.summary()}"
        )
        report(
            f"[{name}] first load after start (an empty cache folder; the server read the "
            f"latest team at start-up, {statistics.median(warm_waits):.1f} s, then the panel "
            f"was opened): {after_start.summary()}"
        )
        report(
            f"[{name}] first load after a restart (the cache written by an earlier server; "
            f"the start-up read through it took {statistics.median(restarted_waits):.1f} s, "
            f"then the panel was opened): {restarted_after_start.summary()}"
        )

        spec.dump(work / "spec.json")
        live = LiveTeam(root, TeamSpec.load(work / "spec.json", root=str(root)))
        # The live server keeps its lane cache as a real one does (written off the
        # request path), unless --live-no-cache asks for the figures without it.
        live_cache = None if live_no_cache else work / "cache-live"
        with serving(root, cache_dir=live_cache) as server:
            for w, h in widths:
                net = NetworkLog()
                page = browser.new_page(viewport={"width": w, "height": h})
                net.attach(page)
                page.goto(server.base + panel_path, wait_until="load", timeout=120_000)
                net.settle(page)
                default = dom_counts(page)
                zoom_fully(page, net, ZOOM_OUT, ZOOM_OUT_KEY)
                out = dom_counts(page)
                steps: dict[int, tuple[int, int]] = {}
                clicks = zoom_fully(page, net, ZOOM_IN, ZOOM_IN_KEY, steps)
                inn = dom_counts(page)
                figures[f"dom_{w}x{h}"] = {"default": default, "out": out, "in": inn}
                figures[f"dom_max_{w}x{h}"] = max(
                    c[0] for c in (default, out, inn, *steps.values())
                )
                report(
                    f"[{name}] DOM elements at {w}x{h}, document (board): default "
                    f"{default[0]:,} ({default[1]:,}); zoomed out {out[0]:,} ({out[1]:,}); "
                    + "; ".join(
                        f"x{z} {steps[z][0]:,} ({steps[z][1]:,})"
                        for z in INTERMEDIATE_ZOOMS
                        if z in steps
                    )
                    + f"; zoomed in ({clicks} clicks) {inn[0]:,} ({inn[1]:,}); "
                    f"most at any zoom {figures[f'dom_max_{w}x{h}']:,}"
                )
                page.close()

            net = NetworkLog()
            page = browser.new_page(viewport={"width": width, "height": height})
            net.attach(page)
            page.goto(server.base + panel_path, wait_until="load", timeout=120_000)
            net.settle(page)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            window = live_window(page, cdp, net, live, seconds, server.proc.pid)
            wall = window.wall
            server_cpu = window.server_cpu
            # Quiet: no more appends; the polls now find nothing new.
            live_polls = list(net.polls)
            net.polls.clear()
            page.wait_for_timeout(7_000)
            quiet_polls = net.polls[1:]  # the first may still carry the last append
            page.close()

            busy = window.busy
            changed = [p.body_bytes for p in live_polls if p.status == 200]
            unchanged = [p for p in live_polls + quiet_polls if p.status != 200]
            statuses = sorted({p.status for p in unchanged})
            figures["poll_median"] = statistics.median(changed) if changed else float("nan")
            figures["poll_p90"] = percentile(changed, 0.9)
            figures["busy"] = busy("TaskDuration")
            report(
                f"[{name}] polls while live for {wall:.0f} s ({window.appends} appends): "
                f"{len(live_polls)} polls, {len(changed)} with a new board; body after an "
                f"append: median {kb(figures['poll_median'])}, p90 {kb(figures['poll_p90'])}"
            )
            report(
                f"[{name}] unchanged polls: {len(unchanged)}, statuses {statuses}, bodies "
                f"{kb(max((p.body_bytes for p in unchanged), default=0))} at most"
            )
            figures["server_cpu_per_poll_ms"] = server_cpu * 1000 / max(len(live_polls), 1)
            report(
                f"[{name}] server CPU while live: {server_cpu / wall * 100:.1f} % of one core, "
                f"{figures['server_cpu_per_poll_ms']:.1f} ms per poll ({len(live_polls)} polls; "
                "the appends are written by this script, not the server; lane cache "
                f"{'off' if live_no_cache else 'on'})"
            )
            report(
                f"[{name}] main thread busy while live at {width}x{height}: "
                f"{figures['busy']:.1f} % of one core (script {busy('ScriptDuration'):.1f} %, "
                f"layout {busy('LayoutDuration'):.1f} %, style "
                f"{busy('RecalcStyleDuration'):.1f} %)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return figures


def parse_widths(text: str) -> list[tuple[int, int]]:
    sizes = []
    for part in text.split(","):
        w, _, h = part.strip().partition("x")
        sizes.append((int(w), int(h or 900)))
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--team", choices=("real", "big", "big-deps", "both", "small"), default="both"
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="live window (>= 30 s)")
    parser.add_argument("--widths", default="400x900,1280x800", help="viewports WxH, first: live")
    parser.add_argument("--cold-runs", type=int, default=3, help="fresh servers for first load")
    parser.add_argument(
        "--live-no-cache",
        action="store_true",
        help="serve the live part without the lane cache (the figures before it)",
    )
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    import dsh_task_gantt

    print(f"(code under test: {Path(dsh_task_gantt.__file__).parent})", flush=True)
    # The big team with and without dependencies drawn (phases, chips, links, overlaps).
    names = ["real", "big", "big-deps"] if args.team == "both" else [args.team]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name in names:
                measure_team(
                    browser,
                    name,
                    TEAMS[name],
                    parse_widths(args.widths),
                    args.seconds,
                    args.cold_runs,
                    lambda line: print(line, flush=True),
                    args.live_no_cache,
                )
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
