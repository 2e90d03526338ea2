"""What reading token use added to the truly cold read of a team: before and after.

BEFORE is the plugin as it was just before the reader learned token use (commit
``8bce648``, checked out into a temporary ``git worktree`` that this script creates
and removes); AFTER is this checkout. Both read the same generated logs (the ``big``
team of ``teams.py`` unless told otherwise), each in a subprocess whose
``PYTHONPATH`` points at its own ``plugin/``.

What is measured, per log: a fresh ``LogReader`` with the fold's own rules
(``skip_types=UNREAD_DATA``, ``run_marks=RUN_MARKS``) reads the whole log with
``read_new(runs=True)`` and ``fold_lane`` folds what it read from nothing, as the
service does for a log that no lane cache knows. That is the decompression, the
reader and the lane fold of every log, from an empty cache, summed over the lead's
log and over the members' logs apart.

The measure: the instructions the process executes (all threads), counted by
``valgrind --tool=callgrind``, less those of the same process that imports the same
modules and stops before reading (its start-up); without valgrind (or with
``--timer cpu``) the process CPU of the work, the median of ``--runs`` runs taken in
turn, the order of the two sides swapped every other run (a load that drifts during a
pair weighs on both alike). With the CPU timer each run's pair also gives a ratio: the
median and range of those paired ratios and each side's range are printed, with the
load average before and after, since a median of a shared machine's runs moves with
its load. Instruction counts are the robust measure on a shared machine.

``--gc serve`` runs both sides under the cyclic collector's pace that ``serve`` sets
for its own process (``collector.YOUNG_THRESHOLD``; the default pace is CPython's, as
in a host that mounts the plugin): the same for both, so it says what the read costs
in the server, where the young collections that the read's objects trigger are rare.

Run: ``python benchmarks/bench_tokens_cost.py [--team big] [--timer callgrind|cpu]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The last commit before the reader read token use.
BEFORE = "8bce648"

#: Run in the subprocess: read and fold the logs named on its command line; prints
#: the events read and the process CPU of the work as JSON. ``--startup`` stops
#: before reading (the imports and the log list only).
_CHILD = r"""
import gc, json, sys, time
from pathlib import Path
import dsh_task_gantt
from dsh_task_gantt.fold import RUN_MARKS, UNREAD_DATA, fold_lane
from dsh_task_gantt.logs.reader import LogReader

startup = sys.argv[1] == "--startup"
young = int(sys.argv[2])
if young:
    gc.set_threshold(young, *gc.get_threshold()[1:])
paths = [Path(p) for p in sys.argv[3:]]
events = 0
cpu = time.process_time()
if not startup:
    for path in paths:
        batch = LogReader(path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS).read_new(runs=True)
        assert batch.error is None and batch.garbage is None, (path, batch.error)
        fold = fold_lane(batch.events)
        assert fold.events_seen == batch.total_events, (path, fold.events_seen)
        events += batch.total_events
cpu = time.process_time() - cpu
print(json.dumps({"plugin": dsh_task_gantt.__file__, "events": events, "cpu": cpu}))
"""


@dataclass(frozen=True)
class Side:
    name: str
    plugin: Path


@dataclass(frozen=True)
class Figure:
    cost: float  # instructions, or CPU seconds
    events: int
    #: With the CPU timer: each run's CPU seconds, in the order taken.
    samples: tuple[float, ...] = ()


#: ``--gc serve``: the young threshold ``serve`` sets (``collector.YOUNG_THRESHOLD``),
#: spelled here since the plugin before token use had no such module.
SERVE_YOUNG = 100_000
#: The young threshold the children run with (0: CPython's own); set by ``main``.
_young = 0


def _child(
    side: Side, paths: Sequence[Path], startup: bool, callgrind: Path | None
) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(side.plugin), PYTHONHASHSEED="0")
    cmd = [sys.executable, "-c", _CHILD, "--startup" if startup else "--read", str(_young)]
    cmd += map(str, paths)
    if callgrind is not None:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind}", *cmd]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"{side.name}: the read failed:\n{run.stderr[-3000:]}")
    got: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    # The subprocess must have imported the plugin it was pointed at, not this venv's.
    if not Path(str(got["plugin"])).resolve().is_relative_to(side.plugin.resolve()):
        sys.exit(f"{side.name}: imported {got['plugin']}, not the plugin under {side.plugin}")
    return got


def _instructions(out: Path) -> int:
    found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if found is None:
        sys.exit(f"no instruction total in {out}")
    return int(found.group(1))


def measure_callgrind(side: Side, paths: Sequence[Path], scratch: Path) -> Figure:
    """Instructions of the read less those of the start-up alone."""
    totals = []
    events = 0
    for startup in (True, False):
        out = scratch / f"callgrind.{side.name}.{'startup' if startup else 'read'}.out"
        got = _child(side, paths, startup, out)
        totals.append(_instructions(out))
        events = int(str(got["events"]))
    return Figure(totals[1] - totals[0], events)


def measure_cpu(sides: Sequence[Side], paths: Sequence[Path], runs: int) -> list[Figure]:
    """The median process CPU of the work, the sides run in turn (a shared machine's
    load moves between runs)."""
    cpu: dict[str, list[float]] = {s.name: [] for s in sides}
    events: dict[str, int] = {}
    for run in range(runs):
        # Every other run the other side first: neither always runs first after a pause.
        for side in sides if run % 2 == 0 else sides[::-1]:
            got = _child(side, paths, False, None)
            cpu[side.name].append(float(str(got["cpu"])))
            events[side.name] = int(str(got["events"]))
    return [
        Figure(statistics.median(cpu[s.name]), events[s.name], tuple(cpu[s.name])) for s in sides
    ]


def _load() -> str:
    try:
        return "load average " + ", ".join(f"{n:.2f}" for n in os.getloadavg())
    except OSError:
        return "load average unknown"


def _spread(old: Figure, new: Figure) -> str:
    """Each side's range and the ratios of the runs taken as pairs (CPU timer)."""
    ratios = sorted(n / o for o, n in zip(old.samples, new.samples, strict=True) if o > 0)
    if not ratios:
        return ""
    return (
        f"runs: before {min(old.samples) * 1000:,.0f}-{max(old.samples) * 1000:,.0f} ms, "
        f"after {min(new.samples) * 1000:,.0f}-{max(new.samples) * 1000:,.0f} ms; "
        f"paired ratio median {statistics.median(ratios):.3f} "
        f"({ratios[0]:.3f}-{ratios[-1]:.3f}, {len(ratios)} pairs)"
    )


