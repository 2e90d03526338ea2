"""timeline/activity.py: a lane in a turn or idle at a moment, and its JSON ``now``."""

from __future__ import annotations

from typing import Any

from dsh_task_gantt.board.moment import moment_at
from dsh_task_gantt.timeline import build_timeline
from dsh_task_gantt.timeline.activity import activity_at, lane_now
from tests.kit.foldkit import LEAD, T0, Log, lane, source, team

A, B, C, D = "m-a", "m-b", "m-c", "m-d"


def _turn(start: int, end: int | None) -> dict[str, Any]:
    return {"kind": "turn", "id": f"t{start}", "time": start, "end": end}


def test_a_lane_is_in_its_open_turn_and_idle_after_its_last_end() -> None:
    spans = [_turn(10, 20), _turn(30, None)]
    assert (activity_at(spans, 15).doing, activity_at(spans, 15).since) == ("turn", 10)
    assert (activity_at(spans, 25).doing, activity_at(spans, 25).since) == ("idle", 20)
    assert (activity_at(spans, None).doing, activity_at(spans, None).since) == ("turn", 30)
    assert activity_at(spans, 5).doing == "none"
    # a closed turn seen from before its end is open then; nothing later is read in
    assert activity_at([_turn(10, 50)], 40).doing == "turn"
    assert activity_at([{"kind": "message", "time": 3}], None).doing == "idle"


def test_lane_now_says_the_roster_phase_over_the_log_and_nothing_when_frozen() -> None:
    running = {"kind": "teammate", "phase": "active", "spans": [_turn(10, None)]}
    assert lane_now(running, True) == {"state": "in-turn", "since": 10}
    assert lane_now(running, False) is None
    assert lane_now({**running, "phase": "provisioning"}, True) == {
        "state": "provisioning",
        "since": None,
    }
    assert lane_now({**running, "phase": "failed"}, True) == {"state": "failed", "since": None}
    assert lane_now({"kind": "unassigned", "spans": []}, True) is None
    assert lane_now({"kind": "teammate", "spans": "junk"}, True) == {"state": "idle", "since": None}


def test_the_timeline_gives_each_lane_its_now_the_same_as_the_replay_cursor_at_the_end() -> None:
    log = Log().turn("l1", 1)  # the lead's open turn: the team is live
    log.member(A, "a").member(B, "b").member(C, "c", phase="provisioning")
    log.member(D, "d", phase="provisioning").member(D, "d", phase="failed", at=2)
    members = {
        A: source(A, Log().turn("a1", 5, 9).turn("a2", 12), status="running"),
        B: source(B, Log().turn("b1", 5, 8), status="idle"),
        C: source(C, channel="unreadable"),
        D: source(D, channel="unreadable"),
    }
    out = build_timeline(team(source(LEAD, log), members))
    assert out["live"] is True
    nows = {x["id"]: x["now"] for x in out["lanes"]}
    assert nows == {
        "lead": {"state": "in-turn", "since": T0 + 1},
        A: {"state": "in-turn", "since": T0 + 12},
        B: {"state": "idle", "since": T0 + 8},
        C: {"state": "provisioning", "since": None},
        D: {"state": "failed", "since": None},
    }
    # one computation: the replay cursor at the last event says the same of each lane
    moment = moment_at(out, T0 + 12)
    said = {x.lane_id: (x.doing, x.since) for x in moment.lanes}
    assert said["lead"] == ("turn", T0 + 1) and said[A] == ("turn", T0 + 12)
    assert said[B] == ("idle", T0 + 8)
    frozen = build_timeline(team(source(LEAD, Log().turn("l1", 1, 2)), {}))
    assert frozen["live"] is False and [x["now"] for x in frozen["lanes"]] == [None]
    assert lane(frozen, "lead")["now"] is None


def test_a_lanes_summary_reads_the_present_as_activity_at_does() -> None:
    """The one-pass summary the builds use gives the same present as the moment
    function asked for "after everything"."""
    from hypothesis import given
    from hypothesis import strategies as st

    from dsh_task_gantt.timeline.activity import activity_at, span_summary

    span = st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["turn", "message", "user-prompt"]),
            "time": st.one_of(st.none(), st.integers(0, 100)),
            "end": st.one_of(st.none(), st.integers(0, 100)),
        }
    )

    @given(st.lists(span, max_size=8))
    def check(spans: list[dict[str, object]]) -> None:
        assert span_summary(list(spans)).now == activity_at(spans, None)

    check()
