"""fold_lane: order-free, splittable, total on hostile input, compact."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_task_gantt.events import EventRun, LogEvent, UsageColumns, event_count
from dsh_task_gantt.fold import (
    EMPTY_FOLD,
    RUN_MARKS,
    LaneFold,
    fold_lane,
    last_event_time,
    seqs_below,
)
from dsh_task_gantt.timeline import build_timeline
from tests.kit.foldkit import LEAD, T0, Log, source, team

TYPES = [
    "turn/start",
    "turn/end",
    "step/start",
    "step/end",
    "user/message",
    "tool/call",
    "team/member",
    "team/task",
    "team/message/queued",
    "team/message/delivered",
    "subagent/catalog",
    "subagent/descriptor",
    "agent/inbox/spliced",
    "session/end-seed",
    "assistant/message",
    "assistant/chunk",
    "tool/result",
    "x/unknown",
]

A, B = "m-a", "m-b"


def _team_log() -> Log:
    """A lead log exercising every folded type."""
    log = Log()
    log.prompt("hi", 1, "p1").turn("t1", 2, 90).member(A, "alpha", 3).catalog(B, 1, 4)
    log.member(B, "beta", 5).task("task-1", 1, at=6).create_call("subject of task-1", 5)
    log.task("task-1", 2, "in_progress", at=8, owner=A).queued("q1", A, B, "hello", at=9)
    log.delivered("q1", B, 10).queued("q2", LEAD, "ghost", "x", at=11).delivered("q3", A, 12)
    log.step(1, 1, 13, closed=False).bulk(20).bulk(None, "tool/result")
    log.prompt("tick", 14, "i1", kind="time-context").add("weird/type", {"a": 1}, 15)
    # Shapes of older writers and of subagent families: a turn end without a turn id,
    # a reload marker after an open turn, an inbox splice of a prompt logged again, a
    # summary, relays, a descriptor, version 1 records and another team's records.
    log.turn("t2", 30).add("turn/end", {"reason": {"kind": "completed"}}, 31)
    log.turn("t3", 40).add("session/end-seed", {}, 41)
    log.splice("again", "p2", 42).prompt("again", 43, "p2").summary("so far", "s1", 44)
    log.relay("subagent-report", A, "r1", "done", 45).relay("subagent-settled", B, "r2", "ok", 46)
    log.add("subagent/descriptor", {"label": "lead work", "inheritedEventCount": 0}, 47)
    log.add(
        "team/message/queued",
        {"version": 1, "teamId": LEAD, "message": {"id": "q4", "senderId": A, "targetId": B,
         "content": "v1", "delivery": "quiet"}},
        48,
    )  # fmt: skip
    log.add("team/member", {"version": 2, "teamId": "other", "member": {"id": "m-x"}}, 49)
    log.spawn_call("alpha", "Collect the data.", 50)
    # Token use: one step's usage chunk and its message's usage (counted once).
    usage = {"inputTokens": 5, "outputTokens": 7, "cacheReadTokens": 90}
    log.add(
        "assistant/chunk", {"turn": "t3", "step": 1, "chunk": {"type": "usage", "usage": usage}}, 49
    )
    log.add("assistant/message", {"turn": "t3", "step": 1, "usage": usage, "message": {}}, 49)
    # A step with only its message's usage, from a writer that names the model.
    source = {"provider": "deepseek", "model": "deepseek-chat"}
    log.add(
        "assistant/message",
        {"turn": "t3", "step": 2, "usage": usage, "message": {"source": source}},
        49,
    )
    return log


def _events() -> list[LogEvent]:
    return _team_log().events


@settings(max_examples=100, deadline=None)
@given(st.permutations(_events()))
def test_any_order_of_events_gives_the_same_fold_and_timeline(perm: list[LogEvent]) -> None:
    events = _events()
    assert fold_lane(perm) == fold_lane(events)
    members = {A: source(A), B: source(B)}
    a = build_timeline(team(source(LEAD, events), members))
    b = build_timeline(team(source(LEAD, perm), members))
    assert orjson.dumps(a) == orjson.dumps(b)


@settings(max_examples=100, deadline=None)
@given(st.permutations(_events()), st.integers(min_value=0, max_value=len(_events())))
def test_folding_in_two_batches_equals_one(perm: list[LogEvent], cut: int) -> None:
    first = fold_lane(perm[:cut])
    snapshot = repr(first)
    assert fold_lane(perm[cut:], start=first) == fold_lane(perm)
    assert repr(first) == snapshot  # start is not mutated


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.binary(max_size=8),
)
_junk = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "turn",
                    "step",
                    "id",
                    "member",
                    "task",
                    "message",
                    "messageId",
                    "targetId",
                    "senderId",
                    "name",
                    "arguments",
                    "source",
                    "kind",
                    "content",
                    "type",
                    "text",
                    "revision",
                    "status",
                    "ownerId",
                    "childId",
                    "inherited",
                    "reason",
                    "phase",
                    "blockedBy",
                    "writeScopes",
                    "subject",
                    "inserted",
                    "senderSessionId",
                    "inheritedEventCount",
                    "label",
                    "teamId",
                    "summary",
                ]
            )
            | st.text(max_size=5),
            inner,
            max_size=6,
        ),
    ),
    max_leaves=20,
)


@st.composite
def _hostile_event(draw: st.DrawFn) -> object:
    choice = draw(st.integers(0, 5))
    if choice == 0:  # not even a LogEvent
        return draw(_junk)
    return LogEvent(
        type=draw(st.sampled_from(TYPES) | st.text(max_size=8)) if choice != 1 else 7,  # type: ignore[arg-type]
        seq=draw(st.integers(-5, 50) | st.just(2**80)) if choice != 2 else "x",  # type: ignore[arg-type]
        time=draw(st.none() | st.integers(-(2**70), 2**70) | st.floats()),  # type: ignore[arg-type]
        data=draw(_junk),
        position=draw(st.integers(0, 50)),
        surface_op=draw(st.none() | st.just({"op": "replace"}) | _junk),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_hostile_event(), max_size=30), st.lists(_hostile_event(), max_size=10))
def test_hostile_events_never_raise_and_give_json(lead: list[object], member: list[object]) -> None:
    fold = fold_lane(lead)  # type: ignore[arg-type]
    assert fold.events_seen == len(lead)
    mfold = fold_lane(member, start=fold_lane(lead[:3]))  # type: ignore[arg-type]
    assert mfold.events_seen == len(member) + min(3, len(lead))
    snap = team(
        source(LEAD, lead),
        {A: source(A, member, status="idle")},  # type: ignore[arg-type]
        live_members=[{"id": A, "name": 5}, "junk"],  # type: ignore[list-item]
        live_tasks=[{"id": "t", "revision": 2**80, "blockedBy": [1, None]}, 3],
    )  # type: ignore[list-item]
    out = build_timeline(snap)
    orjson.dumps(out)
    for lane_json in out["lanes"]:
        times = [s["time"] for s in lane_json["spans"]]
        assert times == sorted(times)
        assert all(s["end"] is None or s["end"] >= s["time"] for s in lane_json["spans"])
        assert all(
            len(s["preview"]) <= 140 and "\n" not in s["preview"] for s in lane_json["spans"]
        )


def test_surrogates_and_huge_numbers_stay_serialisable() -> None:
    log = (
        Log()
        .prompt("bad \ud800 text", 1, "p\udfff")
        .add("team/task", {"task": {"id": "t\ud800", "revision": 10**30, "status": "pending"}}, 2)
    )
    out = build_timeline(team(source(LEAD, log)))
    orjson.dumps(out)
    assert out["lanes"][0]["spans"][0]["preview"] == "bad \ufffd text"


def _copy(value: str) -> str:
    """``value`` as a new string object, as each parsed event line gives it."""
    return orjson.loads(orjson.dumps(value))  # type: ignore[no-any-return]


def test_an_id_read_from_many_events_is_held_once() -> None:
    """Each event is parsed into new strings; a turn's id (its start, its end, each
    step's usage) and a reason are kept as one object, not a copy per event: after
    hours of appends those copies were much of the server's growth."""
    ids = [_copy("turn-7") for _ in range(4)]
    assert ids[0] is not ids[1]
    counts = {"inputTokens": 5, "outputTokens": 2}
    usage = {"turn": ids[2], "step": _copy("s1"), "chunk": {"type": "usage", "usage": counts}}
    log = (
        Log()
        .add("turn/start", {"turn": ids[0]}, 1)
        .add("assistant/chunk", usage, 2)
        .add("turn/end", {"turn": ids[1], "reason": {"kind": _copy("completed")}}, 3)
        .add("turn/start", {"turn": ids[3]}, 4)
        .add("turn/end", {"turn": _copy("turn-8"), "reason": {"kind": _copy("completed")}}, 5)
    )
    fold = log.fold()
    starts, ends = list(fold.turn_starts.values()), list(fold.turn_ends.values())
    (usage_rec,) = fold.usage_chunks.values()
    assert starts[0].turn_id == "turn-7"
    assert starts[0].turn_id is ends[0].turn_id is starts[1].turn_id is usage_rec.turn_id
    assert ends[0].reason == "completed" and ends[0].reason is ends[1].reason


def test_a_usage_batch_names_its_turns_with_the_turns_own_ids() -> None:
    """A reader's batch of usage chunks (DSH's integer turn ids, spelled as strings by
    the fold) names each turn with the very object the turn's start holds."""
    start = Log().add("turn/start", {"turn": 4_000_001}, 1).fold()
    usage = UsageColumns((5,), (0,), (0,), (2,), (0,))
    batch = ("assistant/chunk", (7,), (T0 + 7,), (4_000_001,), (1,), usage, None)
    run = EventRun(1, (7,), T0 + 7, (), (batch,))
    fold = fold_lane([run], start=start)
    (turn,) = fold.turn_starts.values()
    (rec,) = fold.usage_chunks.values()
    assert rec.turn_id == turn.turn_id == "4000001" and rec.turn_id is turn.turn_id


def test_bulk_events_count_for_time_and_seq_only() -> None:
    log = Log().bulk(5).bulk(None, "tool/result").bulk(9, "request/context")
    fold = log.fold()
    assert fold.events_seen == 3
    assert last_event_time(fold) == log.events[2].time
    assert fold.unknown_events == 0
    assert fold.seq_ranges == ((0, 2),)
    assert fold.turn_starts == {} and fold.prompts == {}


def test_unknown_types_are_counted_not_folded() -> None:
    fold = Log().add("brand/new", {"turn": 1}).add("turn/start", {"turn": 1}).fold()
    assert fold.unknown_events == 1
    assert len(fold.turn_starts) == 1


