"""Benchmark of the session-log reader on a lead-like log (generated, seeded).

The log: ~2,000 zstd frames and ~20,000 lines, mostly real-sized bulk
(``assistant/message`` with a few KB of text, ``tool/result`` bodies), tens of MB
decompressed, in the real layout under a temporary sessions root. Prints, as the
median of several runs:

- the floor: python-zstandard decompressing every frame in one call;
- the floor plus ``orjson`` on every line (what a naive full parse costs);
- a full decode with ``LogReader`` (default: every line parsed);
- a full decode with the bulk-skip mode (``skip_types=BULK_TYPES``);
- an incremental ``read_new`` after 5 new frames were appended.

Run: ``python benchmarks/bench_reader.py [--runs 5]``.

``--team real|big|small`` (a team generated as ``teams.py`` does) or ``--root DIR`` (a
sessions root already on disk) measures instead the truly cold read of a whole team:
every log read by a fresh reader with the service's rules, one log at a time as the
service reads them, against two logs side by side, in turn. It prints the reading
thread's CPU beside the wall time: the difference is the time that thread waited (for
the decompressing thread, or for the machine), the most that reading more at once
could save on the Python side.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import zstandard

from dsh_task_gantt.fold import BULK_TYPES, RUN_MARKS, UNREAD_DATA
from dsh_task_gantt.logs.reader import LogReader

SEED = 20261129
T0 = 1_791_648_700_000
WORDS = [
    "the",
    "task",
    "board",
    "team",
    "lead",
    "teammate",
    "claim",
    "complete",
    "reopen",
    "message",
    "tool",
    "call",
    "result",
    "function",
    "return",
    "value",
    "file",
    "path",
    "error",
    "retry",
    "step",
    "turn",
    "model",
    "token",
    "context",
    "window",
    "python",
    "zstd",
    "frame",
    "header",
    "block",
    "checksum",
    "offset",
    "event",
    "timeline",
    "gantt",
    "lane",
    "colour",
    "def",
    "class",
    "import",
    "async",
    "await",
    "yield",
    "list",
    "dict",
    "str",
    "int",
    "none",
    "true",
    "false",
]


def _text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _batch(rng: random.Random, seq: int, turn: int) -> tuple[list[dict[str, Any]], int]:
    """One append batch: a step with its model output and a tool round trip."""
    t = T0 + seq * 350
    step = seq % 7
    lines: list[dict[str, Any]] = [
        {"type": "step/start", "seq": seq, "time": t, "data": {"turn": turn, "step": step}},
        {
            "type": "request/header",
            "seq": seq + 1,
            "time": t + 1,
            "data": {"model": "m", "headers": {"x": _text(rng, 200)}},
        },
        {
            "type": "assistant/attempt",
            "seq": seq + 2,
            "time": t + 2,
            "data": {"turn": turn, "step": step, "stream": [_text(rng, 300)]},
        },
        {
            "type": "assistant/message",
            "seq": seq + 3,
            "time": t + 3,
            "data": {
                "turn": turn,
                "step": step,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": _text(rng, rng.randint(3000, 8000))}],
                },
                "stream": [_text(rng, 200)],
                "usage": {"input": 1000, "output": 300},
            },
        },
        {
            "type": "tool/call",
            "seq": seq + 4,
            "time": t + 4,
            "data": {
                "turn": turn,
                "step": step,
                "callId": f"c{seq}",
                "name": "read_file",
                "arguments": orjson.dumps({"path": "/x/y.py"}).decode(),
            },
        },
        {
            "type": "tool/result",
            "seq": seq + 5,
            "time": t + 5,
            "data": {
                "turn": turn,
                "step": step,
                "message": {
                    "role": "tool",
                    "toolCallId": f"c{seq}",
                    "content": [{"type": "text", "text": _text(rng, rng.randint(1000, 6000))}],
                    "source": {"kind": "tool", "callId": f"c{seq}"},
                },
            },
        },
        {"type": "step/end", "seq": seq + 6, "time": t + 6, "data": {"turn": turn, "step": step}},
    ]
    extra = rng.randint(0, 6)
    for i in range(extra):  # small bookkeeping events vary the batch sizes
        lines.append(
            {
                "type": "team/message/delivered",
                "seq": seq + 7 + i,
                "time": t + 7 + i,
                "data": {"teamId": "lead", "messageId": f"m{seq}-{i}", "targetId": "mate"},
            }
        )
    return lines, seq + 7 + extra


def generate(root: Path, frames: int = 2000) -> Path:
    rng = random.Random(SEED)
    d = root / "--work-bench--" / "lead"
    d.mkdir(parents=True)
    cctx = zstandard.ZstdCompressor(level=3)
    header = {
        "type": "session",
        "version": 4,
        "id": "lead",
        "createdAt": T0,
        "cwd": "/work/bench",
        "isSeeded": False,
        "origin": "user",
        "delegationDepth": 0,
        "agentPreset": "standard",
    }
    parts = [cctx.compress(orjson.dumps(header) + b"\n")]
    seq = 0
    for n in range(frames - 1):
        lines, seq = _batch(rng, seq, turn=n // 20)
        parts.append(cctx.compress(b"".join(orjson.dumps(x) + b"\n" for x in lines)))
    path = d / "session.v4.jsonl.zstd"
    path.write_bytes(b"".join(parts))
    return path


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _read_cold(path: Path) -> tuple[int, float]:
    """One log read by a fresh reader as the service reads it: (events, thread CPU s)."""
    start = time.thread_time()
    batch = LogReader(path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS).read_new(runs=True)
    assert batch.error is None and batch.garbage is None, (path, batch.error, batch.garbage)
    return batch.total_events, time.thread_time() - start


def read_team(logs: Sequence[Path], at_once: int) -> tuple[float, float, int]:
    """Every log read cold, ``at_once`` side by side (largest first): wall ms, the
    reading threads' CPU ms (the decompressing threads' excluded) and events read."""
    start = time.perf_counter()
    if at_once == 1:
        done = [_read_cold(p) for p in logs]
    else:
        with ThreadPoolExecutor(at_once) as pool:
            done = list(pool.map(_read_cold, logs))
    wall = (time.perf_counter() - start) * 1000
    return wall, sum(cpu for _, cpu in done) * 1000, sum(n for n, _ in done)


def team_main(root: Path, runs: int) -> None:
    logs = sorted(root.rglob("session*.jsonl.zstd"), key=lambda p: -p.stat().st_size)
    if not logs:
        sys.exit(f"no .jsonl.zstd logs under {root}")
    raw_bytes = sum(p.stat().st_size for p in logs)

    def floor() -> int:
        dctx = zstandard.ZstdDecompressor()
        return sum(
            len(dctx.decompressobj(read_across_frames=True).decompress(p.read_bytes()))
            for p in logs
        )

    plain_bytes = floor()
    events = read_team(logs, 1)[2]
    print(
        f"team: {len(logs)} logs, {raw_bytes / 1e6:.1f} MB compressed, "
        f"{plain_bytes / 1e6:.1f} MB decompressed, {events} events"
    )
    floor_ms = median_ms(floor, runs)
    print(f"{'zstd floor: every log decompressed on one core':<50} {floor_ms:7.0f} ms")
    rows: dict[int, list[tuple[float, float, int]]] = {1: [], 2: []}
    for _ in range(runs):  # in turn: a shared machine's load moves between runs
        for at_once in rows:
            rows[at_once].append(read_team(logs, at_once))
    for at_once, got in rows.items():
        assert all(n == events for _, _, n in got)  # both read every event, once
        wall = statistics.median(w for w, _, _ in got)
        cpu = statistics.median(c for _, c, _ in got)
        waited = max(0.0, statistics.median(w - c for w, c, _ in got))
        what = "one log at a time (as the service)" if at_once == 1 else "two logs side by side"
        line = f"{what:<50} {wall:7.0f} ms  reading threads' CPU {cpu:.0f} ms"
        if at_once == 1:
            line += f", waited {waited:.0f} ms"
        print(f"{line}  (median of {runs})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--frames", type=int, default=2000)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--team", help="a team generated as teams.py does: real, big or small")
    where.add_argument("--root", type=Path, help="a sessions root already on disk")
    args = parser.parse_args()
    if args.root is not None:
        team_main(args.root, args.runs)
        return
    if args.team is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from teams import TEAMS, generate_recent_team

        tmp = Path(tempfile.mkdtemp(prefix="bench-reader-team-"))
        try:
            generate_recent_team(tmp, TEAMS[args.team])
            team_main(tmp, args.runs)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return

    tmp = Path(tempfile.mkdtemp(prefix="bench-reader-"))
    try:
        path = generate(tmp, args.frames)
        raw = path.read_bytes()
        plain = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True).decompress(raw)
        n_lines = plain.count(b"\n")
        print(
            f"log: {len(raw) / 1e6:.2f} MB compressed, {args.frames} frames, {n_lines} lines, "
            f"{len(plain) / 1e6:.1f} MB decompressed"
        )

        def floor() -> bytes:
            return bytes(
                zstandard.ZstdDecompressor()
                .decompressobj(read_across_frames=True)
                .decompress(path.read_bytes())
            )

        def floor_parse() -> int:
            return sum(1 for x in floor().splitlines() if orjson.loads(x))

        def full(**kw: Any) -> int:
            result = LogReader(path, **kw).read_new()
            assert result.total_events == n_lines - 1 and result.garbage is None
            return result.total_events

        new_frames = b"".join(
            zstandard.ZstdCompressor().compress(
                b"".join(
                    orjson.dumps(x) + b"\n"
                    for x in _batch(random.Random(i), 10**6 + i * 20, 999)[0]
                )
            )
            for i in range(5)
        )
        copy = tmp / "--work-bench--" / "copy"

        def incremental_once() -> float:
            if copy.exists():
                shutil.rmtree(copy)
            copy.mkdir()
            target = copy / "session.v4.jsonl.zstd"
            shutil.copyfile(path, target)
            reader = LogReader(target)
            reader.read_new()
            with target.open("ab") as f:
                f.write(new_frames)
            start = time.perf_counter()
            result = reader.read_new()
            elapsed = (time.perf_counter() - start) * 1000
            assert len(result.events) > 0 and not result.restarted
            return elapsed

        rows = [
            ("zstd floor (decompressobj read_across_frames)", median_ms(floor, args.runs)),
            ("floor + orjson.loads of every line", median_ms(floor_parse, args.runs)),
            ("LogReader full decode (default)", median_ms(full, args.runs)),
            (
                "LogReader full decode (skip_types=BULK_TYPES)",
                median_ms(lambda: full(skip_types=BULK_TYPES), args.runs),
            ),
            (
                "LogReader.read_new after 5 appended frames",
                statistics.median(incremental_once() for _ in range(args.runs)),
            ),
        ]
        for name, ms in rows:
            print(f"{name:<50} {ms:9.2f} ms  (median of {args.runs})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
