"""A delta poll after an append, after a day of history: what it costs, in process.

Generates the big team (``teams.py``) with ``--hours`` of appends written before it at
the real rate (``bench_soak.prewrite``: a ``LiveTeam`` tick every 2 s, timestamped in
the past), then, in this process, serves it with the embedded host (starlette's
``TestClient``: the app and this loop share the process, so ``time.process_time``
counts the server's CPU and the client's, which is small), the collector and the
allocator set as ``serve`` sets them (``pace_for_serving``, ``map_large_blocks``). It
opens the panel as each kind of poller does (``bench_soak.KINDS``: 400 px and 1280 px
following now), takes the ``v``/``drawn``/``b`` its answer carries, then for
``--ticks`` ticks:

- one ``LiveTeam`` append (timestamped now; the writer draws from a random stream of
  its own, not the history's: see ``resumed_seed``);
- the delta board poll each kind sends (``bench_soak.board_params``, ``HX-Request``):
  the 400 px one first (it pays for reading the append and building the timeline), the
  1280 px one next (the timeline is built: only its board);
- an unchanged poll (400 px again, holding the answer it just had: a 204).

It prints per kind the CPU and the wall time (p50, p99, max, in ms) and, with
``--profile``, a cProfile of the delta polls (cumulative, the top ``--profile-lines``;
``--profile-callers NAME``: the callers of the functions matching ``NAME`` too). With
``--breakdown``, the CPU of each stage of a poll (the timeline's build and its parts,
the board's plan, lane rows, lane markup, finish, pieces, answer; each inclusive of
what it calls, see ``STAGES``) per kind, p50 and p99, and the garbage collector's
passes and time (``gc.callbacks``), and the slowest ticks stage by stage: cheap
wrappers, not a profiler, so a tick's figures are its own.

``--root DIR`` keeps the generated dataset there (the team, its spec after the
history) and reuses it on later runs: each run appends to a scratch copy, so the
dataset stays as generated. Writing 24 hours takes a few tens of seconds. A reused
dataset's history ends when it was generated: the ticks are timestamped now, after a
gap (no member ran in between).

``--grow`` appends the ``--hours`` of history while the server reads it instead (the
soak's four poller kinds and a ``since`` polling every ``--grow-poll-every`` appends,
as the compressed soak's pollers do): the state a server fed its day append by append
holds, each object made when its append was read, not in one pass at start-up. A day
takes about 8 minutes.

The machine this runs on in the project is shared (2 cores, other jobs): CPU time
(``process_time``) is the figure; the wall time is noisier. Nothing here asserts.

Run: ``python benchmarks/bench_delta_day.py [--hours 24] [--ticks 60] [--root DIR]
[--team big] [--profile] [--breakdown] [--api] [--grow]``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import cProfile
import gc
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_soak import (
    _INPUT,
    APPEND_EVERY_MS,
    KINDS,
    PREFIX,
    PollerKind,
    board_params,
    pct,
    prewrite,
    raw_log_bytes,
    tick_kind,
    unescape,
)
from teams import HOUR_MS, TEAMS, generate_recent_team

from dsh_task_gantt.allocator import map_large_blocks
from dsh_task_gantt.collector import pace_for_serving
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec

#: The kinds measured: following now, 400 px and 1280 px.
FOLLOWING = tuple(k for k in KINDS if k.follow and not k.list_open and not k.replay)
SPEC = "spec.json"
MADE = "made.json"


def dataset(root: Path, team: str, hours: float, grow: bool = False) -> Path:
    """``root``'s dataset of ``team`` with ``hours`` of history, generated there once
    (``made.json`` says which): the folder holding ``sessions/`` and ``spec.json``.
    ``grow``: the team ends ``hours`` before now and the history is not written (the
    measuring run appends it while the server reads it)."""
    made = root / MADE
    want: dict[str, Any] = {"team": team, "hours": hours, **({"grow": True} if grow else {})}
    if made.exists() and json.loads(made.read_text()) == want:
        return root
    if root.exists():
        shutil.rmtree(root)
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    span = round(hours * HOUR_MS)
    t0 = time.monotonic()
    spec = generate_recent_team(sessions, TEAMS[team], ends_ms=int(time.time() * 1000) - span)
    print(f"generated the {team} team in {time.monotonic() - t0:.0f} s", flush=True)
    live = LiveTeam(sessions, spec)
    if span and not grow:
        prewrite(live, spec.last_event_time, span)
    live.spec().dump(root / SPEC)
    made.write_text(json.dumps(want))
    return root


def resumed_seed(spec: TeamSpec) -> int:
    """The measuring writer's random stream: not the one that wrote the history. A
    ``LiveTeam`` seeds itself from its spec, so one made again on the dataset replayed
    the history's first ticks' draws, message and prompt ids included: each new message
    took the id of one sent a day before, whose span then changed (a delivery paired by
    id), and every append re-read a lane from that old span on (a real team's ids are
    never reused; the 400 px p99 was those appends)."""
    return spec.seed * 7919 + 2


#: The stages ``--breakdown`` times: (name, module, attribute: a function the module
#: calls by that name, or Class.method). Each is inclusive of the stages it calls.
STAGES: tuple[tuple[str, str, str], ...] = (
    ("fold_new", "dsh_task_gantt.service", "TimelineService._fold_new"),
    ("change_key", "dsh_task_gantt.service", "_change_key"),
    ("build_timeline", "dsh_task_gantt.service", "build_timeline"),
    (" draw_turns", "dsh_task_gantt.timeline.model", "draw_turns"),
    (" draw_prompts", "dsh_task_gantt.timeline.model", "draw_prompts"),
    (" draw_messages", "dsh_task_gantt.timeline.model", "draw_messages"),
    (" place_tasks", "dsh_task_gantt.timeline.model", "place_tasks"),
    (" lane_tokens", "dsh_task_gantt.timeline.model", "lane_tokens"),
    (" time_range", "dsh_task_gantt.timeline.shaping", "time_range"),
    ("  sorted_spans", "dsh_task_gantt.timeline.liveness", "sorted_spans"),
    ("   _resorted", "dsh_task_gantt.timeline.spans", "_resorted"),
    ("    identity_changes", "dsh_task_gantt.timeline.spans", "identity_changes"),
    ("   span_order", "dsh_task_gantt.timeline.spans", "_span_order"),
    (" lane_json", "dsh_task_gantt.timeline.shaping", "_lane_json"),
    ("wire_encode", "dsh_task_gantt.wire", "Encoder.encode"),
    ("task_versions", "dsh_task_gantt.panel", "_task_versions"),
    ("plan_board", "dsh_task_gantt.panel", "plan_board"),
    ("lane_row", "dsh_task_gantt.board.view_model", "BoardPlan.lane_row"),
    (" chunk_lane", "dsh_task_gantt.board.view_model", "chunk_lane"),
    ("  lay_chunk", "dsh_task_gantt.board.detail", "_lay_chunk"),
    ("   group_turns", "dsh_task_gantt.board.detail", "group_turns"),
    ("   place_marks", "dsh_task_gantt.board.detail", "place_marks"),
    (" lane_messages", "dsh_task_gantt.board.view_model", "lane_messages"),
    ("lane_pieces", "dsh_task_gantt.panel", "Panel._lane_pieces"),
    ("finish_board", "dsh_task_gantt.panel", "finish_board"),
    (" task_rows", "dsh_task_gantt.board.view_model", "_task_rows"),
    (" where_time", "dsh_task_gantt.board.view_model", "where_time"),
    (" message_count", "dsh_task_gantt.board.view_model", "message_count"),
    (" make_ticks", "dsh_task_gantt.board.view_model", "make_ticks"),
    ("board_pieces", "dsh_task_gantt.panel", "Panel._board_pieces"),
    ("answer", "dsh_task_gantt.panel", "Panel._answer"),
)


class Breakdown:
    """Each stage's CPU (``time.process_time``, ms) and the collector's passes within
    the poll being measured (``begin``/``end``): wrappers put on the ``STAGES`` while
    it is installed."""

    def __init__(self) -> None:
        self.current: dict[str, float] | None = None
        self.polls: dict[str, list[dict[str, float]]] = {}
        self._undo: list[tuple[Any, str, Any]] = []
        self._gc_at: float | None = None
        #: Every collection while installed: (tick, poll or "" between polls,
        #: generation, ms, objects collected).
        self.collections: list[tuple[int, str, int, float, int]] = []
        self.tick = 0
        #: What each tick's append did (``LiveTeam``'s report: a message, a task moved,
        #: a teammate's turn, the lead's step): the slowest ticks say which kind they were.
        self.did: dict[int, str] = {}
        self._poll = ""
        #: Each kind's last plan (scale exponent, extent), and the ticks whose poll
        #: drew at another scale than the last poll of its kind.
        self._plans: dict[str, tuple[int, tuple[int, int]]] = {}
        self.rescaled: dict[str, list[tuple[int, int, int]]] = {}
        self._before: tuple[int, tuple[int, int]] | None = None
        #: The kind of the poll under way (measured or not).
        self.kind = ""

    def install(self) -> None:
        import importlib

        for name, module_name, attr in STAGES:
            owner: Any = importlib.import_module(module_name)
            *path, last = attr.split(".")
            for part in path:
                owner = getattr(owner, part)
            original = owner.__dict__[last] if isinstance(owner, type) else getattr(owner, last)
            setattr(owner, last, self._timed(name.strip(), original))
            self._undo.append((owner, last, original))
        gc.callbacks.append(self._gc)
        # What each poll's plan says of its scale and extent: a slow tick that is a
        # new scale (every chunk of every lane laid out and rendered again) says so.
        from dsh_task_gantt import panel

        planned = panel.plan_board

        def plan_noted(*args: Any, **kwargs: Any) -> Any:
            plan = planned(*args, **kwargs)
            if hasattr(plan, "scale"):  # every poll's, the first ones' too
                self._plans[self.kind] = (plan.scale.exponent, plan.extent)
            return plan

        panel.plan_board = plan_noted  # type: ignore[assignment]
        self._undo.append((panel, "plan_board", planned))

    def uninstall(self) -> None:
        for owner, last, original in reversed(self._undo):
            setattr(owner, last, original)
        self._undo.clear()
        gc.callbacks.remove(self._gc)

    def _timed(self, name: str, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self.current is None:
                return fn(*args, **kwargs)
            t0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                if self.current is not None:
                    spent = (time.process_time() - t0) * 1000
                    self.current[name] = self.current.get(name, 0.0) + spent

        return timed

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_at = time.process_time()
            return
        if self._gc_at is None:
            return
        spent = (time.process_time() - self._gc_at) * 1000
        self._gc_at = None
        generation = int(info.get("generation", -1))
        poll = self._poll if self.current is not None else ""
        self.collections.append((self.tick, poll, generation, spent, info.get("collected", 0)))
        if self.current is not None:
            gen = f"gc{generation}"
            self.current[gen] = self.current.get(gen, 0.0) + spent
            self.current[gen + " passes"] = self.current.get(gen + " passes", 0.0) + 1

    def begin(self, kind: str) -> None:
        self.current = {}
        self._poll = kind
        self._before = self._plans.get(kind)

    def end(self, kind: str, total_ms: float) -> None:
        if self.current is None:
            return
        self.current["total"] = total_ms
        was, now = self._before, self._plans.get(kind)
        if was is not None and now is not None and was[0] != now[0]:
            self.rescaled.setdefault(kind, []).append((self.tick, was[0], now[0]))
        self.polls.setdefault(kind, []).append(self.current)
        self.current = None

    def report(self, slowest: int) -> str:
        lines = []
        names = [name for name, _, _ in STAGES]
        for kind, polls in self.polls.items():
            lines.append(f"\n{kind}: CPU ms per poll by stage (inclusive; mean, p50, p99)")
            extra = sorted({k for p in polls for k in p if k.startswith("gc")})
            for name in ["total", *names, *extra]:
                values = [p.get(name.strip(), 0.0) for p in polls]
                if not any(values):
                    continue
                mean = sum(values) / len(values)
                lines.append(
                    f"  {name:18s} mean {mean:6.2f}  p50 {pct(values, 0.5):6.2f}  "
                    f"p99 {pct(values, 0.99):6.2f}"
                )
            by_did: dict[str, list[float]] = {}
            for n, poll in enumerate(polls):
                by_did.setdefault(self.did.get(n, "?"), []).append(poll["total"])
            lines.append(
                "  by what the tick did: "
                + ", ".join(
                    f"{did} {len(v)}x mean {sum(v) / len(v):.1f} max {max(v):.1f}"
                    for did, v in sorted(by_did.items())
                )
            )
            order = sorted(range(len(polls)), key=lambda n: polls[n]["total"], reverse=True)
            lines.append(f"  slowest {slowest} ticks:")
            for n in order[:slowest]:
                parts = ", ".join(
                    f"{k} {v:.1f}"
                    for k, v in sorted(polls[n].items(), key=lambda kv: -kv[1])
                    if k != "total" and v >= 0.5 and not k.endswith("passes")
                )
                passes = ", ".join(
                    f"{k} {v:.0f}" for k, v in polls[n].items() if k.endswith("passes")
                )
                did = self.did.get(n, "")
                lines.append(
                    f"   tick {n:3d}: {polls[n]['total']:6.1f}  [{did}] ({parts}) {passes}"
                )
        for kind, changes in self.rescaled.items():
            for tick, was, now in changes:
                lines.append(f"{kind}: tick {tick} drew at scale 2^{now} (was 2^{was}) px/ms")
        lines.append(f"\ncollections while measuring: {len(self.collections)}")
        for tick, poll, generation, spent, collected in self.collections:
            where = poll or "between polls (the writer's append)"
            lines.append(
                f"  tick {tick:3d} gen {generation} {spent:7.1f} ms, {collected} collected: {where}"
            )
        return "\n".join(lines)


def _held(text: str, held: dict[str, str]) -> None:
    held.update({k: unescape(v) for k, v in _INPUT.findall(text)})


def _figures(values: list[float]) -> str:
    return (
        f"p50 {pct(values, 0.5):6.1f}  p99 {pct(values, 0.99):6.1f}  "
        f"max {max(values, default=float('nan')):6.1f}"
    )


def measure(args: argparse.Namespace, data: Path) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-delta-"))
    try:
        root = work / "sessions"
        shutil.copytree(data / "sessions", root)
        spec = TeamSpec.load(data / SPEC, root=str(root))
        live = LiveTeam(root, spec, seed=resumed_seed(spec))
        raw = raw_log_bytes(root)
        session = spec.lead_id
        print(
            f"team {args.team}: {len(spec.members)} lanes, {len(spec.messages)} messages, "
            f"{len(spec.tasks)} tasks, {len(spec.human_prompts)} prompts, "
            f"{raw / 1e6:.0f} MB of raw logs ({args.hours:g} h of history); "
            f"load average {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        pace_for_serving()
        map_large_blocks()
        host = EmbeddedHost(root)
        result = asyncio.run(_ticks(args, host, live, session))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cpu, wall, statuses = result["cpu_ms"], result["wall_ms"], result["statuses"]
    print(f"\n{args.ticks} ticks; load average {os.getloadavg()[0]:.2f} (ms per poll)")
    for name in cpu:
        print(
            f"{name:18s} CPU  {_figures(cpu[name])}   wall {_figures(wall[name])}   "
            f"statuses {statuses[name]}"
        )
    return result


class _InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """Runs what the host hands to a thread at once, in the calling thread: the profile
    then sees the reads too (``cProfile`` follows one thread)."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed on to the awaiting request
            future.set_exception(exc)
        return future