def test_only_task_tools_are_kept_and_arguments_are_parsed_defensively() -> None:
    log = Log().update_call("task-1", 3, "complete").create_call("make it")
    log.add("tool/call", {"name": "team_task_update", "arguments": "{not json"})
    log.add(
        "tool/call",
        {"name": "team_task_update", "arguments": {"task_id": 5, "expected_revision": 2}},
    )
    log.add("tool/call", {"name": "read_file", "arguments": "{}"})
    calls = sorted(log.fold().task_calls.items())
    assert [(c.tool, c.task_id, c.expected_revision, c.subject) for _, c in calls] == [
        ("update", "task-1", 3, None),
        ("create", None, None, "make it"),
        ("update", None, None, None),
        ("update", "5", 2, None),
    ]


def test_seq_ranges_count_inherited_events() -> None:
    log = Log()
    for i in range(10):
        log.bulk(i)
    log.add("x", None, 20, seq=15)
    fold = log.fold()
    assert fold.seq_ranges == ((0, 9), (15, 15))
    assert seqs_below(fold, 5) == 5
    assert seqs_below(fold, 16) == 11
    assert seqs_below(EMPTY_FOLD, 5) == 0


def test_last_inherited_end_seed_is_kept() -> None:
    log = Log().add("session/end-seed", {"inherited": True}, seq=4)
    log.add("session/end-seed", {"inherited": True}, seq=9).add("session/end-seed", {}, seq=12)
    assert log.fold().seed_end_seq == 9


def test_message_bodies_are_capped_but_remember_their_length() -> None:
    body = "x" * 20_000
    fold = Log().queued("m", A, B, body).fold()
    (rec,) = fold.queued.values()
    assert len(rec.body) == 16_384 and rec.length == 20_000


def test_same_seq_twice_keeps_one_record_whatever_the_order() -> None:
    one = LogEvent("turn/start", 3, 10, {"turn": "a"}, 3)
    two = LogEvent("turn/start", 3, 11, {"turn": "b"}, 3)
    assert fold_lane([one, two]) == fold_lane([two, one])
    assert len(fold_lane([one, two]).turn_starts) == 1


# -- EventRun: many seq/time-only events in one item (a reader's runs mode) ------------

_RUN_TYPES = ["step/start", "step/end", "assistant/message", "tool/result", "tool/call"]


def _run_of(events: list[LogEvent]) -> EventRun:
    """The run a reader makes of these data-less events."""
    marks = tuple(
        (t, max(e.seq for e in events if e.type == t))
        for t in RUN_MARKS
        if any(e.type == t for e in events)
    )
    times = [e.time for e in events if e.time is not None]
    return EventRun(len(events), tuple(e.seq for e in events), max(times, default=None), marks)


@st.composite
def _runs_and_events(draw: st.DrawFn) -> tuple[list[LogEvent | EventRun], list[LogEvent]]:
    """The team log's events plus data-less ones, some of them grouped into runs; and
    the same events one by one."""
    bulk = [
        LogEvent(draw(st.sampled_from(_RUN_TYPES)), seq, T0 + draw(st.integers(0, 99)), None, 0)
        for seq in draw(st.lists(st.integers(0, 60), max_size=25))
    ]
    cuts = sorted(draw(st.sets(st.integers(0, len(bulk)), max_size=4)))
    groups = [bulk[a:b] for a, b in zip([0, *cuts], [*cuts, len(bulk)], strict=True)]
    items: list[LogEvent | EventRun] = list(_events())
    for group in groups:
        items.extend([_run_of(group)] if draw(st.booleans()) and group else group)
    return items, [*_events(), *bulk]


@settings(max_examples=100, deadline=None)
@given(_runs_and_events(), st.data())
def test_runs_fold_like_their_events_in_any_order_and_split(
    drawn: tuple[list[LogEvent | EventRun], list[LogEvent]], data: st.DataObject
) -> None:
    items, one_by_one = drawn
    perm = data.draw(st.permutations(items))
    cut = data.draw(st.integers(0, len(items)))
    whole = fold_lane(items)
    assert whole == fold_lane(one_by_one)
    assert fold_lane(perm) == whole
    first = fold_lane(perm[:cut])
    assert fold_lane(perm[cut:], start=first) == whole
    assert whole.events_seen == event_count(items) == len(one_by_one)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_RUN_TYPES), st.integers(0, 10**6), st.integers(0, 10**4)),
        max_size=40,
    )
)
def test_a_run_folds_to_what_its_events_fold_to(rows: list[tuple[str, int, int]]) -> None:
    events = [LogEvent(t, seq, T0 + at, None, i) for i, (t, seq, at) in enumerate(rows)]
    assert fold_lane([_run_of(events)]) == fold_lane(events)
    # seq_ranges: the distinct seqs, as sorted disjoint ranges
    covered = {s for lo, hi in fold_lane([_run_of(events)]).seq_ranges for s in range(lo, hi + 1)}
    assert covered == {e.seq for e in events}


