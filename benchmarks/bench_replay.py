"""What replay costs: the server's answer to a cursor, a drag in real Chromium, and the
live polls while the cursor is set.

Generates a team (``--team``, as in ``bench_panel.py``), serves it with
``dsh-task-gantt serve`` in a child process and prints:

- the moment alone, in process: ``moment_at`` on the team's timeline (the pure function
  a cursor request runs once per timeline version and moment), and ``event_times``;
- a cursor request (``/panel/moment``, answered as the pieces that changed since the
  board the browser holds), timed from this process over loopback: a moment never
  asked for before ("cold") and the same moment asked again ("cached"), with the
  answer's size, for ``--moments`` moments spread over the team's history;
- a drag in headless Chromium (``/usr/bin/chromium``) at 400x900: the cursor's knob
  dragged across the chart in ``--drag-seconds`` x 60 pointer moves, sent as fast as
  the DevTools protocol takes them (about one a frame on an idle machine): the
  moment requests per second the panel sent, the main thread's busy share of a core
  (DevTools ``Performance.getMetrics``), and whether the rows shown at the end are
  those of where the drag ended;
- the live polls while the cursor is set, over ``--seconds`` while a ``LiveTeam``
  appends every 2 s: the body after an append (median, p90) and the busy share, to
  set beside ``bench_panel.py``'s figures for the same team without a cursor.

Figures only: nothing here asserts a time.

Run: ``python benchmarks/bench_replay.py [--team real|big|small] [--seconds 30]
[--moments 20] [--drag-seconds 3]``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_panel import (  # the same host, browser, appender and network log
    CHROMIUM,
    CHROMIUM_ARGS,
    PREFIX,
    LiveWindow,
    NetworkLog,
    cpu_metrics,
    kb,
    live_window,
    percentile,
    serving,
)
from teams import TEAMS, generate_recent_team

from dsh_task_gantt.board.moment import event_times, moment_at
from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec

#: The track width a 400 px sidebar reports (what the page sends as ``w``).
SIDEBAR_TRACK_PX = 290


def timed(call: Callable[[], Any], runs: int) -> tuple[float, Any]:
    """The median of ``runs`` calls, in ms, and the last result."""
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def board_token(html: str) -> str:
    found = re.search(r'id="board-token" name="b" value="([^"]*)"', html)
    if found is None:
        raise RuntimeError("the panel page carries no board token")
    return unescape(found.group(1))


def measure_server(
    base: str, session: str, moments: int, report: Callable[[str], None]
) -> list[int]:
    """The moment in process and a cursor request over loopback; the moments used."""
    with httpx.Client(timeout=120) as client:
        timeline = orjson.loads(
            client.get(f"{base}{PREFIX}/api/timeline?session={quote(session)}").content
        )
        pure_times, times = timed(lambda: event_times(timeline), 5)
        lo, hi = times[0], times[-1]
        chosen = [lo + (hi - lo) * (n + 1) // (moments + 1) for n in range(moments)]
        pure = [timed(lambda at=at: moment_at(timeline, at, times), 3)[0] for at in chosen]
        report(
            f"moment in process: moment_at median {statistics.median(pure):.2f} ms "
            f"(max {max(pure):.2f}) over {moments} moments; event_times "
            f"{pure_times:.2f} ms ({len(times):,} event times)"
        )
        page = client.get(
            f"{base}{PREFIX}/panel?session={quote(session)}&w={SIDEBAR_TRACK_PX}"
        ).text
        present = board_token(page)

        def url(at: int, token: str) -> str:
            return (
                f"{base}{PREFIX}/panel/moment?session={quote(session)}"
                f"&w={SIDEBAR_TRACK_PX}&at={at}&b={quote(token)}"
            )

        cold, cached, first_sizes = [], [], []
        for at in chosen:
            # From the present board (every row and name cell changes), as a first click.
            took, response = timed(lambda at=at: client.get(url(at, present)), 1)
            again, _ = timed(lambda at=at: client.get(url(at, present)), 3)
            cold.append(took)
            cached.append(again)
            first_sizes.append(len(response.content))
            if response.headers.get("X-Board-Delta") != "1":
                report(f"  (the answer at {at} was a whole board, not the changed pieces)")
        report(
            f"cursor request from the present (/panel/moment, loopback): a new moment median "
            f"{statistics.median(cold):.1f} ms (p90 {percentile([int(c) for c in cold], 0.9)} "
            f"ms), the same moment again {statistics.median(cached):.1f} ms; answer median "
            f"{kb(statistics.median(first_sizes))} (max {kb(max(first_sizes))})"
        )
        # Step by step, each answer against the board the last one left (as a drag does).
        step_times, step_sizes = [], []
        token = present
        for at in chosen:
            took, response = timed(lambda at=at, token=token: client.get(url(at + 7, token)), 1)
            token = board_token(response.text) if "board-token" in response.text else token
            step_times.append(took)
            step_sizes.append(len(response.content))
        report(
            f"cursor request from the moment before (a drag's next step): median "
            f"{statistics.median(step_times):.1f} ms; answer median "
            f"{kb(statistics.median(step_sizes))} (max {kb(max(step_sizes))})"
        )
    return chosen


def measure_browser(
    browser: Any,
    base: str,
    session: str,
    live: LiveTeam,
    start_at: int,
    drag_seconds: float,
    seconds: float,
    report: Callable[[str], None],
) -> None:
    net = NetworkLog()
    page = browser.new_page(viewport={"width": 400, "height": 900})
    net.attach(page)
    moments: list[str] = []
    answers: list[int] = []
    page.on("request", lambda r: moments.append(r.url) if "/panel/moment" in r.url else None)
    page.on(
        "requestfinished",
        lambda r: (
            answers.append(int(r.sizes()["responseBodySize"])) if "/panel/moment" in r.url else None
        ),
    )
    page.goto(f"{base}{PREFIX}/panel?session={quote(session)}&at={start_at}", timeout=120_000)
    net.settle(page)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    track = page.locator("#axis > .track").bounding_box()
    knob = page.locator("#cursor .cursor-knob").bounding_box()
    y = knob["y"] + knob["height"] / 2
    page.mouse.move(knob["x"] + knob["width"] / 2, y)
    page.mouse.down()
    steps = max(int(drag_seconds * 60), 2)
    moments.clear()
    answers.clear()
    before = cpu_metrics(cdp)
    wall = time.perf_counter()
    for n in range(steps):
        # As fast as the pointer events can be sent (a real drag sends one a frame).
        x = track["x"] + track["width"] * (0.1 + 0.8 * n / (steps - 1))
        page.mouse.move(x, y)
    page.mouse.up()
    wall = time.perf_counter() - wall
    after = cpu_metrics(cdp)
    sent = len(moments)
    net.settle(page)
    landed = page.evaluate(
        "(() => { const d = document.getElementById('moment-data');"
        " return [Number(document.getElementById('cursor').getAttribute('aria-valuenow')),"
        " d ? Number(d.dataset.at) : null]; })()"
    )

    drag = LiveWindow(wall, before, after, 0)
    report(
        f"drag at 400x900: {steps} pointer moves over {wall:.1f} s, {sent} moment requests "
        f"({sent / wall:.1f} per second; {len(moments) - sent} more after the drag), answers "
        f"median {kb(statistics.median(answers) if answers else 0)}; main thread busy "
        f"{drag.busy('TaskDuration'):.1f} % of one core (script "
        f"{drag.busy('ScriptDuration'):.1f} %, layout {drag.busy('LayoutDuration'):.1f} %, "
        f"style {drag.busy('RecalcStyleDuration'):.1f} %); rows at the end are those of "
        f"the cursor: {landed[0] == landed[1]}"
    )

    window = live_window(page, cdp, net, live, seconds)
    changed = [p.body_bytes for p in net.polls if p.status == 200]
    still = page.evaluate("document.getElementById('moment-data').dataset.at")
    page.close()
    report(
        f"live polls with the cursor set, {window.wall:.0f} s ({window.appends} appends): "
        f"{len(net.polls)} polls, {len(changed)} with changes; body after an append: median "
        f"{kb(statistics.median(changed) if changed else 0)}, p90 "
        f"{kb(percentile(changed, 0.9))}; main thread busy "
        f"{window.busy('TaskDuration'):.1f} % of one core; the cursor stayed "
        f"at its moment: {int(still) == landed[0]}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--team", choices=("real", "big", "small"), default="real")
    parser.add_argument("--seconds", type=float, default=30.0, help="live window")
    parser.add_argument("--moments", type=int, default=20, help="cursor requests timed")
    parser.add_argument("--drag-seconds", type=float, default=3.0)
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    import dsh_task_gantt

    def report(line: str) -> None:
        print(f"[{args.team}] {line}", flush=True)

    print(f"(code under test: {Path(dsh_task_gantt.__file__).parent})", flush=True)
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-replay-bench-"))
    try:
        root = work / "sessions"
        spec = generate_recent_team(root, TEAMS[args.team])
        report(f"team: {len(spec.tasks)} tasks, {len(spec.messages)} messages")
        spec.dump(work / "spec.json")
        live = LiveTeam(root, TeamSpec.load(work / "spec.json", root=str(root)))
        with serving(root) as server, sync_playwright() as pw:
            chosen = measure_server(server.base, spec.lead_id, args.moments, report)
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                measure_browser(
                    browser,
                    server.base,
                    spec.lead_id,
                    live,
                    chosen[len(chosen) // 2],
                    args.drag_seconds,
                    args.seconds,
                    report,
                )
            finally:
                browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
