"""Tiny builders of LogEvents and team snapshots for the fold/timeline tests."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dsh_task_gantt.events import LogEvent, SessionHeader
from dsh_task_gantt.fold import EMPTY_FOLD, LaneFold, fold_lane
from dsh_task_gantt.timeline import LaneSource, TeamSnapshot

LEAD = "session-lead"
T0 = 1_791_648_700_000


def user_message(text: str, id_: str, source: dict[str, Any]) -> dict[str, Any]:
    """A ``user/message``'s data (also what an inbox splice inserts)."""
    return {
        "id": id_,
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": source,
    }


class Log:
    """Appends events with consecutive seqs; ``at`` is ms after T0 (None: no time)."""

    def __init__(self, start_seq: int = 0) -> None:
        self.events: list[LogEvent] = []
        self.seq = start_seq

    def add(
        self,
        type_: str,
        data: Any = None,
        at: int | None = 0,
        seq: int | None = None,
        surface_op: Any = None,
    ) -> Log:
        s = self.seq if seq is None else seq
        time = None if at is None else T0 + at
        self.events.append(LogEvent(type_, s, time, data, s, surface_op))
        self.seq = max(self.seq, s) + 1
        return self

    def relay(self, kind: str, sender: str, id_: str, text: str, at: int) -> Log:
        """A message relayed between a parent agent and its child (``senderSessionId``)."""
        source = {"kind": kind, "form": "relay", "senderSessionId": sender}
        return self.add("user/message", user_message(text, id_, source), at)

    def splice(self, text: str, id_: str, at: int) -> Log:
        """The human's prompt spliced into the inbox (logged again as a user/message)."""
        inserted = [user_message(text, id_, {"kind": "user"})]
        return self.add(
            "agent/inbox/spliced", {"target": LEAD, "start": 0, "inserted": inserted}, at
        )

    def summary(self, text: str, id_: str, at: int) -> Log:
        """A ``surfaceOp: replace`` user/message: a summary of earlier messages."""
        op = {"op": "replace", "startSeq": 0, "endSeq": max(0, self.seq - 1)}
        data = user_message(text, id_, {"kind": "user"})
        return self.add("user/message", data, at, surface_op=op)

    def turn(
        self, turn: Any, start: int | None, end: int | None = None, reason: str = "completed"
    ) -> Log:
        self.add("turn/start", {"turn": turn}, start)
        if end is not None:
            self.add("turn/end", {"turn": turn, "reason": {"kind": reason}}, end)
        return self

    def step(self, turn: Any, step: Any, at: int, closed: bool = True) -> Log:
        self.add("step/start", {"turn": turn, "step": step}, at)
        if closed:
            self.add("step/end", {"turn": turn, "step": step}, at + 1)
        return self

    def prompt(self, text: str, at: int | None, id_: str | None = None, kind: str = "user") -> Log:
        data: dict[str, Any] = {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": kind},
        }
        if id_ is not None:
            data["id"] = id_
        return self.add("user/message", data, at)

    def member(
        self, id_: str, name: str | None, at: int = 0, phase: str = "active", **extra: Any
    ) -> Log:
        member: dict[str, Any] = {"id": id_, "phase": phase, "context": "fresh", **extra}
        if name is not None:
            member["name"] = name
        return self.add("team/member", {"version": 2, "teamId": LEAD, "member": member}, at)

    def catalog(self, child: str, created: int | None, at: int = 0) -> Log:
        data = {
            "version": 1,
            "childId": child,
            "mode": "continuable",
            "label": "x",
            "childCreatedAt": None if created is None else T0 + created,
        }
        return self.add("subagent/catalog", data, at)

    def task(
        self,
        id_: str,
        revision: int,
        status: str = "pending",
        at: int | None = 0,
        owner: str | None = None,
        subject: str | None = None,
    ) -> Log:
        task: dict[str, Any] = {
            "id": id_,
            "revision": revision,
            "subject": subject or f"subject of {id_}",
            "description": "d",
            "status": status,
            "blockedBy": [],
            "writeScopes": ["src"],
        }
        if owner is not None:
            task["ownerId"] = owner
        return self.add("team/task", {"version": 2, "teamId": LEAD, "task": task}, at)

    def queued(
        self,
        id_: str,
        sender: str | None,
        target: str | None,
        body: str,
        at: int | None = 0,
        sender_name: str | None = None,
    ) -> Log:
        message: dict[str, Any] = {"id": id_, "content": [{"type": "text", "text": body}]}
        if sender is not None:
            message["senderId"] = sender
        if sender_name is not None:
            message["senderName"] = sender_name
        if target is not None:
            message["targetId"] = target
        return self.add("team/message/queued", {"teamId": LEAD, "message": message}, at)

    def delivered(self, id_: str, target: str | None, at: int | None = 0) -> Log:
        return self.add(
            "team/message/delivered", {"teamId": LEAD, "messageId": id_, "targetId": target}, at
        )

    def update_call(self, task_id: str, expected: int, action: str, at: int = 0) -> Log:
        args = json.dumps({"task_id": task_id, "expected_revision": expected, "action": action})
        return self.add(
            "tool/call",
            {
                "turn": 1,
                "step": 1,
                "callId": f"c{self.seq}",
                "name": "team_task_update",
                "arguments": args,
            },
            at,
        )

    def create_call(self, subject: str, at: int = 0) -> Log:
        args = json.dumps(
            {"subject": subject, "description": "d", "blocked_by": [], "write_scopes": []}
        )
        return self.add(
            "tool/call",
            {
                "turn": 1,
                "step": 1,
                "callId": f"c{self.seq}",
                "name": "team_task_create",
                "arguments": args,
            },
            at,
        )

    def spawn_call(self, name: str, prompt: str, at: int = 0, context: str = "fresh") -> Log:
        """A lead's ``spawn_teammate`` call (DSH 0.1.1's team tools)."""
        args = json.dumps(
            {"name": name, "description": f"{name}'s work", "prompt": prompt, "context": context}
        )
        return self.add(
            "tool/call",
            {
                "turn": 1,
                "step": 1,
                "callId": f"c{self.seq}",
                "name": "spawn_teammate",
                "arguments": args,
            },
            at,
        )

    def bulk(self, at: int | None, type_: str = "assistant/message") -> Log:
        return self.add(type_, None, at)

    def fold(self) -> LaneFold:
        return fold_lane(self.events)