@contextmanager
def before_checkout(rev: str) -> Iterator[Path]:
    """``rev`` in a temporary ``git worktree`` (removed afterwards): its ``plugin/``."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-tokens-before-"))
    tree = tmp / "tree"
    git = ["git", "-C", str(ROOT)]
    subprocess.run([*git, "worktree", "add", "--detach", "--quiet", str(tree), rev], check=True)
    try:
        yield tree / "plugin"
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def team_logs(root: Path, lead_id: str | None) -> tuple[list[Path], list[Path]]:
    """(the lead's log, the members' logs); without a lead id the largest log leads."""
    logs = sorted(root.rglob("session*.jsonl.zstd"), key=lambda p: -p.stat().st_size)
    if not logs:
        sys.exit(f"no .jsonl.zstd logs under {root}")
    lead = next((p for p in logs if p.parent.name == lead_id), logs[0])
    return [lead], [p for p in logs if p != lead]


def _show(cost: float, timer: str) -> str:
    return f"{cost / 1e6:9,.0f} M instr" if timer == "callgrind" else f"{cost * 1000:9,.0f} ms CPU"


def compare(root: Path, lead_id: str | None, timer: str, runs: int, rev: str) -> None:
    groups = dict(zip(("lead", "members"), team_logs(root, lead_id), strict=True))
    print(
        f"team: {sum(map(len, groups.values()))} logs, "
        f"{sum(p.stat().st_size for g in groups.values() for p in g) / 1e6:.1f} MB compressed"
    )
    what = (
        "instructions of reader + lane fold of every log, from an empty cache "
        "(callgrind, all threads, start-up subtracted)"
        if timer == "callgrind"
        else f"process CPU of reader + lane fold of every log, from an empty cache "
        f"(median of {runs})"
    )
    if _young:
        what += f", young collector threshold {_young:,} (as serve sets it)"
    print(f"measured: {what}")
    print(f"before: {_load()}")
    with before_checkout(rev) as before_plugin, tempfile.TemporaryDirectory() as scratch:
        sides = [Side("before", before_plugin), Side("after", ROOT / "plugin")]
        for side in sides:  # unmeasured: a fresh checkout writes its bytecode caches now
            _child(side, [], True, None)
        figures: dict[str, list[Figure]] = {}
        for group, paths in groups.items():
            if timer == "callgrind":
                figures[group] = [measure_callgrind(s, paths, Path(scratch)) for s in sides]
            else:
                figures[group] = measure_cpu(sides, paths, runs)
        # The team: the sum of the two groups (not measured again).
        parts = list(figures.values())
        figures["team"] = [
            Figure(
                sum(f[k].cost for f in parts),
                sum(f[k].events for f in parts),
                # The groups' runs of the same number, summed (CPU timer).
                tuple(map(sum, zip(*(f[k].samples for f in parts), strict=True))),
            )
            for k in range(len(sides))
        ]
        for group, (old, new) in figures.items():
            if old.events != new.events:
                sys.exit(f"{group}: before read {old.events} events, after {new.events}")
            ratio = new.cost / old.cost
            print(
                f"{group:<8} before ({rev}) {_show(old.cost, timer)}   "
                f"after {_show(new.cost, timer)}   ratio {ratio:.3f} ({(ratio - 1) * 100:+.1f} %)"
                f"   {new.events} events"
            )
            spread = _spread(old, new)
            if spread:
                print(f"{'':<8} {spread}")
        print(f"after: {_load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--team", default="big", help="a team generated as teams.py does")
    where.add_argument("--root", type=Path, help="a sessions root already on disk")
    parser.add_argument("--lead", help="with --root: the lead's session id (else the largest log)")
    parser.add_argument("--timer", choices=("callgrind", "cpu"))
    parser.add_argument("--runs", type=int, default=5, help="runs of each side with --timer cpu")
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    parser.add_argument(
        "--gc",
        choices=("default", "serve"),
        default="default",
        help="the collector's pace in both sides' processes: CPython's, or serve's",
    )
    args = parser.parse_args()
    global _young
    _young = SERVE_YOUNG if args.gc == "serve" else 0
    timer = args.timer or ("callgrind" if shutil.which("valgrind") else "cpu")
    if args.root is not None:
        compare(args.root, args.lead, timer, args.runs, args.before)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from teams import TEAMS, generate_recent_team

    with tempfile.TemporaryDirectory(prefix="bench-tokens-team-") as tmp:
        spec = generate_recent_team(Path(tmp), TEAMS[args.team])
        compare(Path(tmp), spec.lead_id, timer, args.runs, args.before)


if __name__ == "__main__":
    main()
