"""The team's tasks: replayed from the lead's snapshots and the members' tool calls,
each on its owner's lane (or the ``unassigned`` lane)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import attrgetter, is_, itemgetter
from typing import Any, NamedTuple

from ..fold.appends import appended
from ..fold.records import TaskCallRec, TaskRec
from ..fold.tasks import (
    CallIndex,
    TaskPart,
    TaskReplay,
    TaskView,
    assembled,
    replay_task,
    task_groups,
)
from ..memo import TASK_ENTRIES_KEPT, Memo, Same
from .inputs import TeamSnapshot
from .roster import Lane, Roster, is_ours
from .task_graph import Analysis, Overlap, Phase, TaskGraph, analyse_on


@dataclass(frozen=True, slots=True)
class TeamTasks:
    replay: TaskReplay
    #: The tasks' JSON, in the replay's order.
    tasks: list[dict[str, Any]]
    deleted: int
    #: Tasks whose owner is not on the team (shown as unassigned).
    orphaned_owner: int
    #: Phases, overlaps, critical path and rule breaks of the tasks.
    graph: TaskGraph


#: Task JSON the memo below holds in all (a big team has a few hundred tasks).
TASKS_KEPT = TASK_ENTRIES_KEPT


@dataclass(frozen=True, slots=True)
class _Placed:
    """What placing a team's tasks gives, apart from the roster it is applied to."""

    replay: TaskReplay
    graph: TaskGraph
    tasks: list[dict[str, Any]]
    deleted: int
    orphaned_owner: int
    #: (the owner's position in the roster's lanes, task id), in the tasks' order.
    owned: tuple[tuple[int, str], ...]
    needs_unassigned: bool
    #: Another team's snapshots in the lead's log, by team id (counted on each build).
    foreign: tuple[tuple[str, int], ...]
    #: The roster token it was placed for, and per task (in the replay's order) what its
    #: JSON was made of besides its view and the roster: its phases and overlaps (the
    #: graph's own objects), and where it went (its owner's lane position or ``None``,
    #: deleted, its owner not on the team). The next placement for the same roster
    #: keeps a task whose view and these are the very same objects as it was.
    token: int
    #: The roster's lanes in order, as a task's placement reads them (the token is
    #: blind to their order and their sessions).
    lanes: tuple[tuple[str, str, str | None], ...]
    phases: Sequence[tuple[Phase, ...]]
    overlaps: Sequence[list[Overlap] | None]
    places: Sequence[_TaskPlace]


class _TaskPlace(NamedTuple):
    """Where one task went: its owner's lane position (``None``: unassigned), deleted,
    its owner named but not on the team."""

    position: int | None
    deleted: bool
    orphaned: bool


#: Each team's last placement, with the inputs it was made from: most appends move no
#: task, and comparing the records (the very same objects from one fold to the next)
#: costs far less than replaying and analysing hundreds of tasks again. One entry per
#: team (its last version), bounded by teams and by tasks.
_PLACED: Memo[str, tuple[tuple[Any, ...], _Placed]] = Memo(
    64, max_weight=TASKS_KEPT, weight=lambda held: len(held[1].tasks) + 1
)


def place_tasks(roster: Roster, team: TeamSnapshot) -> TeamTasks:
    """Replay the tasks and put each on its owner's lane; adds the ``unassigned`` lane
    when an open task has no owner on the team."""
    lead = roster.lead
    live = team.live_tasks if isinstance(team.live_tasks, Sequence) else None
    # The fold's own maps, compared by value (their records are the very same objects
    # from one fold to the next: C-level passes), not lists of a day's records.
    inputs = (
        roster.token(),
        tuple((lane.id, lane.session_id, lane.cut, lane.fold.task_calls) for lane in roster.lanes),
        lead.cut,
        lead.fold.tasks,
        None if live is None else tuple(live),
    )
    held = _PLACED.get(roster.lead_session)
    if held is not None and held[0] == inputs:
        placed = held[1]
    else:
        placed = _place(roster, live, held[1] if held is not None else None)
        _PLACED.put(roster.lead_session, (inputs, placed), owner=roster.lead_session)
    for team_id, n in placed.foreign:  # another team's snapshots: counted, not used
        roster.foreign[team_id] = roster.foreign.get(team_id, 0) + n
    for position, task_id in placed.owned:
        roster.lanes[position].task_ids.append(task_id)
    if placed.needs_unassigned:
        lane = Lane("unassigned", "unassigned", "unassigned", None, None, None)
        lane.task_ids = [
            t["id"]
            for t in placed.tasks
            if t["laneId"] == "unassigned" and t["status"] != "deleted"
        ]
        roster.lanes.append(lane)
    return TeamTasks(
        placed.replay, placed.tasks, placed.deleted, placed.orphaned_owner, placed.graph
    )


