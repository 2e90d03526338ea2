"""A small sessions root for the start page: teams in two workspaces (one of them
live), and single sessions (a lead nobody joined), written by the fixture generator."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dsh_task_gantt.fixturegen import DEFAULT_START_MS, TeamSpec, generate_team

HOUR_MS = 3_600_000
SHOP = "/home/dev/shop-front"
API = "/home/dev/billing-api"


@dataclass(frozen=True)
class StartRoot:
    root: Path
    #: Newest first: the live pair in SHOP, the full team in API, an older pair in SHOP.
    teams: tuple[TeamSpec, ...]
    #: Single sessions, the newest one live.
    singles: tuple[TeamSpec, ...]

    @property
    def live_team(self) -> TeamSpec:
        return self.teams[0]


def title_of(spec: TeamSpec) -> str:
    """The start of the team's first human prompt: what its card is titled."""
    return spec.human_prompts[0].text[:24]


def start_root(root: Path) -> StartRoot:
    def at(hours: int) -> int:
        return DEFAULT_START_MS + hours * HOUR_MS

    teams = (
        generate_team(root, seed=71, shape="pair", name="p1", cwd=SHOP, start_ms=at(9), live=True),
        generate_team(root, seed=72, shape="full", name="f1", cwd=API, start_ms=at(6)),
        generate_team(root, seed=73, shape="pair", name="p2", cwd=SHOP, start_ms=at(1)),
    )
    singles = (
        generate_team(root, seed=74, shape="lone", name="l1", cwd=API, start_ms=at(8), live=True),
        generate_team(root, seed=75, shape="lone", name="l2", cwd=SHOP, start_ms=at(7)),
    )
    return StartRoot(root, teams, singles)
