"""The timeline: the honest model of what a team did (pure, total, order-free).

Input is a :class:`TeamSnapshot` (the folds of the lead's and each member's log plus
what the live services said); output is the timeline JSON of docs/interfaces.md. The
rules it follows are docs/host-contract.md's ("Rules the picture follows"); the
decisions this module adds are:

- the inherited prefix of a forked log is cut here (the cut is only known after
  folding): turns, prompts, tool calls and ``team/*`` records with ``seq < cut`` are
  not used for that lane;
- ``team/*`` records are only taken from the lead's log;
- a roster member whose log the shell did not hand over is ``unreadable``;
- a deleted task stays in ``tasks`` (status ``deleted``, full history) but is on no
  lane's ``taskIds`` and never calls the ``unassigned`` lane into being;
- a message whose sender is outside the team is drawn on the recipient's lane only;
  one with neither end on the roster, or without any time, is not drawn (counted);
- a human prompt's detail has ``queuedAt = null`` and ``deliveredAt`` = its time
  (the log records when it reached the agent, not when it was typed);
- ``range.start`` is the earliest span or task-history time; when nothing at all
  was dated, a frozen timeline falls back to the headers' ``createdAt`` for
  ``range.end`` and otherwise leaves it null (with a note).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .events import Channel, SessionHeader, as_int
from .fold import EMPTY_FOLD, LaneFold, member_hints, seqs_below
from .fold.messages import MessagePairing, PairedMessage, pair_messages
from .fold.records import PromptRec, TaskCallRec
from .fold.tasks import CallIndex, TaskView, replay_tasks
from .fold.text import MESSAGE_BODY_CAP, key, preview, text
from .fold.turns import TurnPairing, TurnSpan, pair_turns

__all__ = [
    "MESSAGE_BODY_CAP",
    "ON_COLOR",
    "PALETTE",
    "UNASSIGNED_COLOR",
    "LaneSource",
    "TeamSnapshot",
    "build_timeline",
    "message_detail",
    "seed_cut",
]

#: Lane colours: (design-system token, light-skin fallback), assigned by position.
PALETTE: tuple[tuple[str, str], ...] = (
    ("--dsw-alias-state-business-primary", "rgb(65,118,230)"),
    ("--dsw-alias-state-success-primary", "rgb(34,197,94)"),
    ("--dsw-alias-state-warn-primary", "rgb(245,158,11)"),
    ("--dsw-alias-state-error-primary", "rgb(236,19,19)"),
    ("--dsw-alias-state-idle-primary", "rgb(212,212,212)"),
)
#: Text on a filled lane colour.
ON_COLOR: tuple[str, str] = ("--dsw-alias-label-primary-inverted", "rgb(255,255,255)")
#: The ``unassigned`` lane's own neutral colour (takes no palette slot).
UNASSIGNED_COLOR: tuple[str, str] = ("--dsh-gantt-unassigned", "rgb(148,163,184)")


_KIND_ORDER = {"turn": 0, "message": 1, "user-prompt": 2}
_USER = {"kind": "user", "id": "user", "name": "you"}
_UNKNOWN_SENDER = {"kind": "system", "id": "system", "name": "unknown sender"}


@dataclass(frozen=True, slots=True)
class LaneSource:
    session_id: str | None
    channel: Channel
    error: str | None
    header: SessionHeader | None
    #: From the host's handle/session (priority 1 for the seed cut).
    inherited_event_count: int | None
    #: From the live agents registry; ``None`` when the agent is not live.
    agent_status: Literal["running", "idle"] | None
    fold: LaneFold = EMPTY_FOLD
    #: The persisted file read (``session.v3.jsonl.zstd``: its name says the format).
    log_name: str | None = None
    #: Where a log that turns to garbage after readable frames stopped being read.
    stopped_at: str | None = None


@dataclass(frozen=True, slots=True)
class TeamSnapshot:
    requested_session_id: str
    root_session_id: str
    lead: LaneSource
    members: Mapping[str, LaneSource]
    live_members: Sequence[Mapping[str, Any]] | None
    live_tasks: Sequence[Mapping[str, Any]] | None
    running_children: Sequence[str]
    #: Only for ``generatedAt``; never used as an event time.
    generated_at: int
    service_notes: Sequence[str] = ()
    #: Sessions whose header names the root as ``parentSession`` (running or not).
    child_sessions: Sequence[str] = ()


def seed_cut(source: LaneSource) -> int:
    """Events with ``seq`` below this were inherited from the parent.

    Sources, in order: the host's count, the header's ``inheritedEventCount`` (or
    format 0's ``seedLength``), the child's ``subagent/descriptor``
    ``inheritedEventCount``, and for a seeded header the last inherited
    ``session/end-seed``. The counts are counts of events (positions): where a log's
    seqs start at 1 (format 0), the first own event's seq is the count plus 1.
    """
    fold = source.fold if isinstance(source.fold, LaneFold) else EMPTY_FOLD
    first_seq = fold.seq_ranges[0][0] if fold.seq_ranges else 0
    count = as_int(source.inherited_event_count)
    header = source.header if isinstance(source.header, SessionHeader) else None
    if count is None or count < 0:
        count = as_int(header.inherited_event_count) if header is not None else None
    if count is None or count < 0:
        count = descriptor_count(fold)
    if count is not None and count >= 0:
        return count + first_seq if count > 0 else 0
    if header is not None and header.is_seeded is True and fold.seed_end_seq is not None:
        return fold.seed_end_seq
    return 0


def descriptor_count(fold: LaneFold) -> int | None:
    """``inheritedEventCount`` of the log's first ``subagent/descriptor`` that has one."""
    for _seq, rec in sorted(fold.descriptors.items()):
        if rec.inherited_count is not None:
            return rec.inherited_count
    return None


def _descriptor_label(fold: LaneFold, cut: int = 0) -> str | None:
    """The log's own descriptor label: a forked child may carry its parent's
    descriptor in the inherited prefix, so one at or after the cut comes first."""
    labels = sorted(
        (seq < cut, seq, rec.label) for seq, rec in fold.descriptors.items() if rec.label
    )
    return labels[0][2] if labels else None


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


@dataclass(slots=True)
class _Lane:
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
    spans: list[dict[str, Any]] = field(default_factory=list)
    span_keys: set[tuple[str, str]] = field(default_factory=set)
    task_ids: list[str] = field(default_factory=list)

    @property
    def fold(self) -> LaneFold:
        return self.source.fold if self.source is not None else EMPTY_FOLD

    def party(self) -> dict[str, str]:
        return {"kind": self.kind, "id": self.id, "name": self.name}

    def add_unique(self, spans: list[dict[str, Any]], keys: frozenset[tuple[str, str]]) -> None:
        """Add ``spans`` whose ``keys`` are distinct and new to this lane (a lane's turns)."""
        self.spans.extend(spans)
        self.span_keys |= keys

    def add(self, span: dict[str, Any]) -> bool:
        mark = (span["kind"], span["id"])
        if mark in self.span_keys:
            return False
        self.span_keys.add(mark)
        self.spans.append(span)
        return True


@dataclass(slots=True)
class _Counts:
    """Every count that goes into notes and diagnostics."""

    messages: dict[str, int] = field(default_factory=dict)
    message_marks: int = 0
    pending: int = 0
    prompts: int = 0
    prompt_copies: int = 0
    undated_prompts: int = 0
    injected: dict[str, int] = field(default_factory=dict)
    skipped_inherited: dict[str, int] = field(default_factory=dict)
    turns: int = 0
    open_turns: int = 0
    orphan_ends: int = 0
    duplicate_starts: int = 0
    ends_before_start: int = 0
    undated_turns: int = 0
    idless_turn_events: int = 0
    closed_by_idless_end: int = 0
    closed_by_restore: int = 0
    relays: int = 0
    briefs: int = 0
    relay_copies: int = 0
    #: ``team/*`` records of another team in the lead's log, by teamId.
    foreign: dict[str, int] = field(default_factory=dict)


class _Model:
    """Everything derived from a snapshot; built once per request."""

    def __init__(self, team: TeamSnapshot) -> None:
        self.team = team
        self.counts = _Counts()
        self.notes: list[str] = [n for n in (text(s, 4096) for s in team.service_notes) if n]
        self.lead_source = team.lead if isinstance(team.lead, LaneSource) else _missing(None)
        self.lead_session = key(self.lead_source.session_id) or key(team.root_session_id) or "lead"
        self.lead_ids = {
            i
            for i in (
                key(team.root_session_id),
                key(self.lead_source.session_id),
                self.lead_source.header.id if self.lead_source.header else None,
            )
            if i
        }
        self.lanes: list[_Lane] = []
        self.by_id: dict[str, _Lane] = {}
        self.aliases: dict[str, set[str]] = {}
        self.message_details: dict[str, dict[str, Any]] = {}
        self._build_roster()
        self._draw_turns()
        self._draw_prompts()
        self._draw_messages()
        self._replay_tasks()

    # -- roster ----------------------------------------------------------------------
    def _build_roster(self) -> None:
        team = self.team
        lead = _Lane("lead", "lead", "lead", self.lead_session, 0, self.lead_source)
        lead.cut = seed_cut(self.lead_source)
        header = self.lead_source.header
        lead.created_at = header.created_at if header else None
        lead.label = _descriptor_label(lead.fold, lead.cut)
        self._add_lane(lead, ("lead",))
        order: list[str] = []
        live_names: dict[str, str] = {}
        for index, row in enumerate(team.live_members or ()):
            if not isinstance(row, Mapping):
                continue
            row_id = key(row.get("id"))
            if row_id is None:
                continue
            is_lead = row.get("role") == "lead" or (index == 0 and row.get("name") == "lead")
            if is_lead or row_id in self.lead_ids:
                self.lead_ids.add(row_id)
                continue
            name = text(row.get("name"))
            if name:
                live_names.setdefault(row_id, name)
            if row_id not in order:
                order.append(row_id)
        team_ids = frozenset(self.lead_ids)
        for seq, member in lead.fold.members.items():
            if seq >= lead.cut:
                self.ours(member.team_id)  # counts another team's records
        hints = {h.id: h for h in member_hints(lead.fold, lead.cut, team_ids)}
        for hint_id in hints:
            if hint_id not in order and hint_id not in self.lead_ids:
                order.append(hint_id)
        # Running children, then every session whose header names the root as its
        # parent (cold ones too: older logs have no catalog), then the requested
        # session: it is always a lane of its own timeline.
        for child in (
            *(team.running_children or ()),
            *(team.child_sessions or ()),
            team.requested_session_id,
        ):
            child_id = key(child)
            if child_id and child_id not in order and child_id not in self.lead_ids:
                order.append(child_id)
        members = team.members if isinstance(team.members, Mapping) else {}
        for n, member_id in enumerate(order, start=1):
            hint = hints.get(member_id)
            source = members.get(member_id)
            if not isinstance(source, LaneSource):
                source = _missing(member_id)
            live_name = live_names.get(member_id)
            name = live_name or (hint.name if hint else None) or member_id
            lane = _Lane(member_id, "teammate", name, member_id, n % len(PALETTE), source)
            lane.cut = seed_cut(source)
            lane.phase = hint.phase if hint else None
            lane.created_at = (hint.created_at if hint else None) or (
                source.header.created_at if source.header else None
            )
            lane.label = (
                (hint.label if hint else None)
                or _descriptor_label(source.fold, lane.cut)
                or (hint.description if hint else None)
            )
            aliases = [*(hint.aliases if hint else ()), *([live_name] if live_name else [])]
            self._add_lane(lane, aliases)

    def _add_lane(self, lane: _Lane, aliases: Iterable[str]) -> None:
        self.lanes.append(lane)
        self.by_id[lane.id] = lane
        for alias in aliases:
            self.aliases.setdefault(alias, set()).add(lane.id)

    def resolve(self, who: str | None) -> _Lane | None:
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

    # -- spans -----------------------------------------------------------------------
    def _draw_turns(self) -> None:
        c = self.counts
        for lane in self.lanes:
            skipped = seqs_below(lane.fold, lane.cut) if lane.cut > 0 else 0
            if skipped:
                c.skipped_inherited[lane.id] = skipped
            pairing: TurnPairing = pair_turns(lane.fold, lane.cut, _restores(lane))
            session = lane.session_id or self.lead_session
            spans, keys = _turn_spans(pairing, lane.party(), session)
            if lane.span_keys.isdisjoint(keys):
                lane.add_unique(spans, keys)
            else:
                for span in spans:
                    lane.add(span)
            c.turns += len(pairing.spans)
            c.open_turns += pairing.open_turns
            c.orphan_ends += pairing.orphan_ends
            c.duplicate_starts += pairing.duplicate_starts
            c.ends_before_start += pairing.ends_before_start
            c.undated_turns += pairing.undated_starts
            c.idless_turn_events += pairing.idless_events
            c.closed_by_idless_end += pairing.closed_by_idless_end
            c.closed_by_restore += pairing.closed_by_restore
            for seq, kind in lane.fold.injected.items():
                if seq >= lane.cut:
                    c.injected[kind] = c.injected.get(kind, 0) + 1

    def _draw_prompts(self) -> None:
        c = self.counts
        drawn: set[tuple[Any, ...]] = set()
        undated: set[tuple[Any, ...]] = set()
        #: Parent agents' briefs: (lane, seq, prompt), drawn as messages.
        self.briefs: list[tuple[_Lane, int, PromptRec]] = []
        for lane in self.lanes:
            session = lane.session_id or self.lead_session
            own = sorted(item for item in lane.fold.prompts.items() if item[0] >= lane.cut)
            if own and own[0][1].brief_from is not None and _is_child_session(lane):
                # A subagent child's first "user" message is its parent's brief.
                self.briefs.append((lane, *own[0]))
                own = own[1:]
            for seq, prompt in own:
                ident: tuple[Any, ...] = (
                    ("id", prompt.id) if prompt.id else ("text", prompt.time, prompt.body)
                )
                if ident in drawn:
                    c.prompt_copies += 1
                    continue
                if prompt.time is None:
                    undated.add(ident)
                    continue
                drawn.add(ident)
                prompt_id = prompt.id or f"prompt-{seq}@{session}"
                lane.add(
                    {
                        "kind": "user-prompt",
                        "id": prompt_id,
                        "time": prompt.time,
                        "end": None,
                        "from": dict(_USER),
                        "to": lane.party(),
                        "direction": "incoming",
                        "preview": preview(prompt.body),
                        "sessionId": session,
                    }
                )
                c.prompts += 1
                self.message_details.setdefault(prompt_id, _prompt_detail(prompt_id, prompt, lane))
        c.undated_prompts = len(undated - drawn)

    def _draw_messages(self) -> None:
        c = self.counts
        lead = self.by_id["lead"]
        fold, cut = lead.fold, lead.cut
        pairing, foreign = _paired_messages(self.lead_session, fold, cut, self.lead_ids)
        for team_id, n in foreign.items():  # another team's records: counted, not used
            c.foreign[team_id] = c.foreign.get(team_id, 0) + n
        tally = {
            "two lanes": 0,
            "target outside": 0,
            "sender outside": 0,
            "no queue record": 0,
            "to itself": 0,
            "not drawn": 0,
        }
        for msg, drawn in zip(pairing.messages, self._drawn(pairing), strict=True):
            self.message_details[msg.id] = drawn.detail
            c.pending += drawn.pending
            tally[drawn.category] += 1
            for lane_id, span in drawn.marks:
                if self.by_id[lane_id].add(span):
                    c.message_marks += 1
        self._draw_relays(tally)
        c.messages = tally
        self.duplicate_queued = pairing.duplicate_queued
        self.duplicate_delivered = pairing.duplicate_delivered

    def roster_token(self) -> int:
        """A number for everything :meth:`resolve` reads: equal rosters, equal numbers."""
        signature = (
            self.lead_session,
            frozenset(self.lead_ids),
            frozenset((lane.id, lane.kind, lane.name) for lane in self.lanes),
            frozenset((alias, frozenset(ids)) for alias, ids in self.aliases.items()),
        )
        token = _ROSTER_TOKENS.get(signature)
        if token is None:
            if len(_ROSTER_TOKENS) >= _ROSTER_TOKENS_MAX:
                _ROSTER_TOKENS.pop(next(iter(_ROSTER_TOKENS)))
            token = _ROSTER_TOKENS[signature] = next(_TOKEN_COUNTER)
        return token

    def _drawn(self, pairing: MessagePairing) -> tuple[_DrawnMessage, ...]:
        """Each paired message drawn for this roster (the last pairing's drawing is kept
        whole: most appends add no message and keep the pairing)."""
        roster = self.roster_token()
        held = _LAST_DRAWN.get(self.lead_session)
        if held is not None and held[0] is pairing and held[1] == roster:
            return held[2]
        drawn_all = []
        for msg in pairing.messages:
            drawn_key = (msg, roster)
            drawn = _DRAWN_MESSAGES.get(drawn_key)
            if drawn is None:
                drawn = self._draw_message(msg)
                if len(_DRAWN_MESSAGES) >= _DRAWN_MESSAGES_MAX:
                    _DRAWN_MESSAGES.pop(next(iter(_DRAWN_MESSAGES)))
                _DRAWN_MESSAGES[drawn_key] = drawn
            drawn_all.append(drawn)
        _LAST_DRAWN.pop(self.lead_session, None)
        if len(_LAST_DRAWN) >= _PAIRINGS_MAX:
            _LAST_DRAWN.pop(next(iter(_LAST_DRAWN)))
        _LAST_DRAWN[self.lead_session] = (pairing, roster, tuple(drawn_all))
        return tuple(drawn_all)

    def _draw_message(self, msg: PairedMessage) -> _DrawnMessage:
        """One message's detail, its category for the notes, and its marks by lane."""
        q = msg.queued
        sender = self.resolve(q.sender_id) or self.resolve(q.sender_name) if q else None
        target = self.resolve(msg.target_id)
        if q is None:
            src = dict(_UNKNOWN_SENDER)
        elif sender is not None:
            src = sender.party()
        else:
            src = {
                "kind": "system",
                "id": q.sender_id or "unknown",
                "name": q.sender_name or q.sender_id or "unknown sender",
            }
        dst: dict[str, str] | None
        if target is not None:
            dst = target.party()
        elif msg.target_id is not None:
            dst = {"kind": "system", "id": msg.target_id, "name": msg.target_id}
        else:
            dst = None
        when = msg.time
        places: list[_Lane] = []
        if when is not None:
            if q is None:
                category = "no queue record" if target else "not drawn"
                places = [target] if target else []
            elif sender is not None and target is not None:
                category = "to itself" if sender is target else "two lanes"
                places = [sender] if sender is target else [sender, target]
            elif sender is not None:
                category, places = "target outside", [sender]
            elif target is not None:
                category, places = "sender outside", [target]
            else:
                category = "not drawn"
        else:
            category = "not drawn"
        body_preview = preview(q.body) if q else "(delivered; its queue record is not in the log)"
        marks = []
        for lane in places:
            direction = "outgoing" if lane is sender and lane is not target else "incoming"
            span = {
                "kind": "message",
                "id": msg.id,
                "time": when,
                "end": None,
                "from": dict(src),
                "to": dict(dst) if dst else None,
                "direction": direction,
                "preview": body_preview,
                "sessionId": self.lead_session,
                # Beyond the documented Span: lets the panel show "delivery pending".
                "deliveredAt": msg.delivered.time if msg.delivered else None,
            }
            marks.append((lane.id, span))
        return _DrawnMessage(
            detail=_message_detail(msg, src, dst),
            category=category,
            pending=q is not None and msg.delivered is None,
            marks=tuple(marks),
        )

    def ours(self, team_id: str | None) -> bool:
        """A ``team/*`` record is this team's when its teamId is the root's (or it has
        none): a lead's log can hold an ancestor's records, inherited. Others are
        counted, not used."""
        return _is_ours(team_id, self.lead_ids, self.counts.foreign)

    def _draw_relays(self, tally: dict[str, int]) -> None:
        """Messages between a parent agent and its child, read from the recipient's
        log: relays (``senderSessionId``) and a child's brief. Drawn on both lanes
        like team messages, each message id once across all logs."""
        c = self.counts
        items: list[tuple[_Lane, int, str | None, str, int | None, str, int, bool]] = []
        for lane in self.lanes:
            for seq, relay in sorted(lane.fold.relays.items()):
                if seq >= lane.cut:
                    items.append(
                        (
                            lane,
                            seq,
                            relay.id,
                            relay.sender_session,
                            relay.time,
                            relay.body,
                            relay.length,
                            False,
                        )
                    )
        for lane, seq, prompt in self.briefs:
            header = lane.source.header if lane.source else None
            parent = prompt.brief_from or (header.parent_session if header else None)
            if self.resolve(parent) is None and header is not None and header.parent_session:
                parent = header.parent_session
            items.append(
                (
                    lane,
                    seq,
                    prompt.id,
                    parent or "unknown",
                    prompt.time,
                    prompt.body,
                    prompt.length,
                    True,
                )
            )
        seen: set[str] = set()
        for recipient, seq, message_id, sender_id, when, body, length, brief in items:
            session = recipient.session_id or self.lead_session
            ident = message_id or f"relay-{seq}@{session}"
            if ident in seen:
                c.relay_copies += 1
                continue
            seen.add(ident)
            sender = self.resolve(sender_id)
            src = (
                sender.party()
                if sender is not None
                else {"kind": "system", "id": sender_id, "name": sender_id}
            )
            dst = recipient.party()
            c.briefs += brief
            c.relays += not brief
            self.message_details[ident] = {
                "id": ident,
                "from": dict(src),
                "to": dict(dst),
                "queuedAt": None,
                "deliveredAt": when,
                "body": body,
                "length": length,
                "truncated": length > MESSAGE_BODY_CAP,
            }
            if when is None:
                tally["not drawn"] += 1
                continue
            if sender is recipient:
                tally["to itself"] += 1
                places = [recipient]
            elif sender is not None:
                tally["two lanes"] += 1
                places = [sender, recipient]
            else:
                tally["sender outside"] += 1
                places = [recipient]
            for lane in places:
                direction = "outgoing" if lane is sender and lane is not recipient else "incoming"
                span = {
                    "kind": "message",
                    "id": ident,
                    "time": when,
                    "end": None,
                    "from": dict(src),
                    "to": dict(dst),
                    "direction": direction,
                    "preview": preview(body),
                    "sessionId": session,
                    "deliveredAt": when,
                }
                if lane.add(span):
                    c.message_marks += 1

    # -- tasks -----------------------------------------------------------------------
    def _replay_tasks(self) -> None:
        calls: list[tuple[str, int, TaskCallRec]] = []
        for lane in self.lanes:
            session = lane.session_id or self.lead_session
            calls.extend(
                (session, s, call) for s, call in lane.fold.task_calls.items() if s >= lane.cut
            )
        lead = self.by_id["lead"]
        snapshots = [
            (s, t) for s, t in lead.fold.tasks.items() if s >= lead.cut and self.ours(t.team_id)
        ]
        live = self.team.live_tasks if isinstance(self.team.live_tasks, Sequence) else None
        self.replay = replay_tasks(snapshots, CallIndex.build(calls), self.actor_of, live)
        self.tasks: list[dict[str, Any]] = []
        self.orphaned_owner = 0
        self.deleted = 0
        needs_unassigned = False
        for view in self.replay.tasks:
            owner = self.resolve(view.owner_id) if view.owner_id else None
            if owner is None and view.owner_name:
                owner = self.resolve(view.owner_name)
            if view.owner_id and owner is None:
                self.orphaned_owner += 1
            lane_id = owner.id if owner else "unassigned"
            if view.status == "deleted":
                self.deleted += 1
            elif owner is not None:
                owner.task_ids.append(view.id)
            else:
                needs_unassigned = True
            self.tasks.append(_task_json(view, owner, lane_id))
        if needs_unassigned:
            lane = _Lane("unassigned", "unassigned", "unassigned", None, None, None)
            lane.task_ids = [
                t["id"]
                for t in self.tasks
                if t["laneId"] == "unassigned" and t["status"] != "deleted"
            ]
            self.lanes.append(lane)

    # -- whole -----------------------------------------------------------------------
    def live(self) -> bool:
        """A property of the team, whichever of its sessions was asked for: some
        lane's agent is running, or the team root's own log has an open turn (after
        the closing rules). An open turn in a cold member's log is history (dead
        teams end on unclosed turns)."""
        if any(lane.source and lane.source.agent_status == "running" for lane in self.lanes):
            return True
        if any(key(child) for child in self.team.running_children or ()):
            return True
        root = self.by_id["lead"]
        return pair_turns(root.fold, root.cut, _restores(root)).open_turns > 0


#: Turn spans drawn recently, by pairing identity and the lane they are drawn for. A
#: poll after an append redraws every lane; unchanged lanes reuse their spans (the
#: span dicts are never mutated once built). The entry holds the pairing, so its id
#: cannot be reused while the entry lives.
_TurnSpans = tuple[list[dict[str, Any]], frozenset[tuple[str, str]]]
_TURN_SPANS: dict[tuple[int, str, str, str, str], tuple[TurnPairing, _TurnSpans]] = {}
_TURN_SPANS_MAX = 256
#: Each turn's span, by value: after an append the lane's pairing is new, but all its
#: turns except the last few are equal to before and keep their span.
_TURN_SPAN: dict[tuple[TurnSpan, str, str, str, str], dict[str, Any]] = {}
_TURN_SPAN_MAX = 1 << 14  # a big team has ~8,000 turns; each span is ~1 KB


def _turn_spans(pairing: TurnPairing, party: dict[str, str], session: str) -> _TurnSpans:
    """The lane's turn spans, and their ``(kind, id)`` keys (distinct: one per turn id)."""
    lane_key = (party["kind"], party["id"], party["name"], session)
    key = (id(pairing), *lane_key)
    hit = _TURN_SPANS.get(key)
    if hit is not None and hit[0] is pairing:
        return hit[1]
    spans = []
    for turn in pairing.spans:
        turn_key = (turn, *lane_key)
        span = _TURN_SPAN.get(turn_key)
        if span is None:
            label = turn.reason if turn.closed else "no end recorded"
            span = {
                "kind": "turn",
                "id": turn.turn_id,
                "time": turn.time,
                "end": turn.end,
                "from": dict(party),
                "to": None,
                "direction": None,
                "preview": preview(f"turn {turn.turn_id} · {label}"),
                "sessionId": session,
            }
            if len(_TURN_SPAN) >= _TURN_SPAN_MAX:
                _TURN_SPAN.pop(next(iter(_TURN_SPAN)))
            _TURN_SPAN[turn_key] = span
        spans.append(span)
    drawn = (spans, frozenset(("turn", turn.turn_id) for turn in pairing.spans))
    if len(_TURN_SPANS) >= _TURN_SPANS_MAX:
        _TURN_SPANS.pop(next(iter(_TURN_SPANS)))
    _TURN_SPANS[key] = (pairing, drawn)
    return drawn


def _restores(lane: _Lane) -> bool:
    """Whether the lane's ``session/end-seed`` markers are reloads: its log inherited
    nothing (an unseeded header and no inherited count)."""
    header = lane.source.header if lane.source else None
    return lane.cut == 0 and not (header is not None and header.is_seeded)


def _is_child_session(lane: _Lane) -> bool:
    """A subagent child's log: its header names a parent or says ``origin: subagent``."""
    header = lane.source.header if lane.source else None
    return header is not None and (header.parent_session is not None or header.origin == "subagent")


#: Member phases in which having no log is expected rather than a loss.
_NO_LOG_YET_PHASES = frozenset({"failed", "provisioning"})


def _missing(session_id: str | None) -> LaneSource:
    return LaneSource(
        session_id=session_id,
        channel="unreadable",
        error="no log was read for this member",
        header=None,
        inherited_event_count=None,
        agent_status=None,
        fold=EMPTY_FOLD,
    )


def _prompt_detail(prompt_id: str, prompt: PromptRec, lane: _Lane) -> dict[str, Any]:
    return {
        "id": prompt_id,
        "from": dict(_USER),
        "to": lane.party(),
        "queuedAt": None,
        "deliveredAt": prompt.time,
        "body": prompt.body,
        "length": prompt.length,
        "truncated": prompt.length > MESSAGE_BODY_CAP,
    }


#: The last pairing of each lead's messages, with the records it was made from: most
#: appends add no message, and comparing the records (the same objects from one fold
#: to the next) costs far less than pairing a long run's thousands again.
_PAIRINGS: dict[str, tuple[tuple[Any, ...], MessagePairing, Mapping[str, int]]] = {}
_PAIRINGS_MAX = 64


def _is_ours(team_id: str | None, lead_ids: Collection[str], foreign: dict[str, int]) -> bool:
    """Whether a ``team/*`` record is the team's; another team's is counted in ``foreign``."""
    if team_id is None or team_id in lead_ids:
        return True
    foreign[team_id] = foreign.get(team_id, 0) + 1
    return False


def _paired_messages(
    lead_session: str, fold: LaneFold, cut: int, lead_ids: Iterable[str]
) -> tuple[MessagePairing, Mapping[str, int]]:
    """The team's messages paired, and how many records of other teams were left out
    (by team id): a ``team/*`` record is the team's when its teamId is the root's or
    it has none."""
    ids = frozenset(lead_ids)
    held = _PAIRINGS.get(lead_session)
    if held is not None and held[0] == (fold.queued, fold.delivered, cut, ids):
        return held[1], held[2]
    foreign: dict[str, int] = {}
    pairing = pair_messages(
        ((s, q) for s, q in fold.queued.items() if s >= cut and _is_ours(q.team_id, ids, foreign)),
        (
            (s, d)
            for s, d in fold.delivered.items()
            if s >= cut and _is_ours(d.team_id, ids, foreign)
        ),
    )
    _PAIRINGS.pop(lead_session, None)
    if len(_PAIRINGS) >= _PAIRINGS_MAX:
        _PAIRINGS.pop(next(iter(_PAIRINGS)))
    _PAIRINGS[lead_session] = ((fold.queued, fold.delivered, cut, ids), pairing, foreign)
    return pairing, foreign


@dataclass(frozen=True, slots=True)
class _DrawnMessage:
    detail: dict[str, Any]
    category: str
    pending: bool
    #: (lane id, span) for each lane the message is drawn on.
    marks: tuple[tuple[str, dict[str, Any]], ...]


#: Messages drawn recently, by value and roster: a poll after an append draws every
#: message again and all but the new ones come out as before, so they keep their
#: detail and spans (never mutated once built; an unchanged lane then holds the very
#: same spans, which the wire uses to reuse its bytes).
_DRAWN_MESSAGES: dict[tuple[PairedMessage, int], _DrawnMessage] = {}
_DRAWN_MESSAGES_MAX = 1 << 13  # a long run has a few thousand messages
#: Roster signatures by number (numbers are never reused, so an evicted roster cannot
#: make a message drawn for another roster look current).
_LAST_DRAWN: dict[str, tuple[MessagePairing, int, tuple[_DrawnMessage, ...]]] = {}
_ROSTER_TOKENS: dict[tuple[Any, ...], int] = {}
_ROSTER_TOKENS_MAX = 64
_TOKEN_COUNTER = itertools.count()


def _message_detail(
    msg: PairedMessage, src: dict[str, str], dst: dict[str, str] | None
) -> dict[str, Any]:
    q = msg.queued
    return {
        "id": msg.id,
        "from": dict(src),
        "to": dict(dst) if dst else None,
        "queuedAt": q.time if q else None,
        "deliveredAt": msg.delivered.time if msg.delivered else None,
        "body": q.body if q else "",
        "length": q.length if q else 0,
        "truncated": bool(q and q.length > MESSAGE_BODY_CAP),
    }


def _task_json(view: TaskView, owner: _Lane | None, lane_id: str) -> dict[str, Any]:
    owner_id = view.owner_id
    if owner_id is None and owner is not None:
        owner_id = owner.session_id
    return {
        "id": view.id,
        "revision": view.revision,
        "subject": view.subject,
        "description": view.description,
        "status": view.status,
        "blockedBy": list(view.blocked_by),
        "writeScopes": list(view.write_scopes),
        "ownerId": owner_id,
        "ownerName": owner.name if owner else None,
        "laneId": lane_id,
        "history": [
            {
                "time": h.time,
                "action": h.action,
                "revision": h.revision,
                "status": h.status,
                "sessionId": h.session_id,
                "actor": h.actor,
            }
            for h in view.history
        ],
    }


def _lane_json(lane: _Lane, index: int) -> dict[str, Any]:
    source = lane.source
    fill = UNASSIGNED_COLOR[0] if lane.slot is None else PALETTE[lane.slot][0]
    status = source.agent_status if source else None
    return {
        "id": lane.id,
        "kind": lane.kind,
        "name": lane.name,
        "sessionId": lane.session_id,
        "index": index,
        "label": text(lane.label, 1024),
        "color": {"fill": fill, "on": ON_COLOR[0], "slot": lane.slot},
        "phase": lane.phase,
        "status": status if status in ("running", "idle") else None,
        "createdAt": lane.created_at,
        "channel": source.channel if source else "empty",
        "error": text(source.error, 1024) if source else None,
        "spans": _sorted_spans(lane),
        "taskIds": list(lane.task_ids),
    }


#: Each lane's spans as last sorted, with the list they were sorted from: a poll after
#: an append changes a lane or two, and an unchanged lane holds the same span objects
#: in the same order (so comparing is mostly identity checks).
_SORTED_SPANS: dict[tuple[str, str | None], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
_SORTED_SPANS_MAX = 256


def _sorted_spans(lane: _Lane) -> list[dict[str, Any]]:
    lane_key = (lane.id, lane.session_id)
    held = _SORTED_SPANS.get(lane_key)
    if held is not None and held[0] == lane.spans:
        return held[1]
    ordered = sorted(lane.spans, key=lambda s: (s["time"], _KIND_ORDER[s["kind"]], s["id"]))
    _SORTED_SPANS.pop(lane_key, None)
    if len(_SORTED_SPANS) >= _SORTED_SPANS_MAX:
        _SORTED_SPANS.pop(next(iter(_SORTED_SPANS)))
    _SORTED_SPANS[lane_key] = (lane.spans, ordered)
    return ordered


def _range(model: _Model, live: bool) -> tuple[int | None, int | None]:
    times = [span["time"] for lane in model.lanes for span in lane.spans]
    times.extend(h["time"] for task in model.tasks for h in task["history"])
    start = min(times) if times else None
    if live:
        return start, None
    start, end = _frozen_range(model, start)
    if start is not None and end is not None and start > end:
        start = end  # a range never runs backwards
    return start, end


def _frozen_range(model: _Model, start: int | None) -> tuple[int | None, int | None]:
    """Both ends set, or both null: a log whose events carry times but that drew
    nothing still has an extent (from its creation, or a point at its last event)."""
    start, end = _right_edge(model, start)
    if start is None and end is not None:
        created = [
            lane.created_at
            for lane in model.lanes
            if lane.created_at is not None and lane.created_at <= end
        ]
        start = min(created) if created else end
    return start, end


def _right_edge(model: _Model, start: int | None) -> tuple[int | None, int | None]:
    observed = [lane.fold.last_time for lane in model.lanes if lane.fold.last_time is not None]
    if not observed:
        observed = [
            lane.source.header.created_at
            for lane in model.lanes
            if lane.source and lane.source.header and lane.source.header.created_at is not None
        ]
        if observed:
            model.notes.append(
                "no event carried a time; the right edge is the latest session creation time"
            )
        else:
            model.notes.append("no event carried a time; the timeline has no right edge")
    return start, (max(observed) if observed else None)


def _format_notes(model: _Model) -> list[str]:
    """Which log file (so which format) each lane was read from."""
    by_name: dict[str, list[str]] = {}
    for lane in model.lanes:
        name = lane.source.log_name if lane.source else None
        if name:
            by_name.setdefault(name, []).append(lane.name)
    notes = []
    for name, lanes in sorted(by_name.items()):
        fmt = "4" if ".v4." in name else "3" if ".v3." in name else "0"
        notes.append(
            f"read {_plural(len(lanes), 'log')} from {name} (format {fmt}): {', '.join(lanes)}"
        )
    return notes


_MESSAGE_PARTS = (
    ("two lanes", "drawn on two lanes"),
    ("to itself", "sent to the sender itself, drawn once"),
    ("target outside", "to a target outside the team, drawn on the sender's lane only"),
    ("sender outside", "from a sender outside the team, drawn on the recipient's lane only"),
    (
        "no queue record",
        "delivered without a queue record, drawn on the recipient's lane with an unknown sender",
    ),
    ("not drawn", "not drawn (no time, or neither end on the team)"),
)


def _notes(model: _Model, unreadable: list[_Lane]) -> list[str]:
    c = model.counts
    notes = model.notes
    for lane in unreadable:
        reason = (lane.source.error if lane.source else None) or "unknown reason"
        session = f" (session {lane.session_id})" if lane.session_id != lane.name else ""
        notes.append(
            f"could not read the log of {lane.name} ({text(reason, 1024)}); its lane is "
            f"empty{session}"
        )
    for lane in model.lanes:
        skipped = c.skipped_inherited.get(lane.id)
        if skipped:
            notes.append(
                f"skipped {_plural(skipped, 'event')} inherited from the lead in {lane.name}'s log"
            )
    closed = c.turns - c.open_turns
    notes.append(
        f"{_plural(c.turns, 'turn')} drawn: {closed} closed, {c.open_turns} with no end recorded"
    )
    if c.orphan_ends:
        notes.append(f"{_plural(c.orphan_ends, 'turn end')} without a start, not drawn")
    if c.ends_before_start:
        notes.append(
            f"{_plural(c.ends_before_start, 'turn end')} dated before the turn's start, "
            "drawn with zero length"
        )
    if c.undated_turns:
        notes.append(f"{_plural(c.undated_turns, 'turn start')} without a time, not drawn")
    if c.duplicate_starts:
        notes.append(
            f"{_plural(c.duplicate_starts, 'repeated turn start')} ignored (earliest kept)"
        )
    if c.idless_turn_events:
        notes.append(f"{_plural(c.idless_turn_events, 'turn start')} without a turn id ignored")
    if c.closed_by_idless_end:
        notes.append(
            f"{_plural(c.closed_by_idless_end, 'turn')} closed by a turn end without a turn id "
            "(the latest turn open before it)"
        )
    if c.closed_by_restore:
        notes.append(
            f"{_plural(c.closed_by_restore, 'turn')} still open when the session was reloaded "
            "(session/end-seed), closed there as interrupted"
        )
    total = sum(c.messages.values())
    if total:
        parts = [f"{c.messages[k]} {words}" for k, words in _MESSAGE_PARTS if c.messages[k]]
        notes.append(
            f"{_plural(total, 'unique message')}: {', '.join(parts)}; "
            f"{_plural(c.message_marks, 'message mark')} in all"
        )
    else:
        notes.append("0 unique messages")
    if c.relays or c.briefs:
        notes.append(
            f"of these, {_plural(c.relays, 'message')} relayed between a parent agent and its "
            f"child and {_plural(c.briefs, 'brief')} from a parent agent to its child "
            f"({_plural(c.relay_copies, 'copy', 'copies')} in other logs not drawn again)"
        )
    for team_id, n in sorted(model.counts.foreign.items()):
        notes.append(
            f"{_plural(n, 'team record')} of another team (teamId {team_id}) in the lead's "
            "log not used"
        )
    if c.pending:
        notes.append(
            f"{_plural(c.pending, 'message')} queued but not yet delivered "
            "(drawn at the queued time)"
        )
    if model.duplicate_queued or model.duplicate_delivered:
        notes.append(
            f"{_plural(model.duplicate_queued, 'repeated queue record')} (first kept) and "
            f"{_plural(model.duplicate_delivered, 'repeated delivery', 'repeated deliveries')} "
            "(last kept)"
        )
    notes.append(
        f"{_plural(c.prompts, 'human prompt')} drawn, each once on the first lane whose log "
        f"carries it ({_plural(c.prompt_copies, 'copy', 'copies')} not drawn again: logged "
        "twice, spliced into the inbox first, or in another log)"
    )
    if c.undated_prompts:
        notes.append(f"{_plural(c.undated_prompts, 'human prompt')} without a time, not drawn")
    injected_total = sum(c.injected.values())
    if injected_total:
        by_kind = ", ".join(
            f"{kind} {n}" for kind, n in sorted(c.injected.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        notes.append(
            f"{_plural(injected_total, 'runtime-injected user message')} not drawn as "
            f"human prompts: {by_kind}"
        )
    r = model.replay
    notes.append(
        f"{_plural(len(model.tasks), 'task')}: {_plural(r.applied_revisions, 'revision')} "
        "replayed from the lead's log"
    )
    if r.duplicate_revisions or r.rewound_revisions:
        notes.append(
            f"{_plural(r.duplicate_revisions + r.rewound_revisions, 'task revision')} skipped "
            f"({r.duplicate_revisions} duplicate, {r.rewound_revisions} rewound); "
            "a task's state never goes back"
        )
    if r.invalid_snapshots:
        notes.append(f"{_plural(r.invalid_snapshots, 'task snapshot')} without a valid revision")
    if r.undated_revisions:
        notes.append(
            f"{_plural(r.undated_revisions, 'task revision')} without any time, left out of "
            "the history"
        )
    if r.ambiguous_revisions or r.unattributed_revisions:
        notes.append(
            f"{_plural(r.ambiguous_revisions + r.unattributed_revisions, 'task revision')} "
            f"without an actor ({r.ambiguous_revisions} ambiguous, "
            f"{r.unattributed_revisions} with no matching tool call)"
        )
    for task_id in r.live_only_tasks:
        notes.append(
            f"task {task_id} is on the live board but not in the lead's log; its history "
            "comes from the members' tool calls"
        )
    if model.deleted:
        notes.append(
            f"{_plural(model.deleted, 'deleted task')} listed with its history but on no lane"
        )
    if model.orphaned_owner:
        notes.append(
            f"{_plural(model.orphaned_owner, 'task')} owned by someone outside the team, "
            "shown as unassigned"
        )
    unknown = sum(lane.fold.unknown_events for lane in model.lanes)
    malformed = sum(lane.fold.malformed_events for lane in model.lanes)
    if unknown:
        notes.append(f"{_plural(unknown, 'event')} of unknown types skipped")
    if malformed:
        notes.append(f"{_plural(malformed, 'malformed event')} skipped")
    return notes


def _diagnostics(model: _Model, unreadable: list[_Lane]) -> dict[str, Any]:
    c = model.counts
    r = model.replay
    return {
        "lanes": len(model.lanes),
        "unreadableLanes": len(unreadable),
        "eventsSeen": sum(lane.fold.events_seen for lane in model.lanes),
        "unknownEvents": sum(lane.fold.unknown_events for lane in model.lanes),
        "malformedEvents": sum(lane.fold.malformed_events for lane in model.lanes),
        "inheritedEventsSkipped": dict(c.skipped_inherited),
        "turns": c.turns,
        "openTurns": c.open_turns,
        "orphanTurnEnds": c.orphan_ends,
        "turnEndsBeforeStart": c.ends_before_start,
        "undatedTurns": c.undated_turns,
        "duplicateTurnStarts": c.duplicate_starts,
        "uniqueMessages": sum(c.messages.values()),
        "messagesOnTwoLanes": c.messages["two lanes"],
        "messagesToSelf": c.messages["to itself"],
        "messagesTargetOutsideTeam": c.messages["target outside"],
        "messagesSenderOutsideTeam": c.messages["sender outside"],
        "unpairedDeliveries": c.messages["no queue record"],
        "messagesNotDrawn": c.messages["not drawn"],
        "messageMarks": c.message_marks,
        "pendingDeliveries": c.pending,
        "duplicateQueued": model.duplicate_queued,
        "duplicateDelivered": model.duplicate_delivered,
        "humanPrompts": c.prompts,
        "humanPromptCopiesSkipped": c.prompt_copies,
        "undatedPrompts": c.undated_prompts,
        "injectedUserMessages": dict(sorted(c.injected.items())),
        "tasks": len(model.tasks),
        "taskRevisions": r.applied_revisions,
        "duplicateTaskRevisions": r.duplicate_revisions,
        "rewoundTaskRevisions": r.rewound_revisions,
        "undatedTaskRevisions": r.undated_revisions,
        "invalidTaskSnapshots": r.invalid_snapshots,
        "ambiguousTaskRevisions": r.ambiguous_revisions,
        "unattributedTaskRevisions": r.unattributed_revisions,
        "liveOnlyTasks": len(r.live_only_tasks),
        "deletedTasks": model.deleted,
        "tasksOwnedOutsideTeam": model.orphaned_owner,
        "serviceNotes": len(model.team.service_notes or ()),
    }


def build_timeline(team: TeamSnapshot) -> dict[str, Any]:
    """The timeline JSON for ``team`` (pure; ``generated_at`` is only echoed)."""
    model = _Model(team)
    live = model.live()
    start, end = _range(model, live)
    unreadable = [
        lane for lane in model.lanes if lane.source and lane.source.channel == "unreadable"
    ]
    # A member that failed (or is still being set up) may never have written a log:
    # nothing is missing from the picture, so the timeline is not "partial".
    never_started = [lane for lane in unreadable if lane.phase in _NO_LOG_YET_PHASES]
    unreadable = [lane for lane in unreadable if lane not in never_started]
    for lane in never_started:
        state = "failed to start" if lane.phase == "failed" else "is still being set up"
        model.notes.append(f"{lane.name} {state} and has no log to read; its lane is empty")
    # A log that turns to garbage after readable frames: what was read is drawn, the
    # rest is missing from the picture.
    cut_short = [lane for lane in model.lanes if lane.source and lane.source.stopped_at]
    for lane in cut_short:
        where = lane.source.stopped_at if lane.source else None
        model.notes.append(
            f"the log of {lane.name} stops being readable ({text(where, 512)}); "
            "only what came before that point is drawn"
        )
    model.notes.extend(_format_notes(model))
    notes = _notes(model, unreadable)
    return {
        "version": 1,
        "generatedAt": as_int(team.generated_at),
        "sessionId": key(team.requested_session_id),
        "rootSessionId": key(team.root_session_id),
        "source": "partial" if unreadable or cut_short else "log",
        "live": live,
        "range": {"start": start, "end": end},
        "lanes": [_lane_json(lane, i) for i, lane in enumerate(model.lanes)],
        "tasks": model.tasks,
        "notes": notes,
        "diagnostics": _diagnostics(model, unreadable),
    }


def message_detail(team: TeamSnapshot, message_id: str) -> dict[str, Any] | None:
    """One message (or human prompt) in full, or ``None`` when unknown."""
    wanted = key(message_id)
    if wanted is None:
        return None
    detail = _Model(team).message_details.get(wanted)
    return dict(detail) if detail is not None else None
