"""Who is on the team, in lane order, and how a member id or name resolves to a lane.

The one place the team's members are listed: the service reads the logs of
:func:`member_order`'s ids, and the timeline draws a lane for each of them (a member
whose log was not handed over is an ``unreadable`` lane).
"""

from __future__ import annotations

import functools
import itertools
from bisect import bisect_left
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..fold import EMPTY_FOLD, LaneFold, MemberHint, member_hints
from ..fold.text import key, text
from ..memo import Memo
from .colours import PALETTE
from .inputs import LaneSource, TeamSnapshot, descriptor_label, missing_source, seed_cut

#: Parties kept as shared objects (a team has a few dozen; the bound is for hostile
#: logs naming thousands of senders).
PARTIES_KEPT = 4096


def shared_party(party: Mapping[str, str]) -> dict[str, str]:
    """``party``'s ``kind``, ``id`` and ``name`` as one dict per distinct triple, shared
    by every span and detail that names it: a day holds tens of thousands of turns and
    messages, each naming its sender (and a message its recipient) three times. Never
    mutated, like the spans that hold it."""
    return _party(party["kind"], party["id"], party["name"])


@functools.lru_cache(maxsize=PARTIES_KEPT)
def _party(kind: str, ident: str, name: str) -> dict[str, str]:
    return {"kind": kind, "id": ident, "name": name}


class _Singles(list[dict[str, Any]]):
    """A run of spans a lane took one by one (``Lane.add``): a part of its own, never
    the same object as a part of another build."""

    __slots__ = ()


class SpanKeys:
    """A lane's span keys ``(kind, id)``: the key sets drawn whole (a lane's prompts,
    its message marks: a day holds tens of thousands, the very same objects from one
    build to the next) are kept as they are, not copied into one set on every build;
    single keys go in a set of their own. A lane's message marks come as their sorted
    ids (``join_ids``), looked up by bisection: a key set of them was made again (two
    copies of a day's keys) each time a message came."""

    __slots__ = ("_id_parts", "_own", "_parts")

    def __init__(self) -> None:
        #: (the one kind of every key in it, or ``None``; the keys).
        self._parts: list[tuple[str | None, frozenset[tuple[str, str]]]] = []
        #: (kind, sorted distinct ids).
        self._id_parts: list[tuple[str, Sequence[str]]] = []
        self._own: set[tuple[str, str]] = set()

    def __contains__(self, key: object) -> bool:
        if key in self._own or any(key in part for _kind, part in self._parts):
            return True
        if not self._id_parts or type(key) is not tuple or len(key) != 2:
            return False
        kind, ident = key
        return any(k == kind and _has(ids, ident) for k, ids in self._id_parts)

    def isdisjoint(self, keys: frozenset[tuple[str, str]]) -> bool:
        return (
            self._own.isdisjoint(keys)
            and all(part.isdisjoint(keys) for _kind, part in self._parts)
            and all(self.isdisjoint_ids_of(kind, ids, keys) for kind, ids in self._id_parts)
        )

    @staticmethod
    def isdisjoint_ids_of(kind: str, ids: Sequence[str], keys: Iterable[object]) -> bool:
        """Whether no key of ``keys`` is ``(kind, id)`` for an id of the sorted ``ids``."""
        return not any(
            type(key) is tuple and len(key) == 2 and key[0] == kind and _has(ids, key[1])
            for key in keys
        )

    def isdisjoint_ids(self, kind: str, ids: Sequence[str]) -> bool:
        """Whether no key ``(kind, id)`` for an id of ``ids`` (sorted, distinct) is
        here. A part drawn whole of another kind is passed over without a look."""
        if not self.isdisjoint_ids_of(kind, ids, self._own):
            return False
        for part_kind, part in self._parts:
            if part_kind in (None, kind) and not self.isdisjoint_ids_of(kind, ids, part):
                return False
        return all(k != kind or set(ids).isdisjoint(held) for k, held in self._id_parts)

    def add(self, key: tuple[str, str]) -> None:
        self._own.add(key)

    def join(self, keys: frozenset[tuple[str, str]], kind: str | None = None) -> None:
        """Add ``keys``, new to this lane (``kind``: every key's, when they share one)."""
        if keys:
            self._parts.append((kind, keys))

    def join_ids(self, kind: str, ids: Sequence[str]) -> None:
        """Add the keys ``(kind, id)`` of ``ids`` (sorted, distinct, new to this lane;
        held, not copied: never mutate them)."""
        if ids:
            self._id_parts.append((kind, ids))


def _has(ids: Sequence[str], ident: object) -> bool:
    """Whether the sorted ``ids`` hold ``ident`` (bisection: no set of a day's ids)."""
    if type(ident) is not str:
        return False
    at = bisect_left(ids, ident)
    return at < len(ids) and ids[at] == ident