@dataclass(frozen=True, slots=True)
class _Replayed:
    """A team's task replay as parts, with what it was made from: an append adds a
    few snapshots and calls, and only the tasks they touch are replayed again."""

    token: int
    cut: int
    #: The lead's snapshot map, and each lane's (session, cut, task-call map).
    snapshots: Mapping[int, TaskRec]
    calls_from: tuple[tuple[str, int, Mapping[int, TaskCallRec]], ...]
    #: The index of every call after its lane's cut.
    index: CallIndex
    #: Each task's snapshots (by seq) and part, in the order tasks are first seen.
    groups: Mapping[str, tuple[tuple[int, TaskRec], ...]]
    parts: Mapping[str, TaskPart]
    #: The tasks whose revision 1 has this subject (a create call attributes it).
    by_subject: Mapping[str, frozenset[str]]
    #: Another team's snapshots in the lead's log, by team id.
    foreign: Mapping[str, int]


#: Each team's last replay as parts: one entry per team (its last version), bounded by
#: teams and by tasks.
_REPLAYED: Memo[str, _Replayed] = Memo(
    64, max_weight=TASKS_KEPT, weight=lambda held: len(held.parts) + 1
)


def _replayed(roster: Roster) -> _Replayed:
    lead = roster.lead
    calls_from = tuple(
        (lane.session_id or roster.lead_session, lane.cut, lane.fold.task_calls)
        for lane in roster.lanes
    )
    token = roster.token()
    held = _REPLAYED.get(roster.lead_session)
    replayed = None
    if held is not None and held.token == token and held.cut == lead.cut:
        replayed = _replayed_on(held, lead.fold.tasks, calls_from, roster)
    if replayed is None:
        replayed = _replayed_afresh(roster, token, calls_from)
    return _REPLAYED.put(roster.lead_session, replayed, owner=roster.lead_session)


def _replayed_afresh(
    roster: Roster,
    token: int,
    calls_from: tuple[tuple[str, int, Mapping[int, TaskCallRec]], ...],
) -> _Replayed:
    calls = tuple(
        (session, s, call)
        for session, cut, task_calls in calls_from
        for s, call in task_calls.items()
        if s >= cut
    )
    index = CallIndex.build(calls)
    lead = roster.lead
    foreign: dict[str, int] = {}
    snapshots = [
        (s, t)
        for s, t in lead.fold.tasks.items()
        if s >= lead.cut and is_ours(t.team_id, roster.lead_ids, foreign)
    ]
    groups = {task_id: tuple(group) for task_id, group in task_groups(snapshots).items()}
    parts = {
        task_id: replay_task(task_id, group, index, roster.actor_of, roster.lead_session)
        for task_id, group in groups.items()
    }
    by_subject: dict[str, set[str]] = {}
    for _s, snap in snapshots:
        if snap.revision == 1 and snap.subject is not None:
            by_subject.setdefault(snap.subject, set()).add(snap.id)
    return _Replayed(
        token,
        lead.cut,
        lead.fold.tasks,
        calls_from,
        index,
        groups,
        parts,
        {subject: frozenset(ids) for subject, ids in by_subject.items()},
        foreign,
    )


