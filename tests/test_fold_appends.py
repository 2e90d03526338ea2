"""What an append added to a fold's seq-keyed map: found, or refused when it is no append."""

from __future__ import annotations

from dsh_task_gantt.fold.appends import appended, appended_seqs


def test_records_added_at_higher_seqs_are_the_append() -> None:
    old = {1: "a", 4: "b"}
    new = {**old, 7: "c", 9: "d"}
    assert appended_seqs(old, new) == [7, 9]
    assert appended(old, new) == [(7, "c"), (9, "d")]
    assert appended(old, old) == []


def test_a_changed_dropped_or_earlier_record_is_no_append() -> None:
    old = {1: "a", 4: "b"}
    assert appended_seqs(old, {1: "a", 4: "B", 7: "c"}) is None  # a record changed
    assert appended_seqs(old, {1: "a"}) is None  # one dropped
    assert appended_seqs(old, {**old, 3: "c"}) is None  # below the last seq


def test_a_given_top_bounds_the_new_seqs_instead_of_the_maps_own() -> None:
    assert appended_seqs({1: "a"}, {1: "a", 5: "b"}, top=6) is None
    assert appended_seqs({1: "a"}, {1: "a", 5: "b"}, top=4) == [5]