async def _ticks(
    args: argparse.Namespace, host: EmbeddedHost, live: LiveTeam, session: str
) -> dict[str, Any]:
    cpu: dict[str, list[float]] = {}
    wall: dict[str, list[float]] = {}
    statuses: dict[str, dict[str, int]] = {}
    profile = cProfile.Profile() if args.profile else None
    breakdown = Breakdown() if args.breakdown else None
    if breakdown is not None:
        breakdown.install()
    if profile is not None:
        asyncio.get_running_loop().set_default_executor(_InlineExecutor())

    def add(name: str, c: float, w: float, status: int) -> None:
        cpu.setdefault(name, []).append(c * 1000)
        wall.setdefault(name, []).append(w * 1000)
        counts = statuses.setdefault(name, {})
        counts[str(status)] = counts.get(str(status), 0) + 1

    transport = httpx.ASGITransport(app=host, client=("127.0.0.1", 5))
    held: dict[str, dict[str, str]] = {}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", timeout=600
    ) as client:

        async def poll(
            kind: PollerKind,
            profiled: bool = False,
            name: str = "",
            at_ms: int = 0,
            holder: str = "",
        ) -> tuple[int, float, float]:
            mine = held[holder or kind.name]
            params = board_params(session, kind, at_ms, mine)
            on = profile is not None and profiled
            if breakdown is not None:
                breakdown.kind = f"delta {kind.name}"
            if breakdown is not None and name:
                breakdown.begin(name)
            c0, w0 = time.process_time(), time.perf_counter()
            if on:
                assert profile is not None
                profile.enable()
            r = await client.get(
                PREFIX + "/panel/board", params=params, headers={"HX-Request": "true"}
            )
            if on:
                assert profile is not None
                profile.disable()
            c, w = time.process_time() - c0, time.perf_counter() - w0
            if breakdown is not None and name:
                breakdown.end(name, c * 1000)
            if r.status_code in (200, 286):
                _held(r.text, mine)
            return r.status_code, c, w

        for kind in FOLLOWING:
            held[kind.name] = {"version": "", "drawn": "", "token": ""}
            c0, w0 = time.process_time(), time.perf_counter()
            page = await client.get(PREFIX + "/panel", params={"session": session, "follow": "1"})
            c, w = time.process_time() - c0, time.perf_counter() - w0
            print(f"panel page ({kind.name}): {page.status_code} in {w:.1f} s ({c:.1f} s CPU)")
            _held(page.text, held[kind.name])
            # The panel's first polls settle its extent (its width is known then).
            for _ in range(2):
                await poll(kind)
        etag = ""
        if args.api:
            etag = (
                await client.get(PREFIX + "/api/timeline", params={"session": session})
            ).headers.get("etag", "")
        if args.grow:
            await _grow(args, client, live, session, poll, held)
        gc.collect()
        if breakdown is not None:
            breakdown.collections.clear()  # the setup's (reading the day): not a tick's
        for tick in range(args.ticks):
            if breakdown is not None:
                breakdown.tick = tick
            report = live.tick(int(time.time() * 1000))
            did = tick_kind(report.activities)
            if breakdown is not None:
                breakdown.did[tick] = did
            profiled = not args.profile_only or did in args.profile_only.split(",")
            for kind in FOLLOWING:
                status, c, w = await poll(kind, profiled=profiled, name=f"delta {kind.name}")
                add(f"delta {kind.name}", c, w, status)
            status, c, w = await poll(FOLLOWING[0], name=f"unchanged {FOLLOWING[0].name}")
            add(f"unchanged {FOLLOWING[0].name}", c, w, status)
            if args.api:
                # What the soak's lone probe sends after its delta poll.
                for name, params in (
                    ("api since", {"session": session, "since": etag}),
                    ("api full", {"session": session}),
                ):
                    c0, w0 = time.process_time(), time.perf_counter()
                    r = await client.get(PREFIX + "/api/timeline", params=params)
                    c, w = time.process_time() - c0, time.perf_counter() - w0
                    add(name, c, w, r.status_code)
                    etag = r.headers.get("etag", etag)
            if args.pause:
                await asyncio.sleep(args.pause)
    if profile is not None:
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).sort_stats(args.profile_sort)
        stats.print_stats(args.profile_lines)
        if args.profile_callers:
            stats.print_callers(args.profile_callers)
        print(out.getvalue())
    if breakdown is not None:
        breakdown.uninstall()
        print(breakdown.report(args.slowest))
    return {"cpu_ms": cpu, "wall_ms": wall, "statuses": statuses}