def _replayed_on(
    held: _Replayed,
    snapshot_map: Mapping[int, TaskRec],
    calls_from: tuple[tuple[str, int, Mapping[int, TaskCallRec]], ...],
    roster: Roster,
) -> _Replayed | None:
    """``held`` moved on by the snapshots and calls appended since, or ``None`` (replay
    afresh) when anything else changed. A task's replay reads its own snapshots, the
    update calls naming it and the create calls with its first revision's subject:
    the tasks those touch are replayed again, the others keep their parts."""
    new_snaps = appended(held.snapshots, snapshot_map)
    if new_snaps is None or len(calls_from) != len(held.calls_from):
        return None
    if len({session for session, _cut, _calls in calls_from}) != len(calls_from):
        return None  # two lanes of one session: its calls' order is not by lane
    new_calls: list[tuple[str, int, TaskCallRec]] = []
    for (session, cut, task_calls), (was_session, was_cut, was_calls) in zip(
        calls_from, held.calls_from, strict=True
    ):
        if session != was_session or cut != was_cut:
            return None
        added = appended(was_calls, task_calls)
        if added is None:
            return None
        new_calls.extend((session, s, call) for s, call in added if s >= cut)
    foreign = dict(held.foreign)
    fresh = [
        (s, t)
        for s, t in new_snaps
        if s >= held.cut and is_ours(t.team_id, roster.lead_ids, foreign)
    ]
    touched = {snap.id for _s, snap in fresh}
    by_subject = dict(held.by_subject)
    for _s, snap in fresh:
        if snap.revision == 1 and snap.subject is not None:
            by_subject[snap.subject] = by_subject.get(snap.subject, frozenset()) | {snap.id}
    for _session, _s, call in new_calls:
        if call.tool == "update" and call.task_id is not None:
            touched.add(call.task_id)
        elif call.tool == "create" and call.subject is not None:
            touched |= by_subject.get(call.subject, frozenset())
    index = held.index.with_calls(new_calls) if new_calls else held.index
    groups = dict(held.groups)
    for s, snap in fresh:
        groups[snap.id] = (*groups.get(snap.id, ()), (s, snap))
    parts = dict(held.parts)
    # New tasks last, in the order first seen (the parts' order is the replay's).
    new_ids = [t for t in dict.fromkeys(snap.id for _s, snap in fresh) if t not in held.groups]
    for task_id in (*(t for t in touched if t in held.groups), *new_ids):
        group = groups.get(task_id)
        if group is None:
            continue  # a call for a task with no snapshot: no part
        group = groups[task_id] = tuple(sorted(group, key=itemgetter(0)))  # by seq
        parts[task_id] = replay_task(task_id, group, index, roster.actor_of, roster.lead_session)
    if len(parts) != len(groups):
        return None  # every task with snapshots has its part (else replay afresh)
    return _Replayed(
        held.token,
        held.cut,
        snapshot_map,
        calls_from,
        index,
        groups,
        parts,
        by_subject,
        foreign,
    )


#: Each team's last task graph analysis: a task move reads again the phases and
#: overlaps it can change, not every task's. One entry per team (its last version),
#: bounded by teams and by tasks.
_ANALYSED: Memo[str, Analysis] = Memo(
    64, max_weight=TASKS_KEPT, weight=lambda held: len(held.views) + 1
)


