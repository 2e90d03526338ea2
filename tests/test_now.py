"""board/now.py: each lane in the present in words, and the team's "n of m working"."""

from __future__ import annotations

import pytest

from dsh_task_gantt.board.now import duration_text, lane_now_at, working_text

MIN = 60_000


@pytest.mark.parametrize(
    ("ms", "text", "precise"),
    [(0, "<1 min", "<1 min"), (59_999, "<1 min", "<1 min"), (3 * MIN, "3 min", "3 min"),
     (60 * MIN, "1 h", "1 h"), (125 * MIN, "2 h", "2 h 5 min"), (26 * 60 * MIN, "1 d", "1 d 2 h"),
     (48 * 60 * MIN, "2 d", "2 d"), (-5, "<1 min", "<1 min")],
)  # fmt: skip
def test_durations_read_short_and_the_tooltip_to_the_minute(
    ms: int, text: str, precise: str
) -> None:
    assert duration_text(ms) == text
    assert duration_text(ms, precise=True) == precise


def test_each_state_in_words_from_the_json_now_or_the_same_computation_without_it() -> None:
    now = 1_000 * MIN
    turn = lane_now_at({"now": {"state": "in-turn", "since": now - 3 * MIN}}, True, now)
    idle = lane_now_at({"now": {"state": "idle", "since": now - 12 * MIN}}, True, now)
    assert turn is not None and turn.text == "in a turn · 3 min" and turn.working
    assert idle is not None and idle.text == "idle · 12 min" and not idle.working
    assert turn.title == "in a turn for 3 min"
    long = lane_now_at({"now": {"state": "idle", "since": now - 125 * MIN}}, True, now)
    assert long is not None and long.text == "idle · 2 h" and long.title == "idle for 2 h 5 min"
    prov = lane_now_at({"now": {"state": "provisioning", "since": None}}, True, now)
    failed = lane_now_at({"now": {"state": "failed", "since": None}}, True, now)
    assert prov is not None and prov.text == "provisioning"
    assert failed is not None and failed.text == "failed"
    # another host's timeline without "now": the lane's spans say it
    bare = {"kind": "teammate", "spans": [{"kind": "turn", "time": now - 2 * MIN, "end": None}]}
    found = lane_now_at(bare, True, now)
    assert found is not None and found.text == "in a turn · 2 min"
    never = lane_now_at({"kind": "teammate", "spans": []}, True, now)
    assert never is not None and never.text == "idle"
    # frozen, unassigned, or junk: nothing is said
    assert lane_now_at({"now": {"state": "in-turn", "since": 1}}, False, now) is None
    assert lane_now_at({"kind": "unassigned", "spans": []}, True, now) is None
    assert lane_now_at({"now": {"state": "<b>", "since": 1}}, True, now) is None
    assert working_text([turn, idle, prov, None, failed]) == "1 of 4 working"
