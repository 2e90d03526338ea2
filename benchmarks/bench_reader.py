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
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import zstandard

from dsh_task_gantt.logs.reader import BULK_TYPES, LogReader

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--frames", type=int, default=2000)
    args = parser.parse_args()

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
