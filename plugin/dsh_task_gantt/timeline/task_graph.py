"""The task graph over time (pure, total): each task's phases, write-scope overlaps,
the critical path, and what DSH's own projection would refuse.

Everything is read from the tasks' dated history entries (each carries its snapshot's
status, owner, blockers and scopes). A task's state at time ``t`` is its last entry at
or before ``t`` (ties in revision order); docs/host-contract.md §7 (Tasks) rules the rest:

- *ready* = pending and every blocker completed (at ``t``); a blocker not on the board
  or deleted is never completed, so its dependents stay blocked (a note says why);
- a task's phases cut its life, from its first entry on, with no gap and no overlap;
  the last one is open (``end`` null: still so at the end of what was read);
- two scopes overlap when equal or one is a path prefix of the other at a ``/``.

Hostile input (huge lists, unknown ids, cycles) is bounded by the caps below, never an
exception; cycles only matter to the critical path, which never visits a task twice.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..fold.tasks import HistoryEntry, TaskReplay, TaskView

#: Blockers and scopes considered per snapshot (the fold already caps lists at 1,024).
MAX_BLOCKERS = 64
MAX_SCOPES = 64
#: Tasks named in one note before "and N more".
NOTE_NAMES = 5

BLOCKED = "blocked"
READY = "ready"
IN_PROGRESS = "in-progress"
COMPLETED = "completed"
DELETED = "deleted"
PHASE_KINDS = (BLOCKED, READY, IN_PROGRESS, COMPLETED, DELETED)


@dataclass(frozen=True, slots=True)
class Phase:
    kind: str
    start: int
    #: ``None``: the task is still so at the end of what was read.
    end: int | None
    owner_id: str | None = None
    #: The blockers not completed then (``blocked`` only).
    blockers: tuple[str, ...] = ()

    def json(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "start": self.start, "end": self.end}
        if self.kind == IN_PROGRESS:
            out["ownerId"] = self.owner_id
        if self.kind == BLOCKED:
            out["blockers"] = list(self.blockers)
        return out


@dataclass(frozen=True, slots=True)
class Overlap:
    task_id: str
    start: int
    end: int | None
    #: This task's scopes that overlap the other's then.
    scopes: tuple[str, ...]

    def json(self) -> dict[str, object]:
        return {
            "taskId": self.task_id,
            "start": self.start,
            "end": self.end,
            "scopes": list(self.scopes),
        }


@dataclass(frozen=True, slots=True)
class CriticalPath:
    #: From the first task of the chain to the last-completed one.
    task_ids: tuple[str, ...]
    start: int
    end: int

    def json(self) -> dict[str, object]:
        return {
            "taskIds": list(self.task_ids),
            "start": self.start,
            "end": self.end,
            "duration": self.end - self.start,
        }


@dataclass(slots=True)
class TaskGraph:
    phases: dict[str, tuple[Phase, ...]] = field(default_factory=dict)
    overlaps: dict[str, list[Overlap]] = field(default_factory=dict)
    critical_path: CriticalPath | None = None
    #: Blocker ids named by some task but not on the board, with who names them.
    missing_blockers: dict[str, list[str]] = field(default_factory=dict)
    #: Tasks whose last blockers include a deleted task.
    on_deleted: list[str] = field(default_factory=list)
    #: Tasks on a dependency cycle (last snapshots), each once.
    cyclic: list[str] = field(default_factory=list)
    #: Tasks blocking themselves (last snapshots).
    self_blocked: list[str] = field(default_factory=list)


def scopes_overlap(a: str, b: str) -> bool:
    """DSH's rule: equal, or one is a path prefix of the other at a ``/``."""
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _timeline(view: TaskView) -> list[HistoryEntry]:
    return sorted(view.history, key=lambda h: (h.time, h.revision))


