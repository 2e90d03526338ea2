"""Run a script of ``benchmarks/`` the way a reader would, and give back what it printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def run_benchmark(script: str, *args: str, timeout: float = 240) -> str:
    """``python benchmarks/<script> ARGS`` from the repository's top; its standard output
    (a failed run fails the test, with the end of what it wrote to stderr)."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout
