"""The team at a moment (board/moment.py): a pure function of the timeline and a time.

The oracle for "the board at T" is the real fold over only the log events up to T:
generated teams (real zstd logs in the real layout) are cut at T, folded and built into
a timeline, and that timeline's tasks and lanes as they stand must be what the moment
of the whole timeline says at T.
"""

from __future__ import annotations

import bisect
import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_task_gantt.board.moment import (
    STEP_TIMES,
    LaneAt,
    Moment,
    MomentCache,
    TaskAt,
    event_times,
    list_page_at,
    malformed_at,
    moment_at,
    step_from,
)
from dsh_task_gantt.events import LogEvent, SessionHeader
from dsh_task_gantt.fixturegen import TeamSpec, generate_team
from dsh_task_gantt.fold import fold_lane
from dsh_task_gantt.logs.persistence import LOG_NAMES
from dsh_task_gantt.logs.reader import LogReader
from dsh_task_gantt.timeline import LaneSource, TeamSnapshot, build_timeline
from tests.kit.boardteams import T0, TeamBuilder

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

Logs = dict[str, tuple[SessionHeader | None, list[LogEvent]]]


# ---------------------------------------------------------------------------
# generated teams, read and folded whole or cut at a moment


def _read(folder: Path) -> tuple[SessionHeader | None, list[LogEvent]]:
    """A session's log, whole, through the product's own reader."""
    path = next(folder / name for name in LOG_NAMES if (folder / name).is_file())
    reader = LogReader(path)
    events = [e for e in reader.read_new().events if isinstance(e, LogEvent)]
    return reader.header, events


def _team_logs(root: Path, lead_id: str) -> Logs:
    logs: Logs = {}
    for project in root.iterdir():
        for folder in project.iterdir():
            if folder.is_dir():
                logs[folder.name] = _read(folder)
    (project,) = {p for p in root.iterdir() if (p / lead_id).is_dir()}
    return {sid: logs[sid] for sid in (p.name for p in project.iterdir() if p.is_dir())}


def _timeline(logs: Logs, lead_id: str, until: int | None = None) -> dict[str, Any]:
    """The timeline the fold builds from the logs, or from each log only as it stood at
    ``until``: its lines up to the first one written later. A forked log is written
    with its seed (the parent's events, with their own old times) when it is created:
    before that it holds nothing, after it the whole seed."""

    def upto(header: SessionHeader | None, events: list[LogEvent]) -> list[LogEvent]:
        if until is None:
            return events
        created = header.created_at if header is not None else None
        if created is not None and created > until:
            return []
        seeded = header is not None and header.is_seeded
        seed_end = next((n for n, e in enumerate(events) if e.type == "session/end-seed"), -1)
        seed_end = seed_end if seeded else -1
        kept: list[LogEvent] = list(events[: seed_end + 1])
        for event in events[seed_end + 1 :]:
            if event.time is not None and event.time > until:
                break
            kept.append(event)
        return kept

    children = tuple(sid for sid, (h, _) in logs.items() if h and h.parent_session == lead_id)

    def source(sid: str) -> LaneSource:
        header, events = logs[sid]
        events = upto(header, events)
        return LaneSource(sid, "persisted", None, header, None, None, fold_lane(events))

    members = {sid: source(sid) for sid in logs if sid != lead_id}
    snapshot = TeamSnapshot(
        lead_id, lead_id, source(lead_id), members, None, None, (), 0, (), children
    )
    return build_timeline(snapshot)


@functools.lru_cache(maxsize=8)
def _generated(seed: int, shape: str) -> tuple[TeamSpec, str]:
    import tempfile

    root = Path(tempfile.mkdtemp(prefix=f"moment-{shape}-{seed}-"))
    spec = generate_team(root, seed=seed, shape=shape)
    return spec, str(root)


@functools.lru_cache(maxsize=8)
def _whole(seed: int, shape: str) -> tuple[Logs, dict[str, Any], str]:
    spec, root = _generated(seed, shape)
    logs = _team_logs(Path(root), spec.lead_id)
    return logs, _timeline(logs, spec.lead_id), spec.lead_id


def _lane_facts(lane: LaneAt) -> tuple[Any, ...]:
    # Names are left out: a member renamed later is drawn under its last name.
    return (
        lane.doing,
        lane.since,
        lane.sent.msg_id if lane.sent else None,
        lane.received.msg_id if lane.received else None,
    )


def _lane_key(lane: Mapping[str, Any]) -> str:
    """A lane by its session (lane ids are the lead's "lead" or a session)."""
    return str(lane.get("sessionId") or lane["id"])


def _by_lane(moment: Moment, timeline: Mapping[str, Any]) -> dict[str, tuple[Any, ...]]:
    keys = [_lane_key(lane) for lane in timeline["lanes"]]
    return {key: _lane_facts(lane) for key, lane in zip(keys, moment.lanes, strict=True)}


def _lane_now(lane: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a lane of a board is doing as it stands (read here, not by moment_at): in
    its open turn, else idle since its last turn ended; its last message sent, and its
    last one received that was delivered."""
    spans = lane["spans"]
    turns = [s for s in spans if s["kind"] == "turn"]
    open_turns = [s["time"] for s in turns if s["end"] is None]
    ends = [s["end"] for s in turns if s["end"] is not None]
    doing = ("turn", max(open_turns)) if open_turns else ("idle", max(ends, default=None))
    if not spans:
        doing = ("none", None)

    def last(of: list[dict[str, Any]]) -> str | None:
        return max(of, key=lambda span: (span["time"], span["id"]))["id"] if of else None

    marks = [s for s in spans if s["kind"] != "turn"]
    sent = [s for s in marks if s["direction"] == "outgoing"]
    received = [
        s
        for s in marks
        if s["direction"] != "outgoing" and ("deliveredAt" not in s or s["deliveredAt"])
    ]
    return (*doing, last(sent), last(received))


def _assert_moment_is_the_cut_board(seed: int, shape: str, at: int) -> None:
    logs, whole, lead_id = _whole(seed, shape)
    _assert_matches(whole, _timeline(logs, lead_id, until=at), at)


def _assert_matches(whole: Mapping[str, Any], cut: Mapping[str, Any], at: int) -> None:
    """The moment of the whole board at ``at`` is the cut board as it stands."""
    moment = moment_at(whole, at)
    # Tasks: those created by T are exactly the cut board's, each as it stands there.
    existing = {t.task_id: t for t in moment.tasks if t.exists}
    assert set(existing) == {task["id"] for task in cut["tasks"]}
    # People by session: a member renamed later is named by its last name on the whole
    # board and by the name it had then on the cut one.
    session_of = {lane["name"]: lane["sessionId"] for lane in whole["lanes"]}
    for task in cut["tasks"]:
        then = existing[task["id"]]
        last = task["history"][-1]
        assert (then.status, then.revision, session_of.get(then.owner or "")) == (
            task["status"],
            task["revision"],
            task["ownerId"],
        ), task["id"]
        assert (then.action, session_of.get(then.actor or ""), then.action_ms) == (
            last["action"],
            last["sessionId"],
            last["time"],
        ), task["id"]
    # Lanes: what each was doing, the same as the cut board's now; a member with no
    # lane on the cut board had done nothing yet.
    now_of_cut = {_lane_key(lane): _lane_now(lane) for lane in cut["lanes"]}
    for key, facts in _by_lane(moment, whole).items():
        if key in now_of_cut:
            assert facts == now_of_cut[key], (key, at)
        else:
            assert facts == ("none", None, None, None), (key, at)


# ---------------------------------------------------------------------------
# properties over generated teams


@st.composite
def _team_and_moment(draw: st.DrawFn) -> tuple[int, str, int]:
    seed = draw(st.integers(min_value=1, max_value=6))
    shape = draw(st.sampled_from(("full", "pair", "story")))
    _, whole, _ = _whole(seed, shape)
    times = event_times(whole)
    # Exactly at an event, or between two, or before everything and after it.
    base = draw(st.sampled_from(times))
    at = base + draw(st.sampled_from((0, -1, 1, 997)))
    at = draw(st.sampled_from((at, at, at, times[0] - 5_000, times[-1] + 5_000)))
    return seed, shape, at


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_team_and_moment())
def test_the_board_at_a_moment_is_the_board_of_only_the_events_up_to_it(
    case: tuple[int, str, int],
) -> None:
    _assert_moment_is_the_cut_board(*case)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_team_and_moment())
def test_stepping_forward_then_back_returns_to_the_same_state(case: tuple[int, str, int]) -> None:
    seed, shape, at = case
    _, whole, _ = _whole(seed, shape)
    times = event_times(whole)
    if at < times[0] or at >= times[-1]:
        return  # nothing before the first event to come back to, nothing after the last
    there = step_from(times, at, "next")
    back = step_from(times, there, "prev")
    assert back <= at < there
    before, after = moment_at(whole, at, times), moment_at(whole, back, times)
    assert (after.lanes, after.tasks) == (before.lanes, before.tasks)
    # and the event stepped to is one where something changed
    stepped, left = moment_at(whole, there, times), moment_at(whole, back, times)
    assert (stepped.lanes, stepped.tasks) != (left.lanes, left.tasks)


@pytest.mark.parametrize("shape", ["full", "pair", "story"])
@pytest.mark.parametrize("seed", range(1, 7))
def test_every_event_time_changes_the_team_or_the_board(seed: int, shape: str) -> None:
    """The arrow keys step between event times: none of them may be a step where
    nothing the user sees changes (a delivery time on the sender's mark was one)."""
    _, whole, _ = _whole(seed, shape)
    times = event_times(whole)
    first = moment_at(whole, times[0] - 1)
    previous = (first.lanes, first.tasks)
    for at in times:
        moment = moment_at(whole, at)
        assert (moment.lanes, moment.tasks) != previous, at
        previous = (moment.lanes, moment.tasks)


def test_at_every_task_transition_of_the_fixture_team_the_board_is_the_cut_one() -> None:
    """Deterministic: each move of the committed team's tasks, and a millisecond before
    it (reopened and released tasks lose their owner; a claim makes one)."""
    spec = TeamSpec.load(FIXTURES / "specs" / "alpha.json", root=str(FIXTURES / "sessions"))
    logs = _team_logs(FIXTURES / "sessions", spec.lead_id)
    whole = _timeline(logs, spec.lead_id)
    moves = sorted({r.time for task in spec.tasks for r in task.revisions})
    turn_ends = sorted({s["end"] for s in whole["lanes"][0]["spans"] if s["end"]})[:10]
    for at in [*moves, *(m - 1 for m in moves), *turn_ends]:
        cut = _timeline(logs, spec.lead_id, until=at)
        _assert_matches(whole, cut, at)


def test_every_task_transition_is_the_tasks_last_action_at_its_moment() -> None:
    """On the committed fixture team, against its generator's record of every revision."""
    spec = TeamSpec.load(FIXTURES / "specs" / "alpha.json", root=str(FIXTURES / "sessions"))
    logs = _team_logs(FIXTURES / "sessions", spec.lead_id)
    whole = _timeline(logs, spec.lead_id)
    checked = 0
    for task in spec.tasks:
        for revision in task.revisions:
            if revision.time is None:
                continue
            then = moment_at(whole, revision.time)
            (state,) = [t for t in then.tasks if t.task_id == task.id]
            assert state.exists
            assert (state.action, state.revision, state.status, state.action_ms) == (
                revision.expected_action,
                revision.revision,
                revision.status,
                revision.time,
            ), (task.id, revision.revision)
            # a millisecond before, the task had not made that move yet
            earlier = moment_at(whole, revision.time - 1)
            (prior,) = [t for t in earlier.tasks if t.task_id == task.id]
            assert prior.revision != revision.revision
            checked += 1
    assert checked >= 20


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_team_and_moment(), st.randoms(use_true_random=False))
def test_a_moment_does_not_depend_on_the_order_of_spans_and_history(
    case: tuple[int, str, int], shuffler: Any
) -> None:
    """Lanes list their spans, and tasks their history, in whatever order (a host may
    append late records); duplicates of a span or an entry change nothing either."""
    seed, shape, at = case
    _, whole, _ = _whole(seed, shape)
    shuffled = copy.deepcopy(whole)
    for lane in shuffled["lanes"]:
        lane["spans"] = lane["spans"] + lane["spans"][: len(lane["spans"]) // 3]
        shuffler.shuffle(lane["spans"])
    for task in shuffled["tasks"]:
        task["history"] = task["history"] + task["history"][-1:]
        shuffler.shuffle(task["history"])
    assert moment_at(shuffled, at) == moment_at(whole, at)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
_SPAN_KEYS = st.sampled_from(
    ["kind", "time", "end", "direction", "deliveredAt", "from", "to", "id", "preview"]
)


@st.composite
def _hostile_timeline(draw: st.DrawFn) -> Any:
    """Timeline-shaped values whose every field may be of the wrong type or missing."""
    span = st.dictionaries(_SPAN_KEYS, _JSON | st.sampled_from(["turn", "message", "outgoing"]))
    lane = st.dictionaries(st.sampled_from(["id", "spans"]), st.lists(span, max_size=5) | _JSON)
    entry = st.dictionaries(
        st.sampled_from(["time", "action", "status", "revision", "actor"]), _JSON
    )
    task = st.dictionaries(
        st.sampled_from(["id", "history", "ownerName"]), st.lists(entry, max_size=4) | _JSON
    )
    return draw(
        st.dictionaries(
            st.sampled_from(["lanes", "tasks"]),
            st.lists(lane | _JSON, max_size=4) | st.lists(task | _JSON, max_size=4) | _JSON,
        )
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hostile_timeline(), st.integers(min_value=-(2**53), max_value=2**53))
def test_hostile_timelines_never_raise_and_the_steps_stay_sorted(timeline: Any, at: int) -> None:
    times = event_times(timeline)
    assert list(times) == sorted(set(times))
    moment = moment_at(timeline, at, times)
    assert isinstance(moment.summary, str) and isinstance(moment.steps_text, str)
    run = (*moment.before, *moment.after)
    assert list(run) == sorted(run) and all(t < at for t in moment.before)


# ---------------------------------------------------------------------------
# hand-made teams: exact texts, hostile shapes, caching


def _small_team() -> TeamBuilder:
    team = TeamBuilder(names=("lead", "ui", "docs"), live=False)
    team.prompt(T0, "build it")
    team.turn("lead", T0 + 1_000, T0 + 60_000)
    team.turn("ui", T0 + 20_000, T0 + 90_000)
    team.message("lead", "ui", T0 + 10_000, "take the parser", msg_id="m1")
    team.message("ui", "lead", T0 + 80_000, "done", msg_id="m2")
    team.task(
        "t1",
        "parser",
        [
            (T0 + 5_000, "created", "pending", "lead"),
            (T0 + 30_000, "claimed", "in_progress", "ui"),
            (T0 + 85_000, "completed", "completed", "ui"),
        ],
    )
    team.task("t2", "docs", [(T0 + 70_000, "created", "pending", "lead")])
    return team


def test_a_moment_says_what_each_lane_and_task_was_doing_then() -> None:
    timeline = _small_team().timeline()
    at = T0 + 40_000
    moment = moment_at(timeline, at, event_times(timeline))
    lead, ui, docs = moment.lanes
    assert lead.text == "in a turn since 15:26:41"  # T0 is 15:26:40 UTC
    assert (ui.doing, ui.since) == ("turn", T0 + 20_000)
    assert (docs.doing, docs.since, docs.sent, docs.received) == ("none", None, None, None)
    assert lead.sent is not None and (lead.sent.msg_id, lead.sent.other) == ("m1", "ui")
    assert lead.received is not None and lead.received.prompt and lead.received.other == "you"
    assert ui.received is not None and ui.received.msg_id == "m1"
    parser, later = moment.tasks
    assert (parser.status, parser.owner, parser.revision, parser.action, parser.actor) == (
        "in_progress",
        "ui",
        2,
        "claimed",
        "ui",
    )
    assert not later.exists and later.status_text == "not created yet"
    assert moment.summary == "2 of 3 members in a turn · tasks: 1 in progress, 1 not created yet"
    # after the lead's turn ends it is idle since its end; a message is received only
    # once delivered (400 ms after it was queued)
    moment = moment_at(timeline, T0 + 80_100)
    assert moment.lanes[0].text == "idle since 15:27:40"
    assert moment.lanes[0].received is not None and moment.lanes[0].received.prompt
    moment = moment_at(timeline, T0 + 80_400)
    assert moment.lanes[0].received is not None and moment.lanes[0].received.msg_id == "m2"


def test_the_steps_around_a_moment_are_the_nearest_events_on_each_side() -> None:
    timeline = _small_team().timeline()
    times = event_times(timeline)
    at = T0 + 40_000
    moment = moment_at(timeline, at, times)
    assert moment.before == tuple(t for t in times if t < at)[-STEP_TIMES:]
    assert moment.after == tuple(t for t in times if t > at)[:STEP_TIMES]
    # an event's own time is in the run (the steps are one unbroken run of events)
    on_event = moment_at(timeline, T0 + 30_000, times)
    assert on_event.after[0] == T0 + 30_000 and on_event.before[-1] == T0 + 20_000
    run = (*on_event.before, *on_event.after)
    first = times.index(run[0])
    assert run == times[first : first + len(run)]
    assert step_from(times, at, "next") == T0 + 60_000
    assert step_from(times, at, "prev") == T0 + 30_000
    assert step_from(times, times[0], "prev") == times[0]  # nothing before: stays
    assert step_from(times, times[-1], "next") == times[-1]


def test_hostile_timelines_never_raise() -> None:
    hostile: list[Any] = [
        {},
        {"lanes": "x", "tasks": 7},
        {"lanes": [None, 3, {"spans": [None, {"time": "x"}, {"kind": "turn", "time": True}]}]},
        {"tasks": [{"history": [{"time": 1.5e300}, {"time": None}, "x"]}, None]},
        {"lanes": [{"spans": [{"kind": "message", "time": 5, "direction": "incoming",
                               "deliveredAt": "soon", "from": "x"}]}]},
    ]  # fmt: skip
    for timeline in hostile:
        moment = moment_at(timeline, 10, event_times(timeline))
        assert isinstance(moment.summary, str)


def test_malformed_moments_are_told_apart_from_absent_ones() -> None:
    assert not malformed_at({})
    assert not malformed_at({"at": ""})
    assert not malformed_at({"at": "1764430000000"})
    assert not malformed_at({"at": "2025-11-29T15:26:40Z"})
    assert malformed_at({"at": "yesterday"})
    assert malformed_at({"at": "12abc"})
    # numbers no clock can show (past the year 9999, before the year 1)
    assert malformed_at({"at": "9999999999999999"})
    assert malformed_at({"at": "-9999999999999999"})
    assert not malformed_at({"at": "-1"})


def test_the_list_page_holding_a_moment() -> None:
    times = list(range(0, 1000, 10))  # 100 items, pages of 50: page 0 is the newest
    assert list_page_at(times, 995, 50) == 0
    assert list_page_at(times, 495, 50) == 1
    assert list_page_at(times, -5, 50) == 1  # before everything: the oldest page
    assert list_page_at([], 5, 50) == 0


def test_moments_are_cached_by_version_and_moment() -> None:
    timeline = _small_team().timeline()
    cache = MomentCache(size=2)
    first = cache.moment("v1", timeline, T0 + 40_000, "s1")
    assert cache.moment("v1", timeline, T0 + 40_000, "s1") is first
    assert cache.moment("v2", timeline, T0 + 40_000, "s1") is not first  # another version
    cache.moment("v1", timeline, T0 + 50_000, "s1")
    assert cache.moment("v1", timeline, T0 + 40_000, "s1") is not first  # forgotten (size 2)
    assert isinstance(first.tasks[0], TaskAt)


def test_the_moment_cache_keeps_its_size_filled_past_it() -> None:
    """Polls while replaying add a moment per timeline version, a drag one per step:
    the moments stay at their limit, and the event times (one number per event of a
    team's history) are kept for one version per team, for a bounded number of teams."""
    from dsh_task_gantt.board import moment as moment_module

    timeline = _small_team().timeline()
    cache = MomentCache(size=5)
    for n in range(40):
        cache.moment(f"v{n}", timeline, T0 + 40_000 + n, "s1")
        cache.times(f"w{n}", timeline, "s2")
        assert len(cache._moments) <= 5
        assert len(cache._times) == 2  # the latest version of each of the two teams
    held = cache.times("w39", timeline, "s2")
    assert cache.times("w39", timeline, "s2") is held  # the latest one is kept
    for n in range(3 * moment_module.TIMES_TEAMS_KEPT):
        cache.times(f"x{n}", timeline, f"team-{n}")
        assert len(cache._times) <= moment_module.TIMES_TEAMS_KEPT


@pytest.mark.parametrize("seed", [2])
def test_a_moment_before_everything_and_after_everything(seed: int) -> None:
    _, whole, _ = _whole(seed, "full")
    times = event_times(whole)
    start = moment_at(whole, times[0] - 1)
    assert all(not t.exists for t in start.tasks)
    assert all(lane.doing == "none" for lane in start.lanes)
    end = moment_at(whole, times[-1] + 1)
    assert [t.status for t in end.tasks] == [t["status"] for t in whole["tasks"]]
    assert bisect.bisect_left(times, times[-1]) == len(times) - 1
