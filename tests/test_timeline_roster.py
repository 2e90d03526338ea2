"""A lane's span keys (timeline/roster.py ``SpanKeys``): held as the parts drawn whole
(key sets, and a lane's message marks as their sorted ids), they answer as one plain
set of ``(kind, id)`` keys would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.timeline.roster import SpanKeys

_KINDS = ("message", "user-prompt", "turn")
_IDS = st.sampled_from(["a", "b", "c", "m-1", "m-2", "m-10", "é", ""])
_KEY = st.tuples(st.sampled_from(_KINDS), _IDS)

#: One step of filling a lane's keys: a single key, a key set (all of one kind, said or
#: not), or one kind's sorted distinct ids.
_STEP = st.one_of(
    st.tuples(st.just("add"), _KEY),
    st.tuples(st.just("join"), st.frozensets(_KEY, max_size=5), st.booleans()),
    st.tuples(st.just("join_ids"), st.sampled_from(_KINDS), st.sets(_IDS, max_size=5)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_STEP, max_size=8), st.lists(_KEY, max_size=6), st.sampled_from(_KINDS))
def test_span_keys_answer_as_the_set_of_their_keys(
    steps: list[tuple[object, ...]], asked: list[tuple[str, str]], kind: str
) -> None:
    keys, plain = SpanKeys(), set[tuple[str, str]]()
    for step in steps:
        if step[0] == "add":
            key = step[1]
            assert isinstance(key, tuple)
            keys.add(key)
            plain.add(key)
        elif step[0] == "join":
            part, one_kind = step[1], step[2]
            assert isinstance(part, frozenset)
            kinds = {k for k, _ in part}
            # A part said to be of one kind is one (as a lane's prompts are).
            keys.join(part, kinds.pop() if one_kind and len(kinds) == 1 else None)
            plain.update(part)
        else:
            part_kind, ids = step[1], step[2]
            assert isinstance(part_kind, str) and isinstance(ids, set)
            keys.join_ids(part_kind, sorted(ids))
            plain.update((part_kind, i) for i in ids)
    for key in asked:
        assert (key in keys) == (key in plain)
    assert ("message", 7) not in keys  # not a key: never found, never raises
    assert keys.isdisjoint(frozenset(asked)) == plain.isdisjoint(asked)
    ids = sorted({i for _k, i in asked})
    assert keys.isdisjoint_ids(kind, ids) == plain.isdisjoint((kind, i) for i in ids)


def test_a_part_of_another_kind_is_not_looked_through() -> None:
    class Counted(frozenset[tuple[str, str]]):
        looks = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            Counted.looks += 1
            return super().__iter__()

    keys = SpanKeys()
    keys.join(Counted({("user-prompt", f"p{i}") for i in range(1000)}), "user-prompt")
    assert keys.isdisjoint_ids("message", ["m1", "m2"])
    assert Counted.looks == 0
    keys.join(Counted({("message", "m2")}))  # no kind said: looked through
    assert not keys.isdisjoint_ids("message", ["m1", "m2"])
    assert Counted.looks == 1