async def _grow(
    args: argparse.Namespace,
    client: httpx.AsyncClient,
    live: LiveTeam,
    session: str,
    poll: Any,
    held: dict[str, dict[str, str]],
) -> None:
    """The day appended while the server reads it (``--grow``): ``--hours`` of ticks,
    each timestamped 2 s after the one before (ending now), and every
    ``--grow-poll-every`` ticks one poll of each of the soak's kinds (following now,
    replaying, with the list open: ``bench_soak.KINDS``) and a ``since``, as the
    compressed soak's pollers see it. The breakdown and the profile are off meanwhile."""
    spec = live.spec()
    at = spec.last_event_time
    ticks = round(args.hours * HOUR_MS / APPEND_EVERY_MS)
    held_at = (spec.start_ms + at) // 2
    # The measured pollers (one per following kind) poll too; the others are more.
    pollers = [(k, k.name) for k in KINDS if k in FOLLOWING] + [
        (k, f"{k.name} #{n}")
        for k in KINDS
        for n in range(args.grow_pollers)
        if k not in FOLLOWING or n > 0
    ]
    for kind, holder in pollers:
        if holder in held:
            continue
        params = {"session": session, "follow": "1" if kind.follow else ""}
        if kind.list_open:
            params["list"] = "1"
        if kind.replay:
            params["at"] = str(held_at)
        page = await client.get(PREFIX + "/panel", params=params)
        _held(page.text, held.setdefault(holder, {"version": "", "drawn": "", "token": ""}))
    etag = ""
    t0 = time.monotonic()
    for tick in range(1, ticks + 1):
        at += APPEND_EVERY_MS
        live.tick(at)
        if tick % args.grow_poll_every == 0:
            for kind, holder in pollers:
                await poll(kind, at_ms=held_at, holder=holder)
            r = await client.get(
                PREFIX + "/api/timeline", params={"session": session, "since": etag}
            )
            etag = r.headers.get("etag", etag)
        if tick % (ticks // 10 or 1) == 0:
            print(
                f"grown: {tick} of {ticks} appends in {time.monotonic() - t0:.0f} s",
                flush=True,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--team", choices=sorted(TEAMS), default="big")
    parser.add_argument("--hours", type=float, default=24)
    parser.add_argument("--ticks", type=int, default=60)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds between ticks")
    parser.add_argument("--root", type=Path, help="keep the dataset here and reuse it")
    parser.add_argument("--profile", action="store_true", help="cProfile the delta polls")
    parser.add_argument("--profile-lines", type=int, default=60)
    parser.add_argument(
        "--profile-only",
        help="with --profile: only the ticks of these kinds (task, message, turn, step; "
        "comma-separated, '+prompt' when the human asked too)",
    )
    parser.add_argument("--profile-sort", default="cumulative")
    parser.add_argument(
        "--profile-callers", help="with --profile: who calls the functions matching this"
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="CPU per stage of a poll, and the GC's passes"
    )
    parser.add_argument("--slowest", type=int, default=8, help="with --breakdown: ticks shown")
    parser.add_argument(
        "--api",
        action="store_true",
        help="each tick, after the polls, a since and a full /api/timeline (as the soak's "
        "lone probe sends)",
    )
    parser.add_argument(
        "--grow",
        action="store_true",
        help="append the --hours of history while the server reads it (the soak's "
        "pollers polling), not before it starts",
    )
    parser.add_argument(
        "--grow-poll-every",
        type=int,
        default=40,
        help="with --grow: the pollers poll once every this many appends (40: the "
        "compressed soak's rate)",
    )
    parser.add_argument(
        "--grow-pollers",
        type=int,
        default=1,
        help="with --grow: pollers of each kind (5: the soak's 20)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    scratch = None
    if args.root is None:
        scratch = Path(tempfile.mkdtemp(prefix="dsh-gantt-delta-data-"))
    try:
        data = dataset(args.root or scratch, args.team, args.hours, grow=args.grow)
        result = measure(args, data)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
