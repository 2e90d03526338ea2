"""The committed fixture team "alpha" for browser tests: its generator's record of what
it holds (the ground truth), and the embedded host serving the committed logs.

A test module uses them by name (``alpha = fixture_team.alpha``), one of each per module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kit.browser import Server

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"


@pytest.fixture(scope="module")
def alpha() -> Any:
    """The committed fixture team's ground truth (written by its generator)."""
    from dsh_task_gantt.fixturegen import TeamSpec

    return TeamSpec.load(FIXTURES / "specs" / "alpha.json", root=str(FIXTURES / "sessions"))


@pytest.fixture(scope="module")
def alpha_server() -> Iterator[Server]:
    """The embedded host (the standalone viewer's) over the committed sessions root."""
    from dsh_task_gantt.embedded import EmbeddedHost

    with Server(EmbeddedHost(FIXTURES / "sessions")) as server:
        yield server
