"""The fold alone: ``fold_lane`` over every log of a generated team, already decoded.

Generates the generator's large "full" team (the size of the biggest real one), reads
each log once the way the service does (the fold's skip rules, runs on) and once with
every line parsed (no runs), then folds those events several rounds and prints the
median and the spread of the CPU time. The decoding is not timed: this isolates the
fold's own cost on the cold path. Also times an incremental fold (the last 1 % of the
lead's events onto a fold of the rest), the shape of a poll after an append.

Run: ``python benchmarks/bench_fold.py [--rounds 15] [--seed 7]``.
Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dsh_task_gantt.fixturegen import generate_team
from dsh_task_gantt.fold import RUN_MARKS, UNREAD_DATA, fold_lane
from dsh_task_gantt.logs.reader import LogReader


def _logs(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*/session*.jsonl*") if p.is_file())


def _read(path: Path, *, skip: bool) -> list[object]:
    if skip:
        reader = LogReader(path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)
        return list(reader.read_new(runs=True).events)
    return list(LogReader(path).read_new().events)


def _median_ms(rounds: int, work: Callable[[], object]) -> tuple[float, float, float]:
    """The median and the spread of this process's CPU time (a shared machine's wall
    time moves with the other jobs far more than its CPU time does)."""
    times = []
    for _ in range(rounds):
        t0 = time.process_time()
        work()
        times.append((time.process_time() - t0) * 1000)
    return statistics.median(times), min(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-fold-"))
    try:
        root = work / "sessions"
        generate_team(root, seed=args.seed, scale="large", shape="full", name="bench")
        logs = _logs(root)
        for skip in (True, False):
            lanes = [_read(path, skip=skip) for path in logs]
            events = sum(len(lane) for lane in lanes)
            median, low, high = _median_ms(
                args.rounds, lambda lanes=lanes: [fold_lane(lane) for lane in lanes]
            )
            how = "skip rules, runs (the service's read)" if skip else "every line parsed"
            print(
                f"fold of {len(logs)} logs, {events:,} events ({how}): "
                f"CPU median {median:.1f} ms (min {low:.1f}, max {high:.1f}; {args.rounds} rounds)"
            )
        lead = max((_read(path, skip=False) for path in logs), key=len)
        cut = len(lead) - max(1, len(lead) // 100)
        base = fold_lane(lead[:cut])
        tail = lead[cut:]
        median, low, high = _median_ms(args.rounds * 10, lambda: fold_lane(tail, start=base))
        print(
            f"incremental fold of the lead's last {len(tail)} events onto {cut:,}: "
            f"CPU median {median:.2f} ms (min {low:.2f}, max {high:.2f})"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
