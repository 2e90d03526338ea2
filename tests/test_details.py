"""The drawn messages' details: layered as the drawing merged them, never copied."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.timeline.details import MessageDetails

_IDS = st.sampled_from([f"m{n}" for n in range(6)])
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("update"), st.dictionaries(_IDS, st.integers(0, 9), max_size=4)),
        st.tuples(st.just("set"), st.tuples(_IDS, st.integers(0, 9))),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(_STEPS)
def test_the_details_read_as_the_merged_dict_would(steps: list[tuple[str, Any]]) -> None:
    """Whatever order of maps laid over and details set one by one, each id reads the
    detail a plain dict merged the same way holds, and no other id reads anything."""
    details = MessageDetails()
    merged: dict[str, Any] = {}
    for kind, what in steps:
        if kind == "update":
            layer = {ident: {"id": ident, "n": n} for ident, n in what.items()}
            details.update(layer)
            merged.update(layer)
        else:
            ident, n = what
            details[ident] = {"id": ident, "n": n}
            merged[ident] = {"id": ident, "n": n}
    assert dict(details) == merged
    assert len(details) == len(merged)
    for ident in (f"m{n}" for n in range(7)):
        assert details.get(ident) == merged.get(ident)
        assert (ident in details) == (ident in merged)


def test_a_map_laid_over_is_held_not_copied() -> None:
    """A day's drawing holds tens of thousands of details: laying them over the model's
    is a reference, so the very detail objects are what a lookup answers."""
    layer = {f"m{n}": {"id": f"m{n}"} for n in range(10_000)}
    details = MessageDetails()
    details.update({"m1": {"id": "old"}})
    details.update(layer)
    assert details["m1"] is layer["m1"]
    assert details._layers[-1] is layer
