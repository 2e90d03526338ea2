"""``python -m dsh_task_gantt.fixturegen --out DIR --seed N --scale small|medium|large``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dsh_task_gantt.fixturegen.scale import SCALES
from dsh_task_gantt.fixturegen.scenario import (
    DEFAULT_START_MS,
    FIXTURE_SEED,
    SHAPES,
    generate_fixture_set,
    generate_team,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dsh_task_gantt.fixturegen",
        description="Write deterministic DSH team logs under a sessions root.",
    )
    parser.add_argument("--out", type=Path, required=True, help="sessions root to write into")
    parser.add_argument("--seed", type=int, default=FIXTURE_SEED)
    parser.add_argument("--scale", choices=sorted(SCALES), default="small")
    parser.add_argument(
        "--shape",
        choices=(*SHAPES, "set"),
        default="full",
        help="'set' writes the committed fixture set (alpha, beta, lone)",
    )
    parser.add_argument("--name", default=None)
    parser.add_argument("--cwd", default=None, help="workspace the logs belong to")
    parser.add_argument("--start-ms", type=int, default=DEFAULT_START_MS)
    parser.add_argument("--live", action="store_true", help="leave the lead on an open turn")
    parser.add_argument("--plain", action="store_true", help="write session.v4.jsonl uncompressed")
    parser.add_argument(
        "--spec-dir",
        type=Path,
        default=None,
        help="also write <name>.json specs here (keep it outside --out)",
    )
    args = parser.parse_args(argv)

    if args.shape == "set":
        specs = generate_fixture_set(args.out, seed=args.seed)
    else:
        spec = generate_team(
            args.out,
            seed=args.seed,
            scale=args.scale,
            shape=args.shape,
            name=args.name,
            cwd=args.cwd,
            start_ms=args.start_ms,
            live=args.live,
            compress=not args.plain,
        )
        specs = {spec.name: spec}
    for name, spec in specs.items():
        if args.spec_dir is not None:
            spec.dump(args.spec_dir / f"{name}.json")
        lines = sum(m.line_count for m in spec.members)
        frames = sum(m.frame_count for m in spec.members)
        print(
            f"{name}: lead {spec.lead_id} in {spec.project_key}: "
            f"{len(spec.members)} members, {lines} lines, {frames} frames",
            file=sys.stdout,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