_COUNT = st.one_of(
    st.integers(0, 2**53 + 5),
    st.sampled_from([-1, True, False, None, 1.5, "7", [3], {"n": 1}, 2**70]),
)
_USAGE = st.one_of(
    st.dictionaries(
        st.sampled_from(["inputTokens", "cacheReadTokens", "outputTokens", "reasoningTokens"]),
        _COUNT,
        max_size=4,
    ),
    st.sampled_from([None, [1], "x"]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), st.integers(0, 2), st.integers(0, 3), _USAGE),
        max_size=12,
        unique_by=lambda row: row[0],
    )
)
def test_a_runs_usage_chunks_fold_like_their_events(
    rows: list[tuple[int, int, int, object]],
) -> None:
    """A chunk batch (what a reader makes of DSH's usage chunks) folds to what its events
    fold to, hostile values, repeated steps and all."""
    events = [
        LogEvent("assistant/chunk", seq, T0 + seq, {"turn": turn, "step": step,
                 "chunk": {"type": "usage", "usage": usage}}, i)
        for i, (seq, turn, step, usage) in enumerate(rows)
    ]  # fmt: skip
    seqs = tuple(r[0] for r in rows)
    turns, steps, usages = (tuple(r[k] for r in rows) for k in (1, 2, 3))
    batch = ("assistant/chunk", seqs, tuple(T0 + s for s in seqs), turns, steps, usages, None)
    run = EventRun(len(rows), seqs, max((T0 + s for s in seqs), default=None), (), (batch,))
    assert fold_lane([run]) == fold_lane(events)


#: Usage as DSH writes it (absent, or safe integers): a batch of these folds in bulk.
_PLAIN_USAGE = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["inputTokens", "outputTokens"]), st.integers(0, 10**6)),
)


def _message_rows(usage: st.SearchStrategy[object]) -> st.SearchStrategy[list[Any]]:
    return st.lists(
        st.tuples(
            st.integers(0, 60),
            st.integers(0, 2),
            st.integers(0, 3),
            usage,
            st.sampled_from([None, {"provider": "p", "model": "m"}, {"model": 7}]),
        ),
        max_size=12,
        unique_by=lambda row: row[0],
    )


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(_message_rows(_PLAIN_USAGE), _message_rows(_USAGE)),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), max_size=4),
)
def test_a_runs_messages_fold_like_their_events(
    rows: list[tuple[int, int, int, object, object]], chunked: list[tuple[int, int]]
) -> None:
    """A message batch folds to what its events fold to: without usage, with odd values,
    naming a model or not, and passed over where a chunk counts the step."""
    chunks = [
        LogEvent("assistant/chunk", 1000 + i, T0, {"turn": t, "step": s,
                 "chunk": {"type": "usage", "usage": {"inputTokens": 1}}}, i)
        for i, (t, s) in enumerate(chunked)
    ]  # fmt: skip
    events = [
        LogEvent("assistant/message", seq, T0 + seq, {"turn": turn, "step": step,
                 "usage": usage, "message": {"source": source}}, i)
        for i, (seq, turn, step, usage, source) in enumerate(rows)
    ]  # fmt: skip
    seqs = tuple(r[0] for r in rows)
    turns, steps, usages, sources = (tuple(r[k] for r in rows) for k in (1, 2, 3, 4))
    batch = ("assistant/message", seqs, tuple(T0 + s for s in seqs), turns, steps, usages, sources)
    run = EventRun(len(rows), seqs, max((T0 + s for s in seqs), default=None), (), (batch,))
    assert fold_lane([*chunks, run]) == fold_lane(chunks + events)


@pytest.mark.parametrize(
    "run",
    [
        EventRun(3, (1, 2), T0, ()),  # size is not the number of seqs
        EventRun(1, ("1",), T0, ()),  # type: ignore[arg-type]
        EventRun(1, (True,), T0, ()),
        EventRun(1, (2**60,), T0, ()),
        EventRun(1, (1,), -5, ()),
        EventRun(1, (1,), T0, (("step/start", "x"),)),  # type: ignore[arg-type]
        EventRun(1, (1,), T0, "junk"),  # type: ignore[arg-type]
        EventRun(None, None, None, None),  # type: ignore[arg-type]
    ],
)
def test_a_run_that_is_not_what_a_reader_makes_is_one_malformed_event(run: EventRun) -> None:
    fold = fold_lane([run, LogEvent("step/start", 7, T0, None, 0)])
    assert fold.malformed_events == 1 and fold.events_seen == 2
    assert fold.seq_ranges == ((7, 7),) and fold.step_marks == (7, -1)