class _Statuses:
    """Each task's status over time, for "was this blocker completed at ``t``"."""

    def __init__(
        self,
        entries: Mapping[str, Sequence[HistoryEntry]],
        known: tuple[Mapping[str, list[int]], Mapping[str, list[str]]] | None = None,
    ) -> None:
        """``known``: the times and statuses already read (``entries`` is then unused)."""
        if known is not None:
            self._times, self._status = known
            return
        self._times = {tid: [h.time for h in hs] for tid, hs in entries.items()}
        self._status = {tid: [h.status for h in hs] for tid, hs in entries.items()}

    def at(self, task_id: str, t: int) -> str | None:
        times = self._times.get(task_id)
        if not times:
            return None
        i = bisect_right(times, t) - 1
        return self._status[task_id][i] if i >= 0 else None

    def times(self, task_id: str) -> list[int]:
        return self._times.get(task_id, [])


def _state_at(entries: Sequence[HistoryEntry], times: list[int], t: int) -> HistoryEntry | None:
    i = bisect_right(times, t) - 1
    return entries[i] if i >= 0 else None


def _kind(
    state: HistoryEntry, statuses: _Statuses, t: int
) -> tuple[str, str | None, tuple[str, ...]]:
    status = state.status
    if status == "completed":
        return COMPLETED, None, ()
    if status == "deleted":
        return DELETED, None, ()
    if status == "in_progress":
        return IN_PROGRESS, state.owner_id, ()
    # Pending (and any status DSH does not write, read as not started): ready or blocked.
    open_blockers = tuple(
        b
        for b in dict.fromkeys(state.blocked_by[:MAX_BLOCKERS])
        if statuses.at(b, t) != "completed"
    )
    return (BLOCKED, None, open_blockers) if open_blockers else (READY, None, ())


def task_phases(entries: Sequence[HistoryEntry], statuses: _Statuses) -> tuple[Phase, ...]:
    """One task's phases: its own changes and its blockers' cut them."""
    if not entries:
        return ()
    own_times = [h.time for h in entries]
    cuts = set(own_times)
    for h in entries:
        for blocker in h.blocked_by[:MAX_BLOCKERS]:
            cuts.update(statuses.times(blocker))
    first = own_times[0]
    phases: list[Phase] = []
    current: tuple[str, str | None, tuple[str, ...]] | None = None
    since = first
    for t in sorted(c for c in cuts if c >= first):
        state = _state_at(entries, own_times, t)
        assert state is not None  # t >= the first entry's time
        now = _kind(state, statuses, t)
        if now != current:
            if current is not None:
                phases.append(Phase(current[0], since, t, current[1], current[2]))
            current, since = now, t
    assert current is not None
    phases.append(Phase(current[0], since, None, current[1], current[2]))
    return tuple(phases)


def _overlaps(timelines: Mapping[str, Sequence[HistoryEntry]]) -> dict[str, list[Overlap]]:
    """Intervals in which two tasks were both in progress with overlapping scopes."""
    changes = sorted(
        ((h.time, h.revision, tid, h) for tid, hs in timelines.items() for h in hs),
        key=lambda c: (c[0], c[2], c[1]),
    )
    working: dict[str, tuple[str, ...]] = {}  # in-progress task -> its scopes
    open_pairs: dict[tuple[str, str], tuple[int, tuple[str, ...], tuple[str, ...]]] = {}
    out: dict[str, list[Overlap]] = {}

    def close(pair: tuple[str, str], t: int | None) -> None:
        start, mine, theirs = open_pairs.pop(pair)
        if t is not None and t <= start:
            return  # both at once for no time at all
        out.setdefault(pair[0], []).append(Overlap(pair[1], start, t, mine))
        out.setdefault(pair[1], []).append(Overlap(pair[0], start, t, theirs))

    i = 0
    while i < len(changes):
        t = changes[i][0]
        touched: set[str] = set()
        while i < len(changes) and changes[i][0] == t:
            _, _, tid, h = changes[i]
            if h.status == "in_progress" and h.write_scopes:
                working[tid] = tuple(dict.fromkeys(h.write_scopes[:MAX_SCOPES]))
            else:
                working.pop(tid, None)
            touched.add(tid)
            i += 1
        for tid in sorted(touched):
            for pair in [p for p in open_pairs if tid in p]:
                a, b = pair
                now = _shared(working[a], working[b]) if a in working and b in working else None
                if now != open_pairs[pair][1:]:
                    close(pair, t)  # reopened below when the scopes still overlap
            if tid not in working:
                continue
            for other in working:
                pair = (tid, other) if tid < other else (other, tid)
                if other == tid or pair in open_pairs:
                    continue
                shared = _shared(working[pair[0]], working[pair[1]])
                if shared is not None:
                    open_pairs[pair] = (t, *shared)
    for pair in list(open_pairs):
        close(pair, None)
    for found in out.values():
        found.sort(key=lambda o: (o.start, o.task_id))
    return out


