"""The head two versions of a lane's list share (by identity): remembered, or started
where the list's maker said it kept the old one's head, it is what a whole pass finds."""

from __future__ import annotations

from itertools import count
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.memo import clear_memos
from dsh_task_gantt.timeline.identity import common_head, note_head
from dsh_task_gantt.timeline.roster import Lane
from dsh_task_gantt.timeline.spans import _resorted, _span_order


def _passed(was: list[Any], now: list[Any]) -> int:
    """The shared head by a plain loop."""
    n = 0
    while n < min(len(was), len(now)) and was[n] is now[n]:
        n += 1
    return n


_ids = count()


def _span(time: int) -> dict[str, Any]:
    return {"time": time, "kind": "turn", "id": f"t{next(_ids)}"}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 50), max_size=40),
    st.data(),
)
def test_a_resorted_list_says_a_head_its_readers_find_again(
    times: list[int], data: st.DataObject
) -> None:
    clear_memos()
    was = [_span(t) for t in times]
    ordered = sorted(was, key=_span_order)
    gone = data.draw(st.lists(st.sampled_from(was), unique_by=id)) if was else []
    added = [_span(t) for t in data.draw(st.lists(st.integers(0, 50), max_size=5))]
    now = [s for s in was if all(s is not g for g in gone)] + added
    new_ordered = _resorted((ordered, (was,)), Lane("l", "lead", "lead", "s", 0, None, parts=[now]))
    assert new_ordered == sorted(now, key=_span_order)
    assert new_ordered is not None
    # Asked twice (two readers), either way round: the whole pass's answer each time.
    for _ in range(2):
        assert common_head(ordered, new_ordered) == _passed(ordered, new_ordered)
        assert common_head(new_ordered, ordered) == _passed(new_ordered, ordered)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 30), st.data())
def test_a_pass_starts_where_the_maker_said_and_finds_the_true_head(
    size: int, data: st.DataObject
) -> None:
    clear_memos()
    was = [object() for _ in range(size)]
    now = list(was)
    for at in data.draw(st.lists(st.integers(0, max(size - 1, 0)), max_size=3)):
        if at < len(now):
            now[at] = object()
    now += [object() for _ in range(data.draw(st.integers(0, 3)))]
    true = _passed(was, now)
    note_head(was, now, data.draw(st.integers(0, true)))  # any head it truly kept
    assert common_head(was, now) == true
    assert common_head(was, now) == true  # remembered
    assert common_head(was, was) == len(was)