@dataclass(slots=True)
class Lane:
    id: str
    kind: str
    name: str
    session_id: str | None
    slot: int | None
    source: LaneSource | None
    phase: str | None = None
    created_at: int | None = None
    #: What the member was asked to do (catalog label, descriptor label, description).
    label: str | None = None
    cut: int = 0
    #: The lane's spans as they were added: each sequence drawn whole (the very object,
    #: which the next build of an unchanged lane adds again) and each run of single
    #: spans (a list of this build's own). An unchanged lane is known by its parts, and
    #: what changed since a lane's last build is found part by part
    #: (``identity.parts_changes``), not by passes over its day of spans.
    parts: list[Sequence[dict[str, Any]]] = field(default_factory=list)
    span_keys: SpanKeys = field(default_factory=SpanKeys)
    task_ids: list[str] = field(default_factory=list)
    _joined: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def spans(self) -> list[dict[str, Any]]:
        """Every span of the lane, its parts one after the other (joined when first asked
        for: a build asks for an unchanged lane's only when its parts are not enough)."""
        if self._joined is None:
            self._joined = list(itertools.chain.from_iterable(self.parts))
        return self._joined

    @property
    def fold(self) -> LaneFold:
        return self.source.fold if self.source is not None else EMPTY_FOLD

    def party(self) -> dict[str, str]:
        """The lane's member as a span names it (shared: never mutate it)."""
        return _party(self.kind, self.id, self.name)

    def add_turns(self, spans: Sequence[dict[str, Any]]) -> None:
        """Add the lane's turn spans, drawn first and once per lane: no key of another
        kind is a turn's, so they take no key (a day holds tens of thousands; a key set
        of them cost ~150 bytes a turn and a copy of the set at each new turn)."""
        self.parts.append(spans)
        self._joined = None

    def add_unique(
        self,
        spans: Sequence[dict[str, Any]],
        keys: frozenset[tuple[str, str]],
        kind: str | None = None,
    ) -> None:
        """Add ``spans`` whose ``keys`` are distinct and new to this lane (``kind``: every
        key's, when they share one)."""
        self.parts.append(spans)
        self.span_keys.join(keys, kind)
        self._joined = None

    def add_unique_ids(
        self, spans: Sequence[dict[str, Any]], kind: str, ids: Sequence[str]
    ) -> None:
        """Add ``spans``, each of ``kind``, whose ids are ``ids`` (sorted, distinct, new to
        this lane)."""
        self.parts.append(spans)
        self.span_keys.join_ids(kind, ids)
        self._joined = None

    def add(self, span: dict[str, Any]) -> bool:
        mark = (span["kind"], span["id"])
        if mark in self.span_keys:
            return False
        self.span_keys.add(mark)
        self._joined = None
        last = self.parts[-1] if self.parts else None
        if isinstance(last, _Singles):
            last.append(span)
        else:
            self.parts.append(_Singles((span,)))
        return True

    def restores(self) -> bool:
        """Whether the lane's ``session/end-seed`` markers are reloads: its log
        inherited nothing (an unseeded header and no inherited count)."""
        header = self.source.header if self.source else None
        return self.cut == 0 and not (header is not None and header.is_seeded)

    def is_child_session(self) -> bool:
        """A subagent child's log: its header names a parent or says ``origin: subagent``."""
        header = self.source.header if self.source else None
        return header is not None and (
            header.parent_session is not None or header.origin == "subagent"
        )


@dataclass(frozen=True, slots=True)
class MemberOrder:
    """The team's members in lane order, and what ordering them learnt."""

    #: The lead's own ids: the root, the lead's session, its header's id, live lead rows.
    lead_ids: frozenset[str]
    #: Member ids in lane order (the lead not among them).
    ids: tuple[str, ...]
    #: Names the live roster gives.
    live_names: Mapping[str, str]
    #: What the lead's log says of each member (its own records, after the seed cut).
    hints: Mapping[str, MemberHint]


def member_order(
    root_session_id: str,
    lead: LaneSource,
    live_members: Sequence[Mapping[str, Any]] | None,
    extra: Iterable[str],
) -> MemberOrder:
    """Live members first, then members known from the lead's log, then ``extra``
    (running children, every session whose header names the root as its parent —
    cold ones too: older logs have no catalog — then the requested session, which is
    always a lane of its own timeline)."""
    lead_ids = {
        i
        for i in (
            key(root_session_id),
            key(lead.session_id),
            lead.header.id if lead.header else None,
        )
        if i
    }
    # Insertion-ordered, so membership is a hash look-up: a team read from months of
    # logs offers thousands of hints and children.
    order: dict[str, None] = {}
    live_names: dict[str, str] = {}
    for index, row in enumerate(live_members or ()):
        if not isinstance(row, Mapping):
            continue
        row_id = key(row.get("id"))
        if row_id is None:
            continue
        is_lead = row.get("role") == "lead" or (index == 0 and row.get("name") == "lead")
        if is_lead or row_id in lead_ids:
            lead_ids.add(row_id)
            continue
        name = text(row.get("name"))
        if name:
            live_names.setdefault(row_id, name)
        order.setdefault(row_id)
    team_ids = frozenset(lead_ids)
    hints = {h.id: h for h in member_hints(lead.fold, seed_cut(lead), team_ids)}
    for hint_id in hints:
        if hint_id not in lead_ids:
            order.setdefault(hint_id)
    for child in extra:
        child_id = key(child)
        if child_id and child_id not in lead_ids:
            order.setdefault(child_id)
    return MemberOrder(team_ids, tuple(order), live_names, hints)


