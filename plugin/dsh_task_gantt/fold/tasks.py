"""Task board: replay ``team/task`` snapshots as a state machine (pure).

Each task's snapshots are replayed in log order (seq). A snapshot whose revision is
not above the state's (a duplicate or a rewound revision) never rewinds the state:
it is skipped and counted. Each applied revision R is attributed to the session
whose log has the unique ``team_task_update`` call with ``task_id == id`` and
``expected_revision == R - 1``; revision 1 to the only ``team_task_create`` call
anywhere with that subject. Ambiguity is refused (``sessionId``/``actor`` null).

Dating: the ``team/task`` event's time; failing that the attributed call's time;
otherwise the revision has no history entry (counted). A task the live board knows
but the log lacks is dated by its tool calls. "Now" is never a time.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import Any, TypeVar

from ..events import as_int
from .records import TaskCallRec, TaskRec
from .text import MESSAGE_BODY_CAP, key, text


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    time: int
    action: str
    revision: int
    status: str
    session_id: str | None
    actor: str | None
    #: The snapshot's owner, blockers and write scopes (the task graph reads them).
    owner_id: str | None = None
    blocked_by: tuple[str, ...] = ()
    write_scopes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TaskView:
    id: str
    revision: int | None
    subject: str | None
    description: str | None
    status: str | None
    blocked_by: tuple[str, ...]
    write_scopes: tuple[str, ...]
    owner_id: str | None
    #: The live board's ``ownerName`` (only for a task the log lacks).
    owner_name: str | None
    history: tuple[HistoryEntry, ...]
    from_live_board: bool = False


@dataclass(slots=True)
class TaskReplay:
    tasks: list[TaskView] = field(default_factory=list)
    applied_revisions: int = 0
    duplicate_revisions: int = 0
    rewound_revisions: int = 0
    undated_revisions: int = 0
    invalid_snapshots: int = 0
    unattributed_revisions: int = 0
    ambiguous_revisions: int = 0
    live_only_tasks: list[str] = field(default_factory=list)
    #: DSH's projection wants revision 1 first and then exactly +1 each time (§7):
    #: tasks first seen later than 1, and revisions applied after a gap, by task.
    first_seen_late: list[str] = field(default_factory=list)
    skipped_revisions: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


#: Every action a history entry can name (docs/interfaces.md); ``updated`` only where
#: nothing else fits.
ACTIONS = (
    "created",
    "claimed",
    "assigned",
    "released",
    "unassigned",
    "reassigned",
    "completed",
    "reopened",
    "deleted",
    "dependencies-changed",
    "edited",
    "updated",
)


def derive_action(
    previous: TaskRec | None,
    snap: TaskRec,
    maker: str | None = None,
    lead: str | None = None,
) -> str:
    """The action a snapshot stands for (the host writes none), from the state before it,
    the session that made it (``maker``, the CAS rule; ``None`` when unknown) and the
    lead's session. One snapshot carries one action (docs/host-contract.md §7), so the first change
    that tells wins: status, then owner, then blockers, then the text and scopes."""
    status = snap.status
    if previous is None:
        if snap.revision == 1:
            return "created"
        return _FIRST_SEEN.get(status or "", "updated")
    before = previous.status
    if status == "deleted" and before != "deleted":
        return "deleted"
    if before != "completed" and status == "completed":
        return "completed"
    if before == "completed" and status != "completed":
        return "reopened"
    by_lead = maker is not None and maker == lead
    if before != "in_progress" and status == "in_progress":
        # A claim makes its caller the owner; an owner other than the caller was put there.
        if maker is not None and snap.owner_id is not None and snap.owner_id != maker:
            return "assigned"
        return "claimed"
    if before == "in_progress" and status != "in_progress":
        # The lead taking someone else off it unassigns; the owner leaving releases.
        return "unassigned" if by_lead and previous.owner_id not in (None, maker) else "released"
    if snap.owner_id != previous.owner_id:
        if status == "in_progress" and previous.owner_id is not None and snap.owner_id:
            return "reassigned"
        return "assigned" if snap.owner_id else "unassigned"
    if snap.blocked_by != previous.blocked_by:
        return "dependencies-changed"
    if (snap.subject, snap.description, snap.write_scopes) != (
        previous.subject,
        previous.description,
        previous.write_scopes,
    ):
        return "edited"
    return "updated"


_FIRST_SEEN = {"in_progress": "claimed", "completed": "completed", "deleted": "deleted"}


_DIGITS = re.compile(r"(\d+)")


#: Task ids' natural keys kept: a replay sorts every task of the day again.
NATURAL_KEYS_KEPT = 1 << 13


@lru_cache(maxsize=NATURAL_KEYS_KEPT)
def natural_key(value: str) -> tuple[tuple[int, int | str], ...]:
    """``task-2`` before ``task-10``."""
    return tuple(
        (0, int(part)) if part.isdigit() and len(part) < 19 else (1, part)
        for part in _DIGITS.split(value)
    )


@dataclass(frozen=True, slots=True)
class CallIndex:
    """``team_task_*`` calls of every lane (after its seed cut), by what they match."""

    updates: Mapping[tuple[str, int], tuple[tuple[str, int | None, str | None], ...]]
    creates: Mapping[str, tuple[tuple[str, int | None], ...]]

    @staticmethod
    def build(calls: Iterable[tuple[str, int, TaskCallRec]]) -> CallIndex:
        updates: dict[tuple[str, int], list[tuple[str, int | None, str | None]]] = {}
        creates: dict[str, list[tuple[str, int | None]]] = {}
        for session_id, _seq, call in sorted(calls, key=lambda c: (c[0], c[1])):
            if call.tool == "update" and call.task_id is not None:
                if call.expected_revision is not None:
                    slot = (call.task_id, call.expected_revision)
                    updates.setdefault(slot, []).append((session_id, call.time, call.action))
            elif call.tool == "create" and call.subject is not None:
                creates.setdefault(call.subject, []).append((session_id, call.time))
        return CallIndex(
            {k: tuple(v) for k, v in updates.items()}, {k: tuple(v) for k, v in creates.items()}
        )

    def with_calls(self, calls: Iterable[tuple[str, int, TaskCallRec]]) -> CallIndex:
        """This index with ``calls`` added, each later in its session's log than every
        call already in (an append's): what ``build`` of all of them gives."""
        updates = dict(self.updates)
        creates = dict(self.creates)
        for session_id, _seq, call in sorted(calls, key=lambda c: (c[0], c[1])):
            if call.tool == "update" and call.task_id is not None:
                if call.expected_revision is not None:
                    slot = (call.task_id, call.expected_revision)
                    updates[slot] = _after_session(
                        updates.get(slot, ()), (session_id, call.time, call.action)
                    )
            elif call.tool == "create" and call.subject is not None:
                creates[call.subject] = _after_session(
                    creates.get(call.subject, ()), (session_id, call.time)
                )
        return CallIndex(updates, creates)

    def maker(
        self, task_id: str, revision: int, subject: str | None
    ) -> tuple[tuple[str, int | None] | None, int]:
        """``((session, call time) | None, number of matching calls)`` for a revision."""
        if revision == 1:
            found: Sequence[tuple[str, int | None]] = (
                self.creates.get(subject, ()) if subject is not None else ()
            )
            return (found[0] if len(found) == 1 else None), len(found)
        matches = self.updates.get((task_id, revision - 1), ())
        if len(matches) == 1:
            return (matches[0][0], matches[0][1]), 1
        return None, len(matches)


@dataclass(frozen=True, slots=True)
class TaskPart:
    """One task's replay: its view (``None``: no valid snapshot) and what replaying it
    counted (a :class:`TaskReplay` of this task alone, without its view)."""

    task_id: str
    view: TaskView | None
    counted: TaskReplay


def task_groups(snapshots: Iterable[tuple[int, TaskRec]]) -> dict[str, list[tuple[int, TaskRec]]]:
    """The snapshots by task (in the order tasks are first seen), each by seq."""
    by_task: dict[str, list[tuple[int, TaskRec]]] = {}
    for seq, snap in snapshots:
        by_task.setdefault(snap.id, []).append((seq, snap))
    return {task_id: sorted(group, key=_seq_of) for task_id, group in by_task.items()}


def replay_task(
    task_id: str,
    group: Sequence[tuple[int, TaskRec]],
    calls: CallIndex,
    actor_of: Callable[[str], str | None],
    lead: str | None = None,
) -> TaskPart:
    """One task replayed from its snapshots ``group`` (by seq)."""
    counted = TaskReplay()
    view = _replay_one(task_id, group, calls, actor_of, counted, lead)
    return TaskPart(task_id, view, counted)


def assembled(
    parts: Iterable[TaskPart],
    calls: CallIndex,
    actor_of: Callable[[str], str | None],
    live_tasks: Sequence[Any] | None,
) -> TaskReplay:
    """The team's replay from its tasks' parts (in the order tasks are first seen) and
    the live board's tasks the log lacks."""
    out = TaskReplay()
    for part in parts:
        c = part.counted
        out.applied_revisions += c.applied_revisions
        out.duplicate_revisions += c.duplicate_revisions
        out.rewound_revisions += c.rewound_revisions
        out.undated_revisions += c.undated_revisions
        out.invalid_snapshots += c.invalid_snapshots
        out.unattributed_revisions += c.unattributed_revisions
        out.ambiguous_revisions += c.ambiguous_revisions
        out.first_seen_late.extend(c.first_seen_late)
        for task_id, gaps in c.skipped_revisions.items():
            out.skipped_revisions[task_id] = list(gaps)
        if part.view is not None:
            out.tasks.append(part.view)
    known = {t.id for t in out.tasks}
    for row in live_tasks or ():
        if not isinstance(row, Mapping):
            continue
        row_id = key(row.get("id"))
        if row_id is None or row_id in known:
            continue
        known.add(row_id)
        out.tasks.append(_from_live_board(row_id, row, calls, actor_of))
        out.live_only_tasks.append(row_id)
    out.tasks.sort(key=_natural_id)
    return out


_E = TypeVar("_E", bound=tuple[Any, ...])


def _after_session(entries: tuple[_E, ...], entry: _E) -> tuple[_E, ...]:
    """``entries`` (by session, then seq) with ``entry`` after its session's others."""
    at = bisect_right(entries, entry[0], key=itemgetter(0))
    return (*entries[:at], entry, *entries[at:])


def replay_tasks(
    snapshots: Iterable[tuple[int, TaskRec]],
    calls: CallIndex,
    actor_of: Callable[[str], str | None],
    live_tasks: Sequence[Any] | None,
    lead: str | None = None,
) -> TaskReplay:
    """Every task's history and final state; ``lead`` (the lead's session id) tells an
    assignment from a claim and an unassignment from a release."""
    parts = [
        replay_task(task_id, group, calls, actor_of, lead)
        for task_id, group in task_groups(snapshots).items()
    ]
    return assembled(parts, calls, actor_of, live_tasks)


def _seq_of(item: tuple[int, TaskRec]) -> int:
    return item[0]


def _natural_id(view: TaskView) -> tuple[tuple[int, int | str], ...]:
    return natural_key(view.id)


def _replay_one(
    task_id: str,
    group: Sequence[tuple[int, TaskRec]],
    calls: CallIndex,
    actor_of: Callable[[str], str | None],
    out: TaskReplay,
    lead: str | None,
) -> TaskView | None:
    state: TaskRec | None = None
    history: list[HistoryEntry] = []
    for _seq, snap in group:
        revision = snap.revision
        if revision is None or revision < 1:
            out.invalid_snapshots += 1
            continue
        if state is not None and state.revision is not None and revision <= state.revision:
            if revision == state.revision:
                out.duplicate_revisions += 1
            else:
                out.rewound_revisions += 1
            continue
        if state is None and revision != 1:
            out.first_seen_late.append(task_id)
        elif state is not None and state.revision is not None and revision > state.revision + 1:
            out.skipped_revisions.setdefault(task_id, []).append((state.revision, revision))
        made_by, matches = calls.maker(task_id, revision, snap.subject)
        action = derive_action(state, snap, made_by[0] if made_by else None, lead)
        if made_by is None:
            if matches > 1:
                out.ambiguous_revisions += 1
            else:
                out.unattributed_revisions += 1
        session_id = made_by[0] if made_by else None
        when = snap.time if snap.time is not None else (made_by[1] if made_by else None)
        out.applied_revisions += 1
        state = snap
        if when is None:
            out.undated_revisions += 1
            continue
        history.append(
            HistoryEntry(
                time=when,
                action=action,
                revision=revision,
                status=snap.status or "unknown",
                session_id=session_id,
                actor=actor_of(session_id) if session_id else None,
                owner_id=snap.owner_id,
                blocked_by=snap.blocked_by,
                write_scopes=snap.write_scopes,
            )
        )
    if state is None:
        return None
    return TaskView(
        id=task_id,
        revision=state.revision,
        subject=state.subject,
        description=state.description,
        status=state.status,
        blocked_by=state.blocked_by,
        write_scopes=state.write_scopes,
        owner_id=state.owner_id,
        owner_name=None,
        history=tuple(history),
    )


#: A tool call's action as a history action (a task the log lacks: no snapshots to
#: compare; ``reassign`` may assign, unassign or reassign, so it stays ``updated``).
_ACTION_OF_TOOL = {
    "claim": "claimed",
    "complete": "completed",
    "reopen": "reopened",
    "release": "released",
    "delete": "deleted",
    "edit": "edited",
    "set_dependencies": "dependencies-changed",
}
_STATUS_OF_TOOL = {
    "claim": "in_progress",
    "complete": "completed",
    "reopen": "pending",
    "release": "pending",
    "delete": "deleted",
}


def _from_live_board(
    task_id: str, row: Mapping[str, Any], calls: CallIndex, actor_of: Callable[[str], str | None]
) -> TaskView:
    """A task the live board knows but the log lacks: dated by its unique tool calls."""
    subject = text(row.get("subject"), MESSAGE_BODY_CAP)
    made: list[tuple[int, str, int | None, str | None]] = []
    creator, _ = calls.maker(task_id, 1, subject)
    if creator is not None:
        made.append((1, creator[0], creator[1], "create"))
    for (call_task, expected), matches in calls.updates.items():
        if call_task == task_id and len(matches) == 1 and expected >= 0:
            session_id, when, action = matches[0]
            made.append((expected + 1, session_id, when, action))
    history: list[HistoryEntry] = []
    status = "pending"
    for revision, session_id, when, action in sorted(made, key=lambda m: m[0]):
        if action == "create":
            entry_action, status = "created", "pending"
        else:
            entry_action = _ACTION_OF_TOOL.get(action or "", "updated")
            status = _STATUS_OF_TOOL.get(action or "", status)
        if when is not None:
            history.append(
                HistoryEntry(when, entry_action, revision, status, session_id, actor_of(session_id))
            )
    blocked = row.get("blockedBy")
    scopes = row.get("writeScopes")
    return TaskView(
        id=task_id,
        revision=as_int(row.get("revision")),
        subject=subject,
        description=text(row.get("description"), MESSAGE_BODY_CAP),
        status=text(row.get("status")),
        blocked_by=tuple(s for s in (key(b) for b in blocked) if s)
        if isinstance(blocked, list)
        else (),
        write_scopes=tuple(s for s in (text(w, 4096) for w in scopes) if s)
        if isinstance(scopes, list)
        else (),
        owner_id=None,
        owner_name=text(row.get("ownerName")),
        history=tuple(history),
        from_live_board=True,
    )
