"""The start page's view model: one card per team, grouped by workspace, and the
single sessions (a lead nobody joined) apart.

Pure functions over the persisted sessions' rows (headers only: the first answer) and
each team's timeline JSON (a card's summary, filled in afterwards); the template only
places what these say (plurals and number formatting included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..board.tokens import tokens_text, tokens_title
from ..events import SessionHeader, coerce_header
from ..plurals import counted_thousands as counted

NO_WORKSPACE = "(no workspace)"


@dataclass(frozen=True, slots=True)
class TeamStub:
    """A team as the session list shows it: its lead (a session with no parent)."""

    lead: str
    workspace: str
    created_at: int | None
    #: Every session under the lead by ``parentSession`` (teammates and their subagents).
    members: tuple[str, ...] = ()
    #: The newest header ``createdAt`` among the lead and its members.
    newest_at: int | None = None


@dataclass(frozen=True, slots=True)
class Listing:
    """What the headers say: the teams, and the single sessions apart."""

    teams: tuple[TeamStub, ...]
    singles: tuple[TeamStub, ...]
    #: Every team and single session by its lead.
    by_lead: dict[str, TeamStub] = field(default_factory=dict)

    def stub(self, lead: str) -> TeamStub | None:
        """The team (or single session) led by ``lead``, if listed."""
        return self.by_lead.get(lead)


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
    #: Where the page fetches this card with its summary.
    card_url: str = ""
    #: Whether the team's timeline was built (the first answer builds none).
    summarised: bool = False
    #: Sessions under the lead, as the headers say (before the summary is in).
    member_count: int = 0
    newest_at: int | None = None
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
    #: Why there is no summary (the team's logs are gone or could not be read).
    unavailable: str | None = None
    #: The summary's version (its timeline's validator): the page fetches the card
    #: again when the live poll names another.
    stamp: str = ""
    #: The team's token use in words and in full (``None``: its logs name none).
    tokens_text: str | None = None
    tokens_title: str | None = None

    @property
    def state(self) -> str:
        return "live" if self.live else "frozen"

    @property
    def title(self) -> str:
        return self.subject or f"Team of {self.lead_name}"

    @property
    def pending(self) -> bool:
        """Still waiting for its summary (the page fetches it)."""
        return not self.summarised and self.unavailable is None

    @property
    def members_text(self) -> str:
        return counted(self.member_count, "member session")

    @property
    def search_text(self) -> str:
        """What the filter matches: title, workspace, names and the lead's id."""
        names = [self.lead_name, *(m.name for m in self.members)] if self.summarised else []
        parts = [self.subject or "", self.workspace, *names, self.lead]
        return " ".join(p for p in parts if p).lower()

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
        return workspace_name(self.workspace)


def workspace_name(workspace: str) -> str:
    """The workspace folder's own name (the full path is shown beside it)."""
    return workspace.rstrip("/").rsplit("/", 1)[-1] or workspace


def has_header(row: Mapping[str, Any]) -> bool:
    """Whether the listing read a header for the row: a log just created (empty, or
    its first zstd frame not flushed yet) has none, and says nothing about its team."""
    return bool(row.get("header"))


def listing(rows: Iterable[Mapping[str, Any]]) -> Listing:
    """Every lead among the persisted sessions, newest first: a lead with member
    sessions is a team, one without is a single session. A member whose lead is
    listed is part of that team; one whose lead is missing is a lead itself. A log
    without a header yet is left out until its header is written."""
    headers: dict[str, SessionHeader] = {}
    for row in rows:
        if not has_header(row):
            continue
        header = coerce_header(row["header"])
        session_id = row.get("id")
        if isinstance(session_id, str) and header is not None:
            headers[session_id] = header
    members: dict[str, list[str]] = {}
    for session_id in headers:
        root = _root_of(session_id, headers)
        if root is not None and root != session_id:
            members.setdefault(root, []).append(session_id)
    stubs = []
    for session_id, header in headers.items():
        if header.parent_session and header.parent_session in headers:
            continue
        team = sorted(members.get(session_id, ()))
        times = [t for t in (headers[m].created_at for m in [session_id, *team]) if t]
        stubs.append(
            TeamStub(
                session_id,
                header.cwd or NO_WORKSPACE,
                header.created_at,
                tuple(team),
                max(times, default=None),
            )
        )
    stubs.sort(key=lambda stub: (stub.newest_at or 0, stub.lead), reverse=True)
    return Listing(
        teams=tuple(stub for stub in stubs if stub.members),
        singles=tuple(stub for stub in stubs if not stub.members),
        by_lead={stub.lead: stub for stub in stubs},
    )


def _root_of(session_id: str, headers: Mapping[str, SessionHeader]) -> str | None:
    """The topmost listed ancestor by ``parentSession``; ``None`` on a cycle."""
    seen = {session_id}
    current = session_id
    while True:
        parent = headers[current].parent_session
        if not parent or parent not in headers:
            return current
        if parent in seen:
            return None
        seen.add(parent)
        current = parent