def _shared(a: Sequence[str], b: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(a's overlapping scopes, b's)`` or ``None`` when none overlap."""
    mine = tuple(x for x in a if any(scopes_overlap(x, y) for y in b))
    if not mine:
        return None
    return mine, tuple(y for y in b if any(scopes_overlap(x, y) for x in a))


def _completed_at(entries: Sequence[HistoryEntry]) -> int | None:
    """When a task (completed at the end) was completed last."""
    if not entries or entries[-1].status != "completed":
        return None
    i = len(entries) - 1
    while i > 0 and entries[i - 1].status == "completed":
        i -= 1
    return entries[i].time


def _critical_path(
    views: Mapping[str, TaskView], timelines: Mapping[str, Sequence[HistoryEntry]]
) -> CriticalPath | None:
    done = {tid: at for tid, hs in timelines.items() if (at := _completed_at(hs)) is not None}
    return _path_of(views, timelines, done)


def _path_of(
    views: Mapping[str, TaskView],
    timelines: Mapping[str, Sequence[HistoryEntry]],
    done: Mapping[str, int],
) -> CriticalPath | None:
    """The critical path, from when each task completed last (``done``)."""
    if not done:
        return None
    last = max(done, key=lambda tid: (done[tid], tid))
    chain = [last]
    seen = {last}
    while True:
        blockers = [
            b for b in views[chain[-1]].blocked_by[:MAX_BLOCKERS] if b in done and b not in seen
        ]
        if not blockers:
            break
        step = max(blockers, key=lambda b: (done[b], b))
        chain.append(step)
        seen.add(step)
    chain.reverse()
    start = timelines[chain[0]][0].time
    return CriticalPath(tuple(chain), min(start, done[last]), done[last])


def _cycles(views: Mapping[str, TaskView]) -> list[str]:
    """Tasks on a cycle of the last snapshots' ``blockedBy`` (iterative, bounded)."""
    graph = {
        tid: [b for b in v.blocked_by[:MAX_BLOCKERS] if b in views and b != tid]
        for tid, v in views.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[str] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            edges = graph[node]
            if child < len(edges):
                work.append((node, child + 1))
                nxt = edges[child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.extend(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def analyse(tasks: Iterable[TaskView]) -> TaskGraph:
    """The graph's phases, overlaps, critical path and rule breaks for ``tasks``."""
    views = {v.id: v for v in tasks}
    timelines = {tid: _timeline(v) for tid, v in views.items()}
    statuses = _Statuses(timelines)
    graph = TaskGraph()
    for tid, entries in timelines.items():
        graph.phases[tid] = task_phases(entries, statuses)
    graph.overlaps = _overlaps(timelines)
    graph.critical_path = _critical_path(views, timelines)
    _rules(graph, views, {tid: _named(views[tid], timelines[tid]) for tid in views})
    graph.cyclic = _cycles(views)
    return graph


# -- the analysis carried on -------------------------------------------------------------

#: A task's write state at each of its change times: its scopes while in progress with
#: scopes (what an overlap reads), else ``None``; the last entry at a time wins.
_Working = tuple[tuple[int, tuple[str, ...] | None], ...]


@dataclass(frozen=True, slots=True)
class Analysis:
    """:func:`analyse`'s graph with what it was read from, so that the next one, after
    an append moved a task or two, reads again only what those moves can change (see
    :func:`analyse_on`). Never mutated once made (its graph neither)."""

    graph: TaskGraph
    #: The tasks by id, in their order.
    views: Mapping[str, TaskView]
    timelines: Mapping[str, tuple[HistoryEntry, ...]]
    #: Each task's entries' times and statuses (what a dependent's phases read of it).
    times: Mapping[str, list[int]]
    statuses: Mapping[str, list[str]]
    #: Each task's blockers named by its entries or its last snapshot (capped), sorted.
    named: Mapping[str, tuple[str, ...]]
    #: Each blocker id: the tasks naming it (see ``named``).
    dependents: Mapping[str, frozenset[str]]
    working: Mapping[str, _Working]
    #: When each task completed last (tasks completed at the end).
    done: Mapping[str, int]
    #: Each task ever in progress with scopes: from its first such state to the end of
    #: its last (``None``: still so). Two tasks overlap only within both.
    windows: Mapping[str, tuple[int, int | None]]


def _named(view: TaskView, timeline: Sequence[HistoryEntry]) -> tuple[str, ...]:
    named = set(view.blocked_by[:MAX_BLOCKERS])
    for h in timeline:
        named.update(h.blocked_by[:MAX_BLOCKERS])
    return tuple(sorted(named))


def _working(timeline: Sequence[HistoryEntry]) -> _Working:
    out: list[tuple[int, tuple[str, ...] | None]] = []
    for h in timeline:
        scopes = (
            tuple(dict.fromkeys(h.write_scopes[:MAX_SCOPES]))
            if h.status == "in_progress" and h.write_scopes
            else None
        )
        if out and out[-1][0] == h.time:
            out[-1] = (h.time, scopes)
        else:
            out.append((h.time, scopes))
    return tuple(out)


def _window(working: _Working) -> tuple[int, int | None] | None:
    """When the task first was in progress with scopes, and when it last stopped being
    so (``None``: it still is); ``None`` when it never was."""
    start: int | None = None
    end: int | None = None
    for t, scopes in working:
        if scopes is not None:
            if start is None:
                start = t
            end = None
        elif start is not None and end is None:
            end = t
    return None if start is None else (start, end)


def _windows_meet(a: tuple[int, int | None], b: tuple[int, int | None]) -> bool:
    return (b[1] is None or a[0] < b[1]) and (a[1] is None or b[0] < a[1])


def _pair_overlaps(
    a: _Working, b: _Working
) -> list[tuple[int, int | None, tuple[str, ...], tuple[str, ...]]]:
    """When tasks ``a`` and ``b`` (``a``'s id first) were both in progress with
    overlapping scopes, with each one's overlapping scopes: what :func:`_overlaps`
    finds for this pair (it reads a pair again only when one of the two changes)."""
    out: list[tuple[int, int | None, tuple[str, ...], tuple[str, ...]]] = []
    if not any(w is not None for _t, w in a) or not any(w is not None for _t, w in b):
        return out
    i = j = 0
    wa: tuple[str, ...] | None = None
    wb: tuple[str, ...] | None = None
    opened: tuple[int, tuple[str, ...], tuple[str, ...]] | None = None
    while i < len(a) or j < len(b):
        t = min(a[i][0] if i < len(a) else b[j][0], b[j][0] if j < len(b) else a[i][0])
        if i < len(a) and a[i][0] == t:
            wa = a[i][1]
            i += 1
        if j < len(b) and b[j][0] == t:
            wb = b[j][1]
            j += 1
        now = _shared(wa, wb) if wa is not None and wb is not None else None
        if opened is not None and now != opened[1:]:
            if t > opened[0]:
                out.append((opened[0], t, opened[1], opened[2]))
            opened = None
        if opened is None and now is not None:
            opened = (t, *now)
    if opened is not None:
        out.append((opened[0], None, opened[1], opened[2]))
    return out


def _rules(
    graph: TaskGraph, views: Mapping[str, TaskView], named: Mapping[str, tuple[str, ...]]
) -> None:
    """The missing blockers, dependencies on deleted tasks and self-blocks, as
    :func:`analyse` finds them (in the tasks' order)."""
    for tid, view in views.items():
        for blocker in named[tid]:
            if blocker not in views:
                graph.missing_blockers.setdefault(blocker, []).append(tid)
        if view.status != "deleted" and any(
            views[b].status == "deleted" for b in view.blocked_by if b in views
        ):
            graph.on_deleted.append(tid)
        if tid in view.blocked_by:
            graph.self_blocked.append(tid)


def _analysed_afresh(tasks: Iterable[TaskView]) -> Analysis:
    views = {v.id: v for v in tasks}
    timelines = {tid: tuple(_timeline(v)) for tid, v in views.items()}
    times = {tid: [h.time for h in hs] for tid, hs in timelines.items()}
    statuses = {tid: [h.status for h in hs] for tid, hs in timelines.items()}
    named = {tid: _named(views[tid], hs) for tid, hs in timelines.items()}
    dependents: dict[str, set[str]] = {}
    for tid, blockers in named.items():
        for b in blockers:
            dependents.setdefault(b, set()).add(tid)
    known = _Statuses({}, (times, statuses))
    graph = TaskGraph()
    for tid, entries in timelines.items():
        graph.phases[tid] = task_phases(entries, known)
    graph.overlaps = _overlaps(timelines)
    done = {tid: at for tid, hs in timelines.items() if (at := _completed_at(hs)) is not None}
    graph.critical_path = _path_of(views, timelines, done)
    _rules(graph, views, named)
    graph.cyclic = _cycles(views)
    working = {tid: _working(hs) for tid, hs in timelines.items()}
    windows = {tid: w for tid, ws in working.items() if (w := _window(ws)) is not None}
    return Analysis(
        graph,
        views,
        timelines,
        times,
        statuses,
        named,
        {b: frozenset(ds) for b, ds in dependents.items()},
        working,
        done,
        windows,
    )


def analyse_on(held: Analysis | None, tasks: Iterable[TaskView]) -> Analysis:
    """:func:`analyse` of ``tasks`` (its graph is equal to it), read again only where
    ``tasks`` differ from ``held``'s (the last analysis of this board, or ``None``): a
    task's phases change with its own entries and its blockers' statuses, a pair's
    overlaps with either task, the rest is a pass over what is kept per task. A board
    that lost a task is analysed afresh."""
    views = {v.id: v for v in tasks}
    if held is None or not held.views.keys() <= views.keys():
        return _analysed_afresh(views.values())
    was = held.views
    changed = [
        tid
        for tid, v in views.items()
        if (old := was.get(tid)) is None or (old is not v and old != v)
    ]
    if not changed and list(was) == list(views):
        return held
    timelines = dict(held.timelines)
    times, statuses = dict(held.times), dict(held.statuses)
    named, working, done = dict(held.named), dict(held.working), dict(held.done)
    windows = dict(held.windows)
    dependents = dict(held.dependents)
    #: Tasks whose statuses over time changed (or that are new): their dependents'
    #: phases are read again.
    moved: list[str] = []
    for tid in changed:
        hs = tuple(_timeline(views[tid]))
        timelines[tid] = hs
        new_times, new_statuses = [h.time for h in hs], [h.status for h in hs]
        if tid not in was or new_times != times[tid] or new_statuses != statuses[tid]:
            moved.append(tid)
        times[tid], statuses[tid] = new_times, new_statuses
        old_named = named.get(tid, ())
        named[tid] = _named(views[tid], hs)
        if named[tid] != old_named:
            for b in set(old_named) - set(named[tid]):
                dependents[b] = dependents[b] - {tid}
                if not dependents[b]:
                    del dependents[b]
            for b in set(named[tid]) - set(old_named):
                dependents[b] = dependents.get(b, frozenset()) | {tid}
        working[tid] = _working(hs)
        window = _window(working[tid])
        if window is None:
            windows.pop(tid, None)
        else:
            windows[tid] = window
        at = _completed_at(hs)
        if at is None:
            done.pop(tid, None)
        else:
            done[tid] = at
    again = set(changed)
    for tid in moved:
        again |= dependents.get(tid, frozenset())
    known = _Statuses({}, (times, statuses))
    graph = TaskGraph()
    phases = held.graph.phases
    fresh = {tid: task_phases(timelines[tid], known) for tid in again}
    # Phases read again to the same value stay the very same tuple (readers compare
    # by identity first).
    graph.phases = {
        tid: phases[tid] if tid not in fresh or fresh[tid] == phases.get(tid) else fresh[tid]
        for tid in views
    }
    graph.overlaps = _overlaps_on(held.graph.overlaps, working, windows, changed)
    graph.critical_path = _path_of(views, timelines, done)
    _rules(graph, views, named)
    same_edges = list(was) == list(views) and all(
        was[tid].blocked_by == views[tid].blocked_by for tid in changed
    )
    graph.cyclic = list(held.graph.cyclic) if same_edges else _cycles(views)
    return Analysis(
        graph, views, timelines, times, statuses, named, dependents, working, done, windows
    )


def _overlaps_on(
    held: Mapping[str, list[Overlap]],
    working: Mapping[str, _Working],
    windows: Mapping[str, tuple[int, int | None]],
    changed: Sequence[str],
) -> dict[str, list[Overlap]]:
    """``held``'s overlaps with every pair that names a ``changed`` task read again
    (the pairs whose windows meet: the others never overlap)."""
    gone = set(changed)
    out: dict[str, list[Overlap]] = {}
    for tid, found in held.items():
        if tid in gone:
            continue
        kept = [o for o in found if o.task_id not in gone]
        if kept:
            out[tid] = kept
    touched: set[str] = set()
    done_pairs: set[tuple[str, str]] = set()
    for tid in changed:
        window = windows.get(tid)
        if window is None:
            continue
        for other, theirs in windows.items():
            if other == tid or not _windows_meet(window, theirs):
                continue
            pair = (tid, other) if tid < other else (other, tid)
            if pair in done_pairs:
                continue
            done_pairs.add(pair)
            for start, end, mine, their in _pair_overlaps(working[pair[0]], working[pair[1]]):
                out.setdefault(pair[0], []).append(Overlap(pair[1], start, end, mine))
                out.setdefault(pair[1], []).append(Overlap(pair[0], start, end, their))
                touched.update(pair)
    for tid in touched:
        out[tid].sort(key=lambda o: (o.start, o.task_id))
    return out


def names(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:NOTE_NAMES])
    return shown + (f" and {len(ids) - NOTE_NAMES} more" if len(ids) > NOTE_NAMES else "")


def graph_notes(graph: TaskGraph) -> list[str]:
    """What the graph breaks of DSH's rules, in words (drawn anyway)."""
    notes: list[str] = []
    if graph.missing_blockers:
        ids = sorted(graph.missing_blockers)
        dependents = sorted({d for ds in graph.missing_blockers.values() for d in ds})
        notes.append(
            f"{len(ids)} blocker{'s' if len(ids) != 1 else ''} not on the board ({names(ids)}), "
            f"named by {names(dependents)}: drawn as never completed, so those tasks stay blocked"
        )
    if graph.on_deleted:
        notes.append(
            f"{names(sorted(graph.on_deleted))} depend{'s' if len(graph.on_deleted) == 1 else ''}"
            " on a deleted task, which never completes"
        )
    if graph.cyclic:
        notes.append(
            f"a dependency cycle was written anyway ({names(sorted(graph.cyclic))}); "
            "its tasks are drawn blocked by each other"
        )
    if graph.self_blocked:
        notes.append(f"{names(sorted(graph.self_blocked))} list themselves as a blocker")
    return notes


def task_refusals(replay: TaskReplay, graph: TaskGraph) -> list[str]:
    """Why DSH's projection would refuse this board (docs/host-contract.md §7), in words."""
    reasons: list[str] = []
    if replay.first_seen_late:
        reasons.append(f"{names(replay.first_seen_late)} first seen at a revision above 1")
    for task_id, gaps in sorted(replay.skipped_revisions.items()):
        jumps = ", ".join(f"{a} to {b}" for a, b in gaps[:NOTE_NAMES])
        reasons.append(f"{task_id} skips from revision {jumps}")
    if replay.duplicate_revisions or replay.rewound_revisions:
        reasons.append("a task revision written again or rewound")
    if graph.missing_blockers:
        reasons.append(f"a blocker not on the board ({names(sorted(graph.missing_blockers))})")
    if graph.on_deleted:
        reasons.append(f"a dependency on a deleted task ({names(sorted(graph.on_deleted))})")
    if graph.cyclic:
        reasons.append(f"a dependency cycle ({names(sorted(graph.cyclic))})")
    if graph.self_blocked:
        reasons.append(f"a task blocking itself ({names(sorted(graph.self_blocked))})")
    return reasons
