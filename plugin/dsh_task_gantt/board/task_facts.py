"""What the board reads of each task besides its row (the extent, the graph's context,
"where the time went"), once per version of the task: a poll after an append reads
the tasks that moved, not every task of a long run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..memo import TASK_ENTRIES_KEPT, Memo
from .geometry import as_int, as_map, as_seq, as_str


@dataclass(frozen=True, slots=True)
class TaskFacts:
    task_id: str
    #: The earliest and latest of its moves (``history`` times): the board's extent.
    moves: tuple[int, int] | None
    #: Its latest move or phase start: what "where the time went" runs up to.
    latest: int | None
    #: Whoever held it in progress (the owners of its in-progress phases).
    holders: frozenset[str]
    #: When it was completed, if its last phase is a completion (the graph's links).
    done_at: int | None


#: Each task's facts by its bytes (a task dict is not promised to stay as it was, and a
#: move of one task may give every task a new dict). Bounded by entries (each a few
#: numbers and the task's bytes); the facts in use are refreshed.
TASK_FACTS_KEPT = TASK_ENTRIES_KEPT
_FACTS: Memo[bytes, TaskFacts] = Memo(TASK_FACTS_KEPT, lru=True)


def task_facts(task: Mapping[str, Any], value: bytes | None) -> TaskFacts:
    """``value``: the task's bytes (``None``: not JSON, read every time)."""
    hit = _FACTS.get(value) if value is not None else None
    if hit is not None:
        return hit
    moves = [
        t
        for entry in as_seq(task.get("history"))
        if (t := as_int(as_map(entry).get("time"))) is not None
    ]
    phases = [as_map(p) for p in as_seq(task.get("phases"))]
    starts = [t for p in phases if (t := as_int(p.get("start"))) is not None]
    holders = frozenset(
        as_str(p.get("ownerId"))
        for p in phases
        if as_str(p.get("kind")) == "in-progress" and as_str(p.get("ownerId"))
    )
    done_at = None
    if phases and as_str(phases[-1].get("kind")) == "completed":
        done_at = as_int(phases[-1].get("start"))
    facts = TaskFacts(
        task_id=as_str(task.get("id")),
        moves=(min(moves), max(moves)) if moves else None,
        latest=max(moves + starts, default=None),
        holders=holders,
        done_at=done_at,
    )
    return _FACTS.put(value, facts) if value is not None else facts


def moves_span(facts: Sequence[TaskFacts]) -> tuple[int, int] | None:
    """The earliest and latest move of any of these tasks."""
    spans = [f.moves for f in facts if f.moves is not None]
    if not spans:
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans)