@dataclass(frozen=True, slots=True)
class Activity:
    """What a team's summary said when it was last built: the cards' order."""

    live: bool
    last_activity: int | None


def team_card(
    stub: TeamStub,
    panel_url: str,
    timeline: Mapping[str, Any] | None,
    card_url: str = "",
    *,
    live: bool | None = None,
    stamp: str = "",
    activity: Activity | None = None,
    unavailable: str | None = None,
) -> TeamCard:
    """The card of one team; without its timeline, only what the session list says
    (and, when given, why there is no more). ``live`` is the timeline's own answer
    when the caller has it (else read from the JSON); ``activity`` places a card whose
    summary is not in yet where its last summary put it."""
    headers_only = TeamCard(
        stub.lead,
        stub.workspace,
        stub.created_at,
        panel_url,
        card_url,
        member_count=len(stub.members),
        newest_at=stub.newest_at,
        unavailable=unavailable,
        stamp=stamp,
    )
    if timeline is None:
        if activity is None:
            return headers_only
        return replace(headers_only, live=activity.live, last_activity=activity.last_activity)
    lanes = [lane for lane in _dicts(timeline.get("lanes")) if lane.get("kind") != "unassigned"]
    tasks = [t for t in _dicts(timeline.get("tasks")) if t.get("status") != "deleted"]
    lead = next((lane for lane in lanes if lane.get("kind") == "lead"), {})
    spans = [span for lane in lanes for span in _dicts(lane.get("spans"))]
    subject = next(
        (s.get("preview") for s in _dicts(lead.get("spans")) if s.get("kind") == "user-prompt"),
        None,
    )
    return replace(
        headers_only,
        summarised=True,
        member_count=sum(1 for lane in lanes if lane.get("kind") == "teammate"),
        live=bool(timeline.get("live")) if live is None else live,
        last_activity=last_activity(timeline),
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
        tokens_text=tokens_text(timeline.get("tokens")),
        tokens_title=tokens_title(timeline.get("tokens")),
    )


def order_key(
    live: bool, last_activity: int | None, newest_at: int | None, created_at: int | None
) -> tuple[bool, int]:
    """Live teams first, then by latest activity: the last event its summary read, or
    before a summary is in, its newest session's start (never a file's mtime, which a
    copy or a checkout changes)."""
    return (not live, -(last_activity or newest_at or created_at or 0))


def newest_first(card: TeamCard) -> tuple[bool, int]:
    return order_key(card.live, card.last_activity, card.newest_at, card.created_at)


def by_workspace(cards: Iterable[TeamCard]) -> tuple[WorkspaceGroup, ...]:
    """The cards in :func:`newest_first` order, each workspace where its first team is."""
    groups: dict[str, list[TeamCard]] = {}
    for card in sorted(cards, key=newest_first):
        groups.setdefault(card.workspace, []).append(card)
    return tuple(WorkspaceGroup(ws, tuple(teams)) for ws, teams in groups.items())


def summary_text(teams: int, workspaces: int, singles: int = 0) -> str:
    """``3 teams in 2 workspaces``, then ``· 5 single sessions`` when there are any."""
    text = f"{counted(teams, 'team')} in {counted(workspaces, 'workspace')}"
    return f"{text} · {counted(singles, 'single session')}" if singles else text


def last_activity(timeline: Mapping[str, Any]) -> int | None:
    """The frozen end of the range; while live, the newest span start or end (never now)."""
    time_range = timeline.get("range")
    end = time_range.get("end") if isinstance(time_range, Mapping) else None
    if isinstance(end, int):
        return end
    spans = [span for lane in _dicts(timeline.get("lanes")) for span in _dicts(lane.get("spans"))]
    times = [t for s in spans for t in (s.get("time"), s.get("end")) if isinstance(t, int)]
    return max(times, default=None)


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def placement(found: Listing, activity: Mapping[str, Activity]) -> dict[str, Any]:
    """Where every card goes, in the order :func:`by_workspace` gives the cards, for
    the live poll (the page moves its cards to match and fetches the ones it does not
    have). Leads and workspace paths only; the page sets the paths as text."""

    def key(stub: TeamStub) -> tuple[bool, int]:
        known = activity.get(stub.lead)
        live, last = (known.live, known.last_activity) if known else (False, None)
        return order_key(live, last, stub.newest_at, stub.created_at)

    groups: dict[str, list[str]] = {}
    for stub in sorted(found.teams, key=key):
        groups.setdefault(stub.workspace, []).append(stub.lead)
    return {
        "groups": [
            {"workspace": ws, "name": workspace_name(ws), "leads": leads}
            for ws, leads in groups.items()
        ],
        "singles": [stub.lead for stub in sorted(found.singles, key=key)],
        "summary": summary_text(len(found.teams), len(groups), len(found.singles))
        if found.teams or found.singles
        else "",
    }
