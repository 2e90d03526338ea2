"""What the board reads of each task besides its row (the extent, the graph's context,
"where the time went"), once per version of the task: a poll after an append reads
the tasks that moved, not every task of a long run."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..memo import TASK_ENTRIES_KEPT, TEAMS_SIZED_FOR, Memo
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
_FACTS: Memo[Hashable, TaskFacts] = Memo(TASK_FACTS_KEPT, lru=True)


def task_facts(task: Mapping[str, Any], value: Hashable | None) -> TaskFacts:
    """``value``: what names the task's value exactly (its bytes, or its wire
    generation; ``None``: not JSON, read every time)."""
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


@dataclass(frozen=True, slots=True)
class TeamTaskFacts:
    """Every task's facts, and what the board reads of all of them together."""

    facts: tuple[TaskFacts, ...]
    #: The earliest and latest move of any task (see moves_span).
    moves: tuple[int, int] | None
    #: Each task id's first place, and when each task completed at its end (the graph).
    positions: Mapping[str, int]
    done_at: Mapping[str, int]
    #: The ids of the tasks each member held in progress ("where the time went").
    held: Mapping[str, frozenset[str]]
    #: Any task has phases (else there is no "where the time went").
    phased: bool
    #: The latest move or phase start of any task (see TaskFacts.latest).
    latest: int | None = None


#: Each team's task facts by the very values of its tasks (each task's bytes or wire
#: generation, in order): most polls move no task, and the 1280 px poll after the
#: 400 px one reads the same tasks, so none is looked up one by one. Bounded by entries:
#: each kept team's last versions (a few numbers per task).
TEAM_FACTS_KEPT = 2 * TEAMS_SIZED_FOR
_TEAM_FACTS: Memo[tuple[Hashable, ...], TeamTaskFacts] = Memo(TEAM_FACTS_KEPT, lru=True)


def team_task_facts(
    tasks: Sequence[Mapping[str, Any]], values: Sequence[Hashable | None]
) -> TeamTaskFacts:
    """The facts of ``tasks`` (``values``: each one's, as for :func:`task_facts`)."""
    key = tuple(values) if None not in values else None
    hit = _TEAM_FACTS.get(key) if key is not None else None
    if hit is not None:
        return hit
    facts = tuple(task_facts(t, value) for t, value in zip(tasks, values, strict=True))
    positions: dict[str, int] = {}
    done: dict[str, int] = {}
    held: dict[str, set[str]] = {}
    for n, fact in enumerate(facts):
        positions.setdefault(fact.task_id, n)
        if fact.done_at is not None:
            done[fact.task_id] = fact.done_at
        for owner in fact.holders:
            held.setdefault(owner, set()).add(fact.task_id)
    team = TeamTaskFacts(
        facts=facts,
        moves=moves_span(facts),
        positions=positions,
        done_at=done,
        held={owner: frozenset(ids) for owner, ids in held.items()},
        phased=any("phases" in t for t in tasks),
        latest=max((f.latest for f in facts if f.latest is not None), default=None),
    )
    return _TEAM_FACTS.put(key, team) if key is not None else team
