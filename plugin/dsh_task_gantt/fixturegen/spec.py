"""What a generated team holds: the ground truth tests assert against.

Written by the generator as it writes the logs (never re-derived from them), so a
test comparing a reader's output with this spec compares two independent sources.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

#: Member traits (``MemberSpec.traits``).
FORKED = "forked"
RENAMED = "renamed"
CATALOG_FIRST = "catalog-first"
FAILED = "failed"
COLD_OPEN_STEP = "cold-open-step"
STRAY_END_SEED = "stray-end-seed"

#: Message kinds (``MessageSpec.kind``).
NORMAL = "normal"
ORPHAN_DELIVERY = "orphan-delivery"
OFF_ROSTER = "off-roster"
UNDELIVERED = "undelivered"
LONG = "long"
HOSTILE = "hostile"
MESSAGE_KINDS = (NORMAL, ORPHAN_DELIVERY, OFF_ROSTER, UNDELIVERED, LONG, HOSTILE)


@dataclass(frozen=True, slots=True)
class MemberSpec:
    id: str
    #: The first name it was given (the lead: ``"lead"``).
    name: str
    #: Every name it had, in order (a renamed member has two).
    aliases: tuple[str, ...]
    role: str  # "lead" | "teammate"
    context: str | None  # "fresh" | "fork"; None for the lead
    phase: str  # final team/member phase: "active" | "failed" (the lead: "active")
    traits: tuple[str, ...]
    #: Log path relative to the sessions root, ``None`` when the member has no log.
    rel_path: str | None
    created_at: int | None
    #: Events copied from the lead at the start of a forked log (0 otherwise).
    inherited_count: int
    #: Events after the header, the inherited prefix included.
    event_count: int
    line_count: int  # header included
    frame_count: int
    own_first_time: int | None  # first event after the inherited prefix
    last_time: int | None
    turn_count: int  # own turn/start events (prefix excluded)
    closed_turn_count: int
    open_turn: int | None  # a turn left without turn/end at the end of the log
    open_step: int | None
    last_turn: int
    next_seq: int
    #: Human prompts (source.kind "user") in this log's own part, unique ids in order.
    human_prompt_ids: tuple[str, ...]
    #: Injected user/message counts by source.kind in the own part.
    injected_counts: Mapping[str, int]
    #: Team messages delivered to this member (each a team-message user/message here).
    received_message_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TaskRevisionSpec:
    revision: int
    status: str
    owner_id: str | None
    #: The team_task_update action (``create`` for revision 1).
    tool_action: str
    #: What a reader derives (created/claimed/completed/reopened/updated; see
    #: docs/host-contract.md, Rules the picture follows: Tasks).
    expected_action: str
    #: Session that made the change (its log holds the tool/call).
    actor_id: str
    time: int  # the team/task event's time in the lead log
    lead_seq: int
    call_seq: int
    call_time: int
    call_id: str


@dataclass(frozen=True, slots=True)
class TaskSpec:
    id: str
    subject: str
    description: str
    blocked_by: tuple[str, ...]
    write_scopes: tuple[str, ...]
    #: e.g. "handoff", "release", "lead-owned", "never-claimed", "deleted", "rewound".
    traits: tuple[str, ...]
    revisions: tuple[TaskRevisionSpec, ...]

    @property
    def final(self) -> TaskRevisionSpec:
        return self.revisions[-1]


@dataclass(frozen=True, slots=True)
class RewindSpec:
    """An old revision re-emitted later in the lead log: a reader skips and counts it."""

    task_id: str
    revision: int
    lead_seq: int
    time: int


@dataclass(frozen=True, slots=True)
class MessageSpec:
    id: str
    kind: str
    sender_id: str
    sender_name: str
    target_id: str
    text: str
    queued_seq: int | None  # None: delivered without a queue record
    queued_time: int | None
    delivered_seq: int | None  # None: never delivered
    delivered_time: int | None
    #: The recipient's team-message user/message (None: none written).
    recipient_id: str | None
    recipient_seq: int | None


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """A human prompt (user/message with source.kind "user")."""

    id: str
    text: str
    member_id: str  # the log it was written in
    seqs: tuple[int, ...]  # more than one: the same id written twice in that log
    time: int
    #: Forked members whose inherited prefix carries a copy of it.
    copied_into: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TeamSpec:
    name: str
    seed: int
    scale: str
    root: str  # the sessions root the logs were written under
    cwd: str
    project_key: str
    lead_id: str
    team_id: str  # == lead_id; "" for a lone session with no team events
    live: bool  # the lead ends on an open turn
    start_ms: int
    first_event_time: int
    #: Last event time over every log: a frozen timeline's range.end.
    last_event_time: int
    members: tuple[MemberSpec, ...]  # lead first, then teammates in roster order
    tasks: tuple[TaskSpec, ...]
    rewinds: tuple[RewindSpec, ...]
    messages: tuple[MessageSpec, ...]
    human_prompts: tuple[PromptSpec, ...]
    #: (member id, seq) of a session/end-seed in a NON-seeded log: inherits nothing.
    stray_end_seed: tuple[str, int] | None

    # -- look-ups ------------------------------------------------------------
    def member(self, member_id: str) -> MemberSpec:
        for m in self.members:
            if m.id == member_id:
                return m
        raise KeyError(member_id)

    def member_named(self, name: str) -> MemberSpec:
        for m in self.members:
            if name in m.aliases:
                return m
        raise KeyError(name)

    def with_trait(self, trait: str) -> tuple[MemberSpec, ...]:
        return tuple(m for m in self.members if trait in m.traits)

    def task(self, task_id: str) -> TaskSpec:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def messages_of_kind(self, kind: str) -> tuple[MessageSpec, ...]:
        return tuple(m for m in self.messages if m.kind == kind)

    def log_path(self, member_id: str, root: Path | None = None) -> Path:
        rel = self.member(member_id).rel_path
        if rel is None:
            raise KeyError(f"{member_id} has no log")
        return (Path(self.root) if root is None else root) / rel

    @property
    def lead(self) -> MemberSpec:
        return self.members[0]

    # -- JSON ----------------------------------------------------------------
    def to_dict(self, *, include_root: bool = True) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        if not include_root:
            out.pop("root")
        return out

    def dump(self, path: Path, *, include_root: bool = False) -> None:
        """Write the spec as JSON (outside any sessions root: it is not a log)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(
            orjson.dumps(self.to_dict(include_root=include_root), option=orjson.OPT_INDENT_2)
            + b"\n"
        )

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], *, root: str | None = None) -> TeamSpec:
        def tup(v: Any) -> tuple[Any, ...]:
            return tuple(v)

        members = tuple(
            MemberSpec(
                **{
                    **m,
                    "aliases": tup(m["aliases"]),
                    "traits": tup(m["traits"]),
                    "human_prompt_ids": tup(m["human_prompt_ids"]),
                    "received_message_ids": tup(m["received_message_ids"]),
                    "injected_counts": dict(m["injected_counts"]),
                }
            )
            for m in raw["members"]
        )
        tasks = tuple(
            TaskSpec(
                **{
                    **t,
                    "blocked_by": tup(t["blocked_by"]),
                    "write_scopes": tup(t["write_scopes"]),
                    "traits": tup(t["traits"]),
                    "revisions": tuple(TaskRevisionSpec(**r) for r in t["revisions"]),
                }
            )
            for t in raw["tasks"]
        )
        stray = raw.get("stray_end_seed")
        return cls(
            **{
                **raw,
                "root": root if root is not None else raw.get("root", ""),
                "members": members,
                "tasks": tasks,
                "rewinds": tuple(RewindSpec(**r) for r in raw["rewinds"]),
                "messages": tuple(MessageSpec(**m) for m in raw["messages"]),
                "human_prompts": tuple(
                    PromptSpec(
                        **{**p, "seqs": tup(p["seqs"]), "copied_into": tup(p["copied_into"])}
                    )
                    for p in raw["human_prompts"]
                ),
                "stray_end_seed": (stray[0], stray[1]) if stray else None,
            }
        )

    @classmethod
    def load(cls, path: Path, *, root: str | None = None) -> TeamSpec:
        return cls.from_dict(orjson.loads(path.read_bytes()), root=root)
