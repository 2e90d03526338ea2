"""The code stays lint-clean and strictly typed (ruff, mypy --strict on plugin/)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: ruff as '.[test]' installs it: beside this Python (a venv not on PATH), else on PATH.
_BESIDE = Path(sys.executable).with_name("ruff")
RUFF = str(_BESIDE) if _BESIDE.is_file() else shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is installed by '.[test]'")
def test_ruff_is_clean() -> None:
    run = subprocess.run(
        [str(RUFF), "check", "plugin", "tests", "benchmarks", "scripts"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.skipif(RUFF is None, reason="ruff is installed by '.[test]'")
def test_ruff_format_is_clean() -> None:
    run = subprocess.run(
        [str(RUFF), "format", "--check", "plugin", "tests", "benchmarks", "scripts"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_strict_is_clean() -> None:
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
