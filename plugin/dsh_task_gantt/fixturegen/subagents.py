"""Parent/child subagent sessions in older formats, written the way those writers did.

Two small teams with fixed ids and times (no randomness: every line is chosen to
show one thing a reader must get right):

- **gamma** (DSH 0.1.x, format 3): a parent ``session.v3.jsonl.zstd`` with a
  cataloged child (``session.v3.jsonl``) and a cold forked child written by an older
  build (``session.jsonl.zstd``, format 0, known only by its header's
  ``parentSession``). It holds an inbox splice of the human's prompt logged again as a
  ``user/message``, a ``surfaceOp: replace`` summary, the parent's brief to the child,
  relays both ways (``coordinator``, ``subagent-report``, ``subagent-settled``),
  ``team/*`` version 1 records of an ancestor's team, a turn left open and then a
  reload marker, and a turn end with a nested error reason.
- **delta** (format 0): a parent ``session.jsonl.zstd`` and a child
  ``session.jsonl`` whose seqs start at 1 and whose ``turn/end`` events carry no turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_task_gantt.fixturegen.writer import Event, SessionLogWriter, header_record

GAMMA_CWD = "/Users/dev/work/gamma-tools"
DELTA_CWD = "/home/dev/Projects/delta"
GAMMA_START_MS = 1_791_666_000_000  # 2026-10-10T21:00Z, after the other fixture teams
DELTA_START_MS = GAMMA_START_MS + 3_600_000

GAMMA_PARENT = "session-3f6c2a1e-5b7d-4c0a-9e21-7d4b8a6f1c01"
GAMMA_CHILD = "session-3f6c2a1e-5b7d-4c0a-9e21-7d4b8a6f1c02"
GAMMA_COLD_CHILD = "session-3f6c2a1e-5b7d-4c0a-9e21-7d4b8a6f1c03"
#: The team a gamma parent's inherited ``team/*`` records belong to (it has no log).
GAMMA_ANCESTOR = "session-3f6c2a1e-5b7d-4c0a-9e21-7d4b8a6f1c00"
DELTA_PARENT = "session-8d1e4f7a-2c3b-4a5d-8e6f-1a2b3c4d5e01"
DELTA_CHILD = "session-8d1e4f7a-2c3b-4a5d-8e6f-1a2b3c4d5e02"

GAMMA_PROMPT_ID = "msg-gamma-human-1"
GAMMA_BRIEF_ID = "msg-gamma-brief-1"
GAMMA_COORDINATOR_ID = "msg-gamma-coordinator-1"
GAMMA_REPORT_ID = "msg-gamma-report-1"
GAMMA_SETTLED_ID = "msg-gamma-settled-1"
DELTA_PROMPT_ID = "msg-delta-human-1"
DELTA_BRIEF_ID = "msg-delta-brief-1"
CHILD_LABEL = "write the API reference"


@dataclass(frozen=True, slots=True)
class SubagentTeam:
    """What one written team is: the ground truth its tests assert against."""

    name: str
    parent: str
    children: tuple[str, ...]
    #: Log path of each session, relative to the sessions root.
    paths: Mapping[str, str]
    #: Human prompt ids (each drawn once), brief ids and relay ids.
    prompt_ids: tuple[str, ...]
    brief_ids: tuple[str, ...]
    relay_ids: tuple[str, ...]
    #: ``team/*`` records of another team in the parent's log.
    foreign_records: int
    #: Per session: own turn ids and how each closed (``None``: still open).
    turns: Mapping[str, Mapping[str, str | None]]


def _text(body: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": body}]


def _message(message_id: str, body: str, kind: str, **source: Any) -> dict[str, Any]:
    return {
        "id": message_id,
        "role": "user",
        "content": _text(body),
        "source": {"kind": kind, **source},
    }


class _Log:
    """One log being written: seqs from ``first_seq``, times from ``t``."""

    def __init__(self, writer: SessionLogWriter, t: int, first_seq: int = 0) -> None:
        self.writer = writer
        self.t = t
        self.seq = first_seq
        self.batch: list[Event] = []

    def add(
        self, etype: str, data: Any, dt: int = 40, envelope: Mapping[str, Any] | None = None
    ) -> Event:
        self.t += dt
        event = Event(etype, self.seq, self.t, data, envelope)
        self.seq += 1
        self.batch.append(event)
        return event

    def flush(self) -> None:
        if self.batch:
            self.writer.append(self.batch)
            self.batch = []


def _open(
    root: Path,
    session_id: str,
    created_at: int,
    cwd: str,
    *,
    fmt: int,
    compress: bool,
    parent: str | None = None,
    seed_length: int | None = None,
    first_seq: int = 0,
) -> _Log:
    header = header_record(
        session_id=session_id,
        created_at=created_at,
        cwd=cwd,
        parent_session=parent,
        fmt=fmt,
        seed_length=seed_length,
    )
    return _Log(SessionLogWriter(root, header, compress=compress, fmt=fmt), created_at, first_seq)


def _rel(root: Path, log: _Log) -> str:
    return log.writer.path.relative_to(root).as_posix()


def write_gamma(root: Path) -> SubagentTeam:
    t0 = GAMMA_START_MS
    parent = _open(root, GAMMA_PARENT, t0, GAMMA_CWD, fmt=3, compress=True)
    child = _open(
        root, GAMMA_CHILD, t0 + 2_000, GAMMA_CWD, fmt=3, compress=False, parent=GAMMA_PARENT
    )
    prompt = _message(
        GAMMA_PROMPT_ID,
        "Document the tools package: an API reference and a migration note.",
        "user",
        rpcId="rpc-7",
        clientTimeZone="Europe/Berlin",
    )
    # Records inherited from an ancestor's team (version 1): not this team's.
    parent.add(
        "team/member",
        {
            "version": 1,
            "teamId": GAMMA_ANCESTOR,
            "member": {"id": "session-elsewhere-1", "name": "archivist", "phase": "active"},
        },
    )
    parent.add(
        "team/message/queued",
        {
            "version": 1,
            "teamId": GAMMA_ANCESTOR,
            "message": {
                "id": "msg-ancestor-1",
                "senderId": GAMMA_ANCESTOR,
                "senderName": "lead",
                "targetId": "session-elsewhere-1",
                "content": _text("an old instruction of another team"),
                "delivery": "wakeup",
            },
        },
    )
    parent.add(
        "agent/inbox/spliced", {"target": GAMMA_PARENT, "start": 0, "inserted": [prompt]}, 300
    )
    parent.add("user/message", prompt, 4)
    parent.add("turn/start", {"turn": 1})
    parent.add("step/start", {"turn": 1, "step": 1})
    parent.add(
        "tool/call",
        {
            "turn": 1,
            "step": 1,
            "callId": "call-g1",
            "name": "subagent",
            "arguments": '{"label":"write the API reference"}',
        },
    )
    parent.add(
        "subagent/catalog",
        {
            "version": 1,
            "childId": GAMMA_CHILD,
            "childCreatedAt": t0 + 2_000,
            "mode": "fresh",
            "label": CHILD_LABEL,
        },
    )
    parent.add("step/end", {"turn": 1, "step": 1})
    parent.flush()

    brief = (
        "Write the API reference for tools/ (every public function, one example each)."
        f"\n\nYour parent agent id is {GAMMA_PARENT}"
    )
    child.add("subagent/descriptor", {"label": CHILD_LABEL, "inheritedEventCount": 0}, 10)
    child.add("user/message", _message(GAMMA_BRIEF_ID, brief, "user"), 20)
    child.add("turn/start", {"turn": 1})
    child.add("step/start", {"turn": 1, "step": 1})
    child.add("step/end", {"turn": 1, "step": 1}, 900)
    child.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    child.add(
        "user/message",
        _message(
            GAMMA_COORDINATOR_ID,
            "Also list the error codes each function raises.",
            "coordinator",
            form="relay",
            senderSessionId=GAMMA_PARENT,
        ),
        400,
    )
    child.add("turn/start", {"turn": 2})
    child.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}}, 700)
    child.flush()

    parent.t = child.t
    parent.add(
        "user/message",
        _message(
            GAMMA_REPORT_ID,
            "API reference written: docs/api.md (42 functions, error codes included).",
            "subagent-report",
            form="relay",
            senderSessionId=GAMMA_CHILD,
        ),
    )
    parent.add(
        "user/message",
        {
            "id": GAMMA_SETTLED_ID,
            "role": "user",
            "content": _text("Subagent settled: completed."),
            "source": {
                "kind": "subagent-settled",
                "summary": "completed",
                "senderSessionId": GAMMA_CHILD,
            },
        },
    )
    parent.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    # A summary that rewrites the conversation so far: not a new prompt.
    parent.add(
        "user/message",
        _message("msg-gamma-summary-1", "Summary: the tools package is being documented.", "user"),
        200,
        envelope={"surfaceOp": {"op": "replace", "startSeq": 2, "endSeq": 11}},
    )
    parent.add("turn/start", {"turn": 2}, 300)
    parent.flush()
    # The session was reloaded while turn 2 ran: the restore marker ends it.
    parent.add("session/end-seed", {}, 5_000)
    parent.add("turn/start", {"turn": 3}, 200)
    parent.add(
        "turn/end",
        {
            "turn": 3,
            "reason": {"kind": "error", "error": {"message": "rate limited", "code": "429"}},
        },
        600,
    )
    parent.flush()

    # A forked child written by an older build: format 0, seqs from 1, its first two
    # events copied from the parent (seedLength counts events, not seqs).
    cold = _open(
        root,
        GAMMA_COLD_CHILD,
        parent.t + 600,
        GAMMA_CWD,
        fmt=0,
        compress=True,
        parent=GAMMA_PARENT,
        seed_length=2,
        first_seq=1,
    )
    cold.t = t0 + 300  # the copied events keep the parent's times
    cold.add("user/message", prompt, 44)
    cold.add("turn/start", {"turn": 1}, 4)
    cold.t = parent.t + 1_000
    cold.add("turn/start", {"turn": 2})
    cold.add("step/start", {"turn": 2, "step": 1})
    cold.add("step/end", {"turn": 2, "step": 1}, 500)
    cold.add("turn/end", {"reason": {"kind": "completed"}})
    cold.flush()

    return SubagentTeam(
        name="gamma",
        parent=GAMMA_PARENT,
        children=(GAMMA_CHILD, GAMMA_COLD_CHILD),
        paths={
            GAMMA_PARENT: _rel(root, parent),
            GAMMA_CHILD: _rel(root, child),
            GAMMA_COLD_CHILD: _rel(root, cold),
        },
        prompt_ids=(GAMMA_PROMPT_ID,),
        brief_ids=(GAMMA_BRIEF_ID,),
        relay_ids=(GAMMA_COORDINATOR_ID, GAMMA_REPORT_ID, GAMMA_SETTLED_ID),
        foreign_records=2,
        turns={
            GAMMA_PARENT: {"1": "completed", "2": "interrupted", "3": "error"},
            GAMMA_CHILD: {"1": "completed", "2": "completed"},
            GAMMA_COLD_CHILD: {"2": "completed"},
        },
    )


def write_delta(root: Path) -> SubagentTeam:
    t0 = DELTA_START_MS
    parent = _open(root, DELTA_PARENT, t0, DELTA_CWD, fmt=0, compress=True, first_seq=1)
    child = _open(
        root,
        DELTA_CHILD,
        t0 + 1_500,
        DELTA_CWD,
        fmt=0,
        compress=False,
        parent=DELTA_PARENT,
        first_seq=1,
    )
    parent.add("user/message", _message(DELTA_PROMPT_ID, "Tidy up the build scripts.", "user"))
    parent.add("turn/start", {"turn": 1})
    parent.add("turn/end", {"reason": {"kind": "completed"}}, 1_200)
    parent.add("turn/start", {"turn": 2}, 300)
    parent.flush()
    brief = f"Port build.sh to a Makefile.\nYour parent agent id is {DELTA_PARENT}."
    child.t = parent.t
    child.add("user/message", _message(DELTA_BRIEF_ID, brief, "user"))
    child.add("turn/start", {"turn": 1})
    child.add("turn/end", {"reason": {"kind": "aborted", "reason": {"kind": "user"}}}, 800)
    child.add("turn/start", {"turn": 2}, 100)
    child.add("turn/end", {}, 900)
    child.flush()
    parent.t = child.t
    parent.add("turn/end", {"reason": {"kind": "completed"}}, 200)
    parent.flush()
    return SubagentTeam(
        name="delta",
        parent=DELTA_PARENT,
        children=(DELTA_CHILD,),
        paths={DELTA_PARENT: _rel(root, parent), DELTA_CHILD: _rel(root, child)},
        prompt_ids=(DELTA_PROMPT_ID,),
        brief_ids=(DELTA_BRIEF_ID,),
        relay_ids=(),
        foreign_records=0,
        turns={
            DELTA_PARENT: {"1": "completed", "2": "completed"},
            DELTA_CHILD: {"1": "aborted", "2": "ended"},
        },
    )


def write_subagent_teams(root: Path) -> Sequence[SubagentTeam]:
    return (write_gamma(root), write_delta(root))