def header(
    id_: str,
    *,
    parent: str | None = None,
    seeded: bool = False,
    inherited: int | None = None,
    created: int | None = 0,
) -> SessionHeader:
    return SessionHeader(
        id=id_,
        created_at=None if created is None else T0 + created,
        parent_session=parent,
        is_seeded=seeded,
        inherited_event_count=inherited,
    )


def source(
    session_id: str | None,
    log: Log | Iterable[LogEvent] | None = None,
    *,
    channel: str = "persisted",
    error: str | None = None,
    hdr: SessionHeader | str | None = "default",
    inherited: int | None = None,
    status: str | None = None,
) -> LaneSource:
    if log is None:
        fold = EMPTY_FOLD
    elif isinstance(log, Log):
        fold = log.fold()
    else:
        fold = fold_lane(log)
    return LaneSource(
        session_id=session_id,
        channel=channel,
        error=error,  # type: ignore[arg-type]
        header=(header(session_id) if session_id else None) if hdr == "default" else hdr,  # type: ignore[arg-type]
        inherited_event_count=inherited,
        agent_status=status,  # type: ignore[arg-type]
        fold=fold,
    )


def team(
    lead: LaneSource,
    members: Mapping[str, LaneSource] | None = None,
    *,
    requested: str = LEAD,
    live_members: Sequence[Mapping[str, Any]] | None = None,
    live_tasks: Sequence[Mapping[str, Any]] | None = None,
    running: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> TeamSnapshot:
    return TeamSnapshot(
        requested_session_id=requested,
        root_session_id=LEAD,
        lead=lead,
        members=dict(members or {}),
        live_members=live_members,
        live_tasks=live_tasks,
        running_children=running,
        generated_at=T0 + 10**9,
        service_notes=notes,
    )


def lane(timeline: Mapping[str, Any], lane_id: str) -> dict[str, Any]:
    for item in timeline["lanes"]:
        if item["id"] == lane_id:
            return dict(item)
    raise AssertionError(f"no lane {lane_id}: {[x['id'] for x in timeline['lanes']]}")


def spans(
    timeline: Mapping[str, Any], lane_id: str, kind: str | None = None
) -> list[dict[str, Any]]:
    return [s for s in lane(timeline, lane_id)["spans"] if kind is None or s["kind"] == kind]