def is_ours(team_id: str | None, lead_ids: Collection[str], foreign: dict[str, int]) -> bool:
    """Whether a ``team/*`` record is the team's; another team's is counted in ``foreign``."""
    if team_id is None or team_id in lead_ids:
        return True
    foreign[team_id] = foreign.get(team_id, 0) + 1
    return False


#: Roster signatures by number (numbers are never reused, so an evicted roster cannot
#: make a message drawn for another roster look current). Bounded by entries (each a
#: roster's ids and names).
_ROSTER_TOKENS: Memo[tuple[Any, ...], int] = Memo(64)
_TOKEN_COUNTER = itertools.count()


class Roster:
    """The lanes (lead first) and the names that resolve to them."""

    def __init__(self, team: TeamSnapshot, foreign: dict[str, int]) -> None:
        #: Another team's ``team/*`` records seen, by teamId (counted, not used).
        self.foreign = foreign
        self.lead_source = team.lead if isinstance(team.lead, LaneSource) else missing_source(None)
        self.lead_session = key(self.lead_source.session_id) or key(team.root_session_id) or "lead"
        order = member_order(
            team.root_session_id,
            self.lead_source,
            team.live_members,
            (
                *(team.running_children or ()),
                *(team.child_sessions or ()),
                team.requested_session_id,
            ),
        )
        self.lead_ids = order.lead_ids
        self.lanes: list[Lane] = []
        self.by_id: dict[str, Lane] = {}
        self.aliases: dict[str, set[str]] = {}
        lead = Lane("lead", "lead", "lead", self.lead_session, 0, self.lead_source)
        lead.cut = seed_cut(self.lead_source)
        header = self.lead_source.header
        lead.created_at = header.created_at if header else None
        lead.label = descriptor_label(lead.fold, lead.cut)
        self._add_lane(lead, ("lead",))
        for seq, member in lead.fold.members.items():
            if seq >= lead.cut:
                self.ours(member.team_id)  # counts another team's records
        members = team.members if isinstance(team.members, Mapping) else {}
        for n, member_id in enumerate(order.ids, start=1):
            hint = order.hints.get(member_id)
            source = members.get(member_id)
            if not isinstance(source, LaneSource):
                source = missing_source(member_id)
            live_name = order.live_names.get(member_id)
            name = live_name or (hint.name if hint else None) or member_id
            lane = Lane(member_id, "teammate", name, member_id, n % len(PALETTE), source)
            lane.cut = seed_cut(source)
            lane.phase = hint.phase if hint else None
            lane.created_at = (hint.created_at if hint else None) or (
                source.header.created_at if source.header else None
            )
            lane.label = (
                (hint.label if hint else None)
                or descriptor_label(source.fold, lane.cut)
                or (hint.description if hint else None)
            )
            aliases = [*(hint.aliases if hint else ()), *([live_name] if live_name else [])]
            self._add_lane(lane, aliases)

    def _add_lane(self, lane: Lane, aliases: Iterable[str]) -> None:
        self.lanes.append(lane)
        self.by_id[lane.id] = lane
        for alias in aliases:
            self.aliases.setdefault(alias, set()).add(lane.id)

    @property
    def lead(self) -> Lane:
        return self.by_id["lead"]

    def resolve(self, who: str | None) -> Lane | None:
        """A member id (lead's session id → lead) first, then any unambiguous alias."""
        if who is None:
            return None
        if who in self.lead_ids:
            return self.by_id["lead"]
        lane = self.by_id.get(who)
        if lane is not None and lane.kind == "teammate":
            return lane
        named = self.aliases.get(who, set())
        return self.by_id[next(iter(named))] if len(named) == 1 else None

    def actor_of(self, session_id: str) -> str | None:
        lane = self.resolve(session_id)
        return lane.name if lane else None

    def ours(self, team_id: str | None) -> bool:
        """A ``team/*`` record is this team's when its teamId is the root's (or it has
        none): a lead's log can hold an ancestor's records, inherited. Others are
        counted, not used."""
        return is_ours(team_id, self.lead_ids, self.foreign)

    def token(self) -> int:
        """A number for everything :meth:`resolve` reads: equal rosters, equal numbers."""
        signature = (
            self.lead_session,
            frozenset(self.lead_ids),
            frozenset((lane.id, lane.kind, lane.name) for lane in self.lanes),
            frozenset((alias, frozenset(ids)) for alias, ids in self.aliases.items()),
        )
        token = _ROSTER_TOKENS.get(signature)
        if token is None:
            token = _ROSTER_TOKENS.put(signature, next(_TOKEN_COUNTER))
        return token