def test_the_property_tests_log_holds_every_new_shape() -> None:
    """The permutation and split properties above cover the new event shapes."""
    fold = _team_log().fold()
    assert {r.kind for r in fold.relays.values()} == {"subagent-report", "subagent-settled"}
    assert [d.label for d in fold.descriptors.values()] == ["lead work"]
    assert len(fold.end_seeds) == 1 and "summary" in fold.injected.values()
    assert [p.id for p in fold.prompts.values()].count("p2") == 2  # splice + user/message
    assert any(m.turn_id is None for m in fold.turn_ends.values())
    assert {m.team_id for m in fold.members.values()} == {LEAD, "other"}


def test_every_field_of_a_fold_is_filled_by_the_event_type_registered_for_it() -> None:
    """A rule keeps its state in the fold's own field: a rule that wrote under a wrong
    name would only show as malformed events, and a field no rule fills as a default."""
    log = _team_log().add("session/end-seed", {"inherited": True}, 60)
    log.add("team/task", {"task": {"subject": "no id"}}, 61)  # the one malformed event
    fold = log.fold()
    assert fold.malformed_events == 1 and fold.unknown_events == 1
    assert fold.seed_end_seq == log.seq - 2 and fold.step_marks[0] >= 0
    unfilled = [
        f.name for f in fields(LaneFold) if getattr(fold, f.name) == getattr(EMPTY_FOLD, f.name)
    ]
    assert unfilled == []


def test_a_call_that_starts_a_child_keeps_its_brief() -> None:
    """spawn_teammate (by name) and a subagent tool (by description) keep their prompt;
    calls without a prompt, or a spawn without a name, keep nothing."""
    log = Log().spawn_call("alice", "Collect the data.", 1)
    log.add(
        "tool/call",
        {"name": "subagent_fork", "arguments": '{"description": "Count", "prompt": "Count."}'},
        2,
    )
    log.add("tool/call", {"name": "spawn_teammate", "arguments": '{"prompt": "no name"}'}, 3)
    log.add("tool/call", {"name": "bash", "arguments": '{"command": "ls"}'}, 4)
    log.add("tool/call", {"name": "subagent", "arguments": '{"prompt": 7}'}, 5)
    spawns = sorted(log.fold().spawns.items())
    assert [(s.tool, s.name, s.description, s.body, s.length) for _, s in spawns] == [
        ("spawn_teammate", "alice", "alice's work", "Collect the data.", 17),
        ("subagent_fork", None, "Count", "Count.", 6),
    ]
    assert [seq for seq, _ in spawns] == [0, 1]


def test_a_long_message_body_is_held_packed_and_reads_back_whole() -> None:
    """A day's messages are its biggest texts: a long body is held compressed (smaller
    than its UTF-8), and reads back as it was, non-ASCII and lone surrogates included;
    records compare by their bodies; a short body is held as it is."""
    import pickle

    from dsh_task_gantt.fold.records import PACKED_BODY_FROM, QueuedRec

    body = ("Halfway through “the folder”; notes so far — ünïcode, \ud800 and all.\n" * 40)[
        : PACKED_BODY_FROM * 4
    ]
    rec = QueuedRec("m1", "a", "A", "b", body, len(body), 20)
    assert isinstance(rec.packed_body, bytes)
    assert len(rec.packed_body) < len(body.encode("utf-8", "surrogatepass")) // 4
    assert rec.body == body
    assert rec == QueuedRec("m1", "a", "A", "b", body, len(body), 20)
    assert rec != QueuedRec("m1", "a", "A", "b", body[:-1] + "!", len(body), 20)
    assert pickle.loads(pickle.dumps(rec)).body == body
    short = QueuedRec("m2", "a", "A", "b", "ok", 2, 21)
    assert short.packed_body == "ok" and short.body == "ok"