def _place(roster: Roster, live: Sequence[Any] | None, held: _Placed | None = None) -> _Placed:
    """The team's tasks placed; ``held``: the team's last placement, whose tasks that
    did not move (the very same view, phases and overlaps, for the same roster) are
    kept as they were: a task move touches a task or two of a day's hundreds."""
    replayed = _replayed(roster)
    replay = assembled(replayed.parts.values(), replayed.index, roster.actor_of, live)
    foreign = replayed.foreign
    analysis = analyse_on(_ANALYSED.get(roster.lead_session), replay.tasks)
    _ANALYSED.put(roster.lead_session, analysis, owner=roster.lead_session)
    graph = analysis.graph
    token = roster.token()
    views = replay.tasks
    ids = list(map(_VIEW_ID, views))
    phases = list(map(graph.phases.get, ids, repeat(())))
    overlaps = list(map(graph.overlaps.get, ids))
    lanes = tuple((lane.id, lane.name, lane.session_id) for lane in roster.lanes)
    if held is not None and held.token == token and held.lanes == lanes:
        kept = _kept_places(held, views, phases, overlaps)
    else:
        kept = [False] * len(views)
    positions: dict[int, int] | None = None
    tasks: list[dict[str, Any]] = []
    places: list[_TaskPlace] = []
    for i, view in enumerate(views):
        if kept[i]:
            assert held is not None
            tasks.append(held.tasks[i])
            places.append(held.places[i])
            continue
        if positions is None:
            positions = {id(lane): n for n, lane in enumerate(roster.lanes)}
        owner = roster.resolve(view.owner_id) if view.owner_id else None
        if owner is None and view.owner_name:
            owner = roster.resolve(view.owner_name)
        lane_id = owner.id if owner else "unassigned"
        places.append(
            _TaskPlace(
                positions[id(owner)] if owner is not None else None,
                view.status == "deleted",
                bool(view.owner_id) and owner is None,
            )
        )
        tasks.append(_task_json(view, owner, lane_id, graph, roster, token))
    owned = tuple(
        (place.position, task_id)
        for place, task_id in zip(places, ids, strict=True)
        if place.position is not None and not place.deleted
    )
    return _Placed(
        replay,
        graph,
        tasks,
        sum(place.deleted for place in places),
        sum(place.orphaned for place in places),
        owned,
        any(place.position is None and not place.deleted for place in places),
        tuple(foreign.items()),
        token,
        lanes,
        phases,
        overlaps,
        places,
    )


_VIEW_ID = attrgetter("id")


def _kept_places(
    held: _Placed,
    views: Sequence[TaskView],
    phases: Sequence[tuple[Phase, ...]],
    overlaps: Sequence[list[Overlap] | None],
) -> list[bool]:
    """Per task, whether its placement as ``held`` made it still holds: the same view,
    phases and overlaps at the same place (identity first, in C-level passes; the
    overlaps, lists, by value where they are not the same object)."""
    kept = list(map(is_, views, held.replay.tasks))
    kept += [False] * (len(views) - len(kept))
    for i in compress(count(), kept):
        was = held.overlaps[i]
        if phases[i] is not held.phases[i] or (overlaps[i] is not was and overlaps[i] != was):
            kept[i] = False
    return kept


def _name_of(roster: Roster, owner_id: str | None) -> str | None:
    lane = roster.resolve(owner_id) if owner_id else None
    return lane.name if lane else None


#: Each task's JSON by everything it is made of (its view and phases, by identity, its
#: owner, lane and overlaps, and the roster that names its history's owners): a replay
#: after an append moves a task or two, and the others keep their JSON (no new dicts
#: per task, which the collector would then traverse). Bounded by entries, and per
#: task by its last two versions (the older are never asked for again).
_TASK_JSON: Memo[tuple[Any, ...], dict[str, Any]] = Memo(TASKS_KEPT, per_slot=2)


def _task_json(
    view: TaskView,
    owner: Lane | None,
    lane_id: str,
    graph: TaskGraph,
    roster: Roster,
    token: int,
) -> dict[str, Any]:
    phases = graph.phases.get(view.id, ())
    overlaps = tuple(graph.overlaps.get(view.id, ()))
    owner_key = (owner.name, owner.session_id) if owner is not None else None
    # The view and its phases by identity (frozen: the same object is the same value;
    # an unmoved task keeps both from one placement to the next): hashing a day's
    # views and phases by value on every task move cost more than the rest of it.
    memo_key = (Same(view), owner_key, lane_id, Same(phases), overlaps, token)
    held = _TASK_JSON.get(memo_key)
    if held is None:
        held = _TASK_JSON.put(
            memo_key,
            _fresh_task_json(view, owner, lane_id, phases, overlaps, roster),
            slot=(roster.lead_session, view.id),
            owner=roster.lead_session,
        )
    return held


def _fresh_task_json(
    view: TaskView,
    owner: Lane | None,
    lane_id: str,
    phases: Sequence[Phase],
    overlaps: Sequence[Overlap],
    roster: Roster,
) -> dict[str, Any]:
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
                # The owner after this move (the lead may assign: not always the actor).
                "ownerId": h.owner_id,
                "ownerName": _name_of(roster, h.owner_id),
            }
            for h in view.history
        ],
        "phases": [p.json() for p in phases],
        "overlaps": [o.json() for o in overlaps],
    }
