"""A timeline built after appends, from the memos the builds before it left, is the
timeline built from scratch: a delta poll resumes pairings, counts and drawings
instead of redoing a lane's whole history (docs/interfaces.md: the timeline JSON)."""

from __future__ import annotations

import dataclasses
import json
import weakref
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.fold import LaneFold, fold_lane
from dsh_task_gantt.memo import clear_memos
from dsh_task_gantt.timeline import build_timeline
from dsh_task_gantt.timeline.model import Model
from tests.kit.foldkit import LEAD, Log, source, team

MEMBERS = ("m1", "m2")
_WHO = st.sampled_from([LEAD, *MEMBERS, "outsider", None])
_TURN = st.sampled_from(["t1", "t2", "t3", "t4", "t5", None])
_MSG = st.sampled_from([f"msg-{n}" for n in range(8)])
_AT = st.one_of(st.integers(0, 40), st.none())
_TASK = st.sampled_from(["task-1", "task-2", "task-10"])
_USAGE = st.fixed_dictionaries(
    {"inputTokens": st.integers(0, 9), "outputTokens": st.integers(0, 9)}
)
#: One appended event: (lane, what, and what it needs).
_OP = st.one_of(
    st.tuples(st.sampled_from(["lead", *MEMBERS]), st.just("start"), _TURN, _AT),
    st.tuples(st.sampled_from(["lead", *MEMBERS]), st.just("end"), _TURN, _AT),
    st.tuples(st.sampled_from(["lead", *MEMBERS]), st.just("usage"), _TURN, _USAGE),
    st.tuples(st.just("lead"), st.just("queued"), _MSG, st.tuples(_WHO, _WHO, _AT)),
    st.tuples(st.just("lead"), st.just("delivered"), _MSG, st.tuples(_WHO, _AT)),
    st.tuples(st.sampled_from(["lead", *MEMBERS]), st.just("prompt"), _MSG, _AT),
    st.tuples(st.sampled_from(["lead", *MEMBERS]), st.just("seed"), st.none(), _AT),
    st.tuples(
        st.sampled_from(["lead", *MEMBERS]),
        st.just("injected"),
        st.sampled_from(["time-context", "schedule"]),
        _AT,
    ),
    st.tuples(st.just("lead"), st.just("member"), st.sampled_from(MEMBERS), st.none()),
    st.tuples(st.just("lead"), st.just("foreign task"), st.just("task-3"), _AT),
    st.tuples(
        st.sampled_from(["lead", *MEMBERS]), st.just("update call"), _TASK, st.integers(0, 3)
    ),
    st.tuples(st.sampled_from(["lead", *MEMBERS]), st.just("create call"), _TASK, st.none()),
    st.tuples(
        st.just("lead"),
        st.just("task"),
        _TASK,
        st.tuples(
            st.integers(1, 4),
            st.sampled_from(["pending", "in_progress", "completed"]),
            st.sampled_from([None, *MEMBERS]),
            _AT,
        ),
    ),
)


def _apply(log: Log, op: tuple[Any, ...], n: int) -> None:
    _lane, what, a, b = op
    if what == "start":
        log.add("turn/start", {"turn": a}, b)
    elif what == "end":
        log.add("turn/end", {"turn": a, "reason": {"kind": "completed"}}, b)
    elif what == "usage":
        data = {"turn": a, "step": f"s{n}", "chunk": {"type": "usage", "usage": b}}
        log.add("assistant/chunk", data, n)
    elif what == "queued":
        sender, target, at = b
        log.queued(a, sender, target, f"body {n}", at)
    elif what == "delivered":
        target, at = b
        log.delivered(a, target, at)
    elif what == "prompt":
        log.prompt(f"prompt {n}", b, id_=f"p-{a}")
    elif what == "injected":
        log.prompt(f"runtime {n}", b, kind=a)
    elif what == "seed":
        log.add("session/end-seed", {"inherited": False}, b)
    elif what == "task":
        revision, status, owner, at = b
        log.task(a, revision, status, at, owner)
    elif what == "update call":
        log.update_call(a, b, "claim", n)
    elif what == "create call":
        log.create_call(f"subject of {a}", n)
    elif what == "foreign task":  # another team's, in the lead's log: counted only
        task = {"id": a, "revision": 1, "subject": "s", "status": "pending"}
        log.add("team/task", {"version": 2, "teamId": "other-team", "task": task}, b)
    else:
        log.member(a, f"name of {a}", n)


def _versions(ops: list[tuple[Any, ...]], splits: list[int]) -> list[dict[str, LaneFold]]:
    """The team's folds after each batch of appends (each folded onto the last)."""
    logs = {name: Log() for name in ("lead", *MEMBERS)}
    folds: dict[str, LaneFold] = {name: fold_lane([]) for name in logs}
    out = []
    done = 0
    for at in sorted({min(s, len(ops)) for s in splits} | {len(ops)}):
        for n, op in enumerate(ops[done:at], start=done):
            _apply(logs[op[0]], op, n)
        for name, log in logs.items():
            folds[name] = fold_lane(log.events, start=folds[name])
            log.events.clear()
        done = at
        out.append(dict(folds))
    return out


def _snapshot(folds: dict[str, LaneFold]) -> Any:
    lead = dataclasses.replace(source(LEAD), fold=folds["lead"])
    members = {m: dataclasses.replace(source(m), fold=folds[m]) for m in MEMBERS}
    live = [{"id": m, "name": f"live {m}"} for m in MEMBERS]
    return team(lead, members, live_members=live)


def _built(folds: dict[str, LaneFold]) -> tuple[str, Any]:
    snap = _snapshot(folds)
    model = Model(snap)
    seen = (dict(model.message_details), dataclasses.asdict(model.counts))
    return json.dumps(build_timeline(snap)), json.dumps(seen, sort_keys=True)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_OP, max_size=40),
    st.lists(st.integers(0, 40), min_size=1, max_size=8),
)
def test_a_timeline_built_on_after_appends_is_the_one_built_from_scratch(
    ops: list[tuple[Any, ...]], splits: list[int]
) -> None:
    versions = _versions(ops, splits)
    clear_memos()
    warm = [_built(folds) for folds in versions]
    cold = []
    for folds in versions:
        clear_memos()
        cold.append(_built(folds))
    clear_memos()
    assert warm == cold


def test_a_lanes_unchanged_turns_keep_their_very_span_objects() -> None:
    """The wire reuses the bytes of a span it sent before by identity: after an append
    the turns that did not change are drawn as the very same dicts."""
    from dsh_task_gantt.fold.turns import TurnPairing, TurnSpan
    from dsh_task_gantt.timeline import spans

    clear_memos()
    party = {"kind": "lead", "id": "lead", "name": "lead"}
    done = [TurnSpan(f"t{n}", 10 * n, n, 10 * n + 5, "ended") for n in range(5)]
    first = TurnPairing((*done, TurnSpan("live", 60, 6, None, None)), 0, 0, 0, 0, 0)
    second = TurnPairing((*done, TurnSpan("live", 60, 6, 65, "ended")), 0, 0, 0, 0, 0)
    before = spans.turn_spans(first, party, "s", {"t1": ((1, 0, 0, 1, 0), 1, 0)})
    after = spans.turn_spans(second, party, "s", {"t1": ((1, 0, 0, 1, 0), 1, 0)})
    assert all(a is b for a, b in zip(before[:5], after[:5], strict=True))
    assert before[5] is not after[5] and after[5]["end"] == 65
    clear_memos()
    assert spans.turn_spans(second, party, "s", {"t1": ((1, 0, 0, 1, 0), 1, 0)}) == after


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.sampled_from(["turn", "message", "user-prompt"])),
        max_size=30,
        unique=True,
    ),
    st.lists(st.booleans(), min_size=30, max_size=30),
    st.lists(st.tuples(st.integers(0, 9), st.sampled_from(["turn", "message"])), max_size=10),
)
def test_a_lanes_spans_resorted_after_a_change_are_its_spans_sorted(
    first: list[tuple[int, str]], keep: list[bool], more: list[tuple[int, str]]
) -> None:
    from dsh_task_gantt.timeline import spans
    from dsh_task_gantt.timeline.roster import Lane

    clear_memos()
    made = [{"time": t, "kind": k, "id": f"{k}-{n}"} for n, (t, k) in enumerate(first)]
    lane = Lane("lead", "lead", "lead", "s", 0, None, parts=[list(made)])
    assert spans.sorted_spans(lane) == sorted(made, key=spans._span_order)
    kept = [span for span, k in zip(made, keep, strict=False) if k]
    new = [{"time": t, "kind": k, "id": f"new-{n}"} for n, (t, k) in enumerate(more)]
    lane2 = Lane("lead", "lead", "lead", "s", 0, None, parts=[[*new[:2], *kept, *new[2:]]])
    assert spans.sorted_spans(lane2) == sorted(lane2.spans, key=spans._span_order)
    clear_memos()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2)), max_size=30),
    st.lists(st.integers(0, 4), min_size=3, max_size=3),
    st.lists(st.tuples(st.integers(0, 9), st.booleans()), max_size=8),
    st.lists(st.integers(0, 30), max_size=4),
)
def test_a_lane_made_of_parts_is_resorted_part_by_part_as_sorting_it_whole(
    first: list[tuple[int, int]],
    how: list[int],
    more: list[tuple[int, bool]],
    dropped: list[int],
) -> None:
    """A lane is its turns, its prompts and its messages, each added whole, then spans
    one by one: after a build where each part is the very same sequence again, a new
    one, or one with spans dropped and added, its spans resorted are its spans sorted
    (a part that is the same object is not compared)."""
    from dsh_task_gantt.timeline import spans
    from dsh_task_gantt.timeline.roster import Lane

    kinds = ("turn", "user-prompt", "message")
    made = [{"time": t, "kind": kinds[k], "id": f"{k}-{n}"} for n, (t, k) in enumerate(first)]
    parts = [[s for s in made if s["kind"] == kind] for kind in kinds]
    singles = [{"time": t, "kind": "message", "id": f"one-{n}"} for n, (t, _) in enumerate(more)]

    def build(parts: list[list[dict[str, Any]]], singles: list[dict[str, Any]]) -> Lane:
        lane = Lane("lead", "lead", "lead", "s", 0, None)
        lane.add_turns(parts[0])
        lane.add_unique(parts[1], frozenset((s["kind"], s["id"]) for s in parts[1]))
        lane.add_unique(parts[2], frozenset((s["kind"], s["id"]) for s in parts[2]))
        for span in singles:
            lane.add(span)
        return lane

    clear_memos()
    try:
        lane = build(parts, singles)
        assert spans.sorted_spans(lane) == sorted(lane.spans, key=spans._span_order)
        after = []
        for n, (part, change) in enumerate(zip(parts, how, strict=True)):
            if change == 0:
                after.append(part)  # the very same sequence
            elif change == 1:
                after.append(list(part))  # an equal one, another object
            elif change == 4:  # as long, its first span another (a delivery, say)
                fresh = [{**s, "id": f"re-{s['id']}"} for s in part[:1]]
                after.append(fresh + part[1:])
            else:
                kept = [s for i, s in enumerate(part) if i not in dropped]
                added = [
                    {"time": t, "kind": kinds[n], "id": f"new-{n}-{i}"}
                    for i, (t, _) in enumerate(more)
                ]
                after.append(kept + added if change == 2 else added + kept)
        later = [s for s, keep in zip(singles, more, strict=True) if keep[1]]
        lane2 = build(after, later)
        assert spans.sorted_spans(lane2) == sorted(lane2.spans, key=spans._span_order)
    finally:
        clear_memos()


_TURN_SPAN_ST = st.tuples(
    st.sampled_from([f"t{n}" for n in range(8)]),
    st.integers(0, 9),
    st.one_of(st.none(), st.integers(0, 20)),
    st.sampled_from([None, "ended", "error"]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_TURN_SPAN_ST, max_size=10, unique_by=lambda t: t[0]),
            st.dictionaries(st.sampled_from([f"t{n}" for n in range(8)]), st.integers(0, 3)),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_lanes_turn_spans_drawn_on_are_the_ones_drawn_from_scratch(
    versions: list[tuple[list[tuple[Any, ...]], dict[str, int]]],
) -> None:
    from dsh_task_gantt.fold.turns import TurnPairing, TurnSpan
    from dsh_task_gantt.timeline import spans

    party = {"kind": "teammate", "id": "m1", "name": "ann"}
    clear_memos()
    warm = []
    pairings = []
    for marks, used in versions:
        turns = sorted(
            (TurnSpan(t, time, n, end, reason) for n, (t, time, end, reason) in enumerate(marks)),
            key=lambda s: (s.time, s.seq, s.turn_id),
        )
        pairing = TurnPairing(tuple(turns), 0, 0, 0, 0, 0)
        by_turn = {t: ((n, 0, 0, n, 0), n, 0) for t, n in used.items()}
        pairings.append((pairing, by_turn))
        warm.append(spans.turn_spans(pairing, party, "s1", by_turn))
    for (pairing, by_turn), got in zip(pairings, warm, strict=True):
        clear_memos()
        assert got == spans.turn_spans(pairing, party, "s1", by_turn)
    clear_memos()


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 90),
    st.lists(
        st.tuples(
            st.integers(0, 4),  # turns added
            st.lists(st.integers(0, 120), max_size=4),  # turns whose totals change
            st.booleans(),  # the last turn ends (a new object at its place)
            st.booleans(),  # the count says which turns changed (``since``)
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_turn_spans_drawn_on_from_the_turns_a_count_changed_are_the_ones_from_scratch(
    first: int, appends: list[tuple[int, list[int], bool, bool]]
) -> None:
    """A count carried on says which turns' totals it changed (``LaneTokens.since``):
    the spans drawn on by looking only those up (near the newest turn, else all of
    them) are the ones drawn from scratch, on lanes shorter and longer than the window
    looked in."""
    from dsh_task_gantt.fold.turns import TurnPairing, TurnSpan
    from dsh_task_gantt.timeline import spans
    from dsh_task_gantt.timeline.tokens import TurnTotals

    party = {"kind": "teammate", "id": "m1", "name": "ann"}
    turns = [TurnSpan(f"t{n}", n * 10, n, n * 10 + 5, "ended") for n in range(first)]
    by_turn = TurnTotals({t.turn_id: ((1, 0, 0, 1, 0), 1, 0) for t in turns[::2]})
    clear_memos()
    versions = []
    since = None
    for added, changes, ends, says in appends:
        n0 = len(turns)
        turns += [TurnSpan(f"t{n}", n * 10, n, None, None) for n in range(n0, n0 + added)]
        if ends and turns:
            last = turns[-1]
            turns[-1] = TurnSpan(last.turn_id, last.time, last.seq, last.time + 5, "ended")
        old = by_turn
        by_turn = TurnTotals(old)
        touched = set()
        for i in changes:
            if i < len(turns):
                turn_id = turns[i].turn_id
                held = by_turn.get(turn_id, ((0, 0, 0, 0, 0), 0, 0))
                by_turn[turn_id] = ((held[0][0] + 1, 0, 0, 1, 0), held[1] + 1, 0)
                touched.add(turn_id)
        since = (weakref.ref(old), frozenset(touched)) if says else None
        pairing = TurnPairing(tuple(turns), 0, 0, 0, 0, 0)
        versions.append((pairing, by_turn, spans.turn_spans(pairing, party, "s1", by_turn, since)))
    for pairing, counted, drawn in versions:
        clear_memos()
        assert drawn == spans.turn_spans(pairing, party, "s1", counted)
    clear_memos()


def test_forgetting_a_teams_sessions_drops_what_building_on_kept_for_it() -> None:
    """The states kept to build on after an append name their lane's session: a team
    the service forgets leaves none of them behind."""
    from dsh_task_gantt.fold import turns
    from dsh_task_gantt.memo import forget_owners
    from dsh_task_gantt.timeline import messages, spans, tokens

    ops: list[tuple[Any, ...]] = [
        ("lead", "start", "t1", 1),
        ("lead", "usage", "t1", {"inputTokens": 1, "outputTokens": 2}),
        ("lead", "queued", "msg-1", (LEAD, "m1", 2)),
        ("m1", "start", "t1", 3),
        ("lead", "prompt", "msg-2", 4),
        ("lead", "delivered", "msg-1", ("m1", 5)),
        ("lead", "queued", "msg-3", ("m1", LEAD, 6)),
    ]
    clear_memos()
    for folds in _versions(ops, [2, 4, 6]):
        _built(folds)
    kept = [
        turns._RESUMABLE,
        tokens._COUNTED,
        spans._LAST_TURNS,
        spans._PROMPT_SPAN,
        messages._MESSAGE_IDS,
        messages._LAST_DRAWN,
    ]
    assert all(len(m) for m in kept)
    forget_owners([LEAD, *MEMBERS])
    assert [len(m) for m in kept] == [0] * len(kept)
    clear_memos()


def test_a_team_keeps_the_message_ids_of_its_last_two_pairings_only() -> None:
    """Each append of a message makes a new pairing of the team's messages; the ids
    kept to patch the next one are the last two pairings', not one per append (each
    of those held every message of its version)."""
    from dsh_task_gantt.timeline import messages

    ops: list[tuple[Any, ...]] = []
    for n in range(12):
        ops.append(("lead", "queued", f"msg-{n:02d}", (LEAD, "m1", 2 * n)))
        ops.append(("lead", "delivered", f"msg-{n:02d}", ("m1", 2 * n + 1)))
    clear_memos()
    try:
        for folds in _versions(ops, list(range(2, len(ops), 2))):
            _built(folds)
        assert 1 <= len(messages._MESSAGE_IDS) <= 2
    finally:
        clear_memos()


_SUMMARY_SPAN = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["turn", "message", "user-prompt"]),
        "time": st.one_of(st.none(), st.integers(0, 20)),
        "end": st.one_of(st.none(), st.integers(0, 20)),
    }
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_SUMMARY_SPAN, max_size=12),
    st.lists(
        st.tuples(
            st.lists(st.booleans(), min_size=12, max_size=12),
            st.lists(_SUMMARY_SPAN, max_size=4),
            st.integers(0, 12),
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_a_lanes_summary_read_on_after_a_change_is_the_one_read_from_scratch(
    first: list[dict[str, Any]],
    changes: list[tuple[list[bool], list[dict[str, Any]], int]],
) -> None:
    """The "now" and "where the time went" of a lane whose list lost and gained spans
    (the others the very same dicts) are its whole list's."""
    from dsh_task_gantt.timeline.activity import span_summary

    clear_memos()
    versions = [first]
    for keep, new, at in changes:
        kept = [s for s, k in zip(versions[-1], keep, strict=False) if k]
        kept += versions[-1][len(keep) :]
        versions.append([*kept[:at], *(dict(s) for s in new), *kept[at:]])
    warm = [span_summary(list(spans), ("m1", "s1")) for spans in versions]
    cold = []
    for spans in versions:
        clear_memos()
        cold.append(span_summary(list(spans)))
    clear_memos()
    assert warm == cold


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 30),
    st.lists(st.booleans(), max_size=30),
    st.lists(st.integers(0, 30), max_size=5),
)
def test_what_changed_between_two_versions_of_a_list_is_found_by_identity(
    size: int, keep: list[bool], inserts: list[int]
) -> None:
    from dsh_task_gantt.timeline.identity import identity_changes

    was = [{"n": n} for n in range(size)]
    now = [item for item, k in zip(was, keep, strict=False) if k] + was[len(keep) :]
    for n, at in enumerate(inserts):
        now.insert(min(at, len(now)), {"n": n})  # equal to an old one, but new
    found = identity_changes(was, now)
    assert found is not None
    gone, came = found
    assert [id(x) for x in gone] == [id(x) for x in was if all(x is not y for y in now)]
    assert [id(x) for x in came] == [id(x) for x in now if all(x is not y for y in was)]


_CALL = st.tuples(
    st.sampled_from(["s-a", "s-b", "s-c"]),
    st.sampled_from(["update", "create"]),
    st.sampled_from(["task-1", "task-2", None]),
    st.one_of(st.none(), st.integers(0, 2)),
    st.sampled_from(["subject 1", "subject 2", None]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_CALL, max_size=20), st.integers(0, 20))
def test_a_call_index_with_an_appends_calls_is_the_one_built_from_all(
    made: list[tuple[Any, ...]], old: int
) -> None:
    """Task calls appended to the lanes' logs go into the index where building it from
    every call puts them (each session's calls by seq)."""
    from dsh_task_gantt.fold.records import TaskCallRec
    from dsh_task_gantt.fold.tasks import CallIndex

    calls = [
        (session, n, TaskCallRec(tool, task_id, revision, subject, None, n))
        for n, (session, tool, task_id, revision, subject) in enumerate(made)
    ]
    before, after = calls[:old], calls[old:]
    assert CallIndex.build(before).with_calls(after) == CallIndex.build(calls)
