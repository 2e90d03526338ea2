"""The start page's view model: one card per team, grouped by workspace.

Pure functions over the persisted sessions' rows and each team's timeline JSON; the
template only places what these say (plurals and number formatting included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..events import coerce_header

NO_WORKSPACE = "(no workspace)"


def counted(count: int, noun: str) -> str:
    """``1 turn``, ``2 turns``, ``1,204 messages``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True, slots=True)
class TeamStub:
    """A team as the session list shows it: its lead (a session with no parent)."""

    lead: str
    workspace: str
    created_at: int | None


@dataclass(frozen=True, slots=True)
class MemberChip:
    name: str
    unreadable: bool


@dataclass(frozen=True, slots=True)
class TeamCard:
    lead: str
    workspace: str
    created_at: int | None
    panel_url: str
    #: Whether the team's timeline was built (only the newest teams are).
    summarised: bool = False
    live: bool = False
    last_activity: int | None = None
    lead_name: str = "lead"
    #: The human's first prompt: it says what the team is about.
    subject: str | None = None
    members: tuple[MemberChip, ...] = ()
    tasks_done: int = 0
    tasks_total: int = 0
    turns: int = 0
    messages: int = 0
    #: Some of the team's logs could not be read.
    partial: bool = False

    @property
    def state(self) -> str:
        return "live" if self.live else "frozen"

    @property
    def title(self) -> str:
        return self.subject or f"Team of {self.lead_name}"

    @property
    def tasks_text(self) -> str:
        return f"tasks {self.tasks_done:,}/{self.tasks_total:,} done"

    @property
    def tasks_tooltip(self) -> str:
        return f"{self.tasks_done:,} of {self.tasks_total:,} tasks completed"

    @property
    def turns_text(self) -> str:
        return counted(self.turns, "turn")

    @property
    def messages_text(self) -> str:
        return counted(self.messages, "message")


@dataclass(frozen=True, slots=True)
class WorkspaceGroup:
    workspace: str
    teams: tuple[TeamCard, ...]

    @property
    def name(self) -> str:
        """The workspace folder's own name (the full path is shown beside it)."""
        return self.workspace.rstrip("/").rsplit("/", 1)[-1] or self.workspace


def team_stubs(rows: Iterable[Mapping[str, Any]]) -> list[TeamStub]:
    """Every lead among the persisted sessions, newest first; a member whose lead is
    listed is part of that team, one whose lead is missing is a team of its own."""
    headers = {}
    for row in rows:
        header = coerce_header(row.get("header") or {})
        session_id = row.get("id")
        if isinstance(session_id, str) and header is not None:
            headers[session_id] = header
    stubs = [
        TeamStub(session_id, header.cwd or NO_WORKSPACE, header.created_at)
        for session_id, header in headers.items()
        if not (header.parent_session and header.parent_session in headers)
    ]
    stubs.sort(key=lambda stub: stub.created_at or 0, reverse=True)
    return stubs


def team_card(stub: TeamStub, panel_url: str, timeline: Mapping[str, Any] | None) -> TeamCard:
    """The card of one team; without its timeline, only what the session list says."""
    if timeline is None:
        return TeamCard(stub.lead, stub.workspace, stub.created_at, panel_url)
    lanes = [lane for lane in _dicts(timeline.get("lanes")) if lane.get("kind") != "unassigned"]
    tasks = [t for t in _dicts(timeline.get("tasks")) if t.get("status") != "deleted"]
    lead = next((lane for lane in lanes if lane.get("kind") == "lead"), {})
    spans = [span for lane in lanes for span in _dicts(lane.get("spans"))]
    subject = next(
        (s.get("preview") for s in _dicts(lead.get("spans")) if s.get("kind") == "user-prompt"),
        None,
    )
    return TeamCard(
        stub.lead,
        stub.workspace,
        stub.created_at,
        panel_url,
        summarised=True,
        live=bool(timeline.get("live")),
        last_activity=_last_activity(timeline, spans),
        lead_name=str(lead.get("name") or "lead"),
        subject=str(subject) if subject else None,
        members=tuple(
            MemberChip(str(lane.get("name")), lane.get("channel") == "unreadable")
            for lane in lanes
            if lane.get("kind") == "teammate"
        ),
        tasks_done=sum(1 for t in tasks if t.get("status") == "completed"),
        tasks_total=len(tasks),
        turns=sum(1 for s in spans if s.get("kind") == "turn"),
        messages=len({s.get("id") for s in spans if s.get("kind") == "message"}),
        partial=timeline.get("source") == "partial",
    )


def by_workspace(cards: Iterable[TeamCard]) -> tuple[WorkspaceGroup, ...]:
    """Live teams first, then by latest activity; each workspace where its first team is."""
    ordered = sorted(cards, key=lambda c: (not c.live, -(c.last_activity or c.created_at or 0)))
    groups: dict[str, list[TeamCard]] = {}
    for card in ordered:
        groups.setdefault(card.workspace, []).append(card)
    return tuple(WorkspaceGroup(ws, tuple(teams)) for ws, teams in groups.items())


def summary_text(groups: Sequence[WorkspaceGroup]) -> str:
    """``3 teams in 2 workspaces``."""
    teams = sum(len(group.teams) for group in groups)
    return f"{counted(teams, 'team')} in {counted(len(groups), 'workspace')}"


def _last_activity(data: Mapping[str, Any], spans: list[Mapping[str, Any]]) -> int | None:
    """The frozen end of the range; while live, the newest span start or end (never now)."""
    time_range = data.get("range")
    end = time_range.get("end") if isinstance(time_range, Mapping) else None
    if isinstance(end, int):
        return end
    times = [t for s in spans for t in (s.get("time"), s.get("end")) if isinstance(t, int)]
    return max(times, default=None)


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []
