"""Bounded memos: entries and weight stay under their limits however much is put."""

from __future__ import annotations

import gc
import operator
import weakref
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from dsh_task_gantt import memo
from dsh_task_gantt.fold import turns
from dsh_task_gantt.memo import Memo, Same, clear_memos
from dsh_task_gantt.timeline import activity, identity, liveness, messages, roster, spans, tasks


def test_a_memo_keeps_at_most_its_entries_oldest_put_forgotten_first() -> None:
    m: Memo[int, str] = Memo(3)
    for n in range(10):
        m.put(n, str(n))
        assert len(m) <= 3
    assert [k for k, _ in m.items()] == [7, 8, 9]
    assert m.get(7) == "7" and m.get(1) is None
    m.put(10, "10")  # a hit was no use: 7 is still the oldest put
    assert m.get(7) is None


def test_an_lru_memo_forgets_the_least_recently_used() -> None:
    m: Memo[int, str] = Memo(3, lru=True)
    for n in range(3):
        m.put(n, str(n))
    assert m.get(0) == "0"
    m.put(3, "3")
    assert [k for k, _ in m.items()] == [2, 0, 3]


def test_a_weighed_memo_keeps_its_total_weight_and_always_the_newest() -> None:
    m: Memo[int, str] = Memo(100, max_weight=10, weight=len)
    for n in range(50):
        m.put(n, "x" * (n % 4 + 1))
        assert m.weight <= 10 and m.weight == sum(len(v) for _, v in m.items())
    m.put(99, "y" * 25)  # heavier than the whole budget: kept alone
    assert [k for k, _ in m.items()] == [99] and m.weight == 25
    m.put(99, "z")  # replacing a key counts its new weight only
    assert m.weight == 1 and len(m) == 1
    m.clear()
    assert len(m) == 0 and m.weight == 0


def test_weight_and_its_limit_go_together() -> None:
    with pytest.raises(ValueError):
        Memo(3, max_weight=10)


def test_clear_memos_empties_every_live_memo_and_a_dropped_memo_is_not_kept() -> None:
    m: Memo[str, int] = Memo(4)
    m.put("a", 1)
    clear_memos()
    assert len(m) == 0
    assert m in memo._ALL
    gone = weakref.ref(m)
    del m
    gc.collect()
    assert gone() is None  # the registry did not keep it alive


def test_same_matches_only_the_very_object() -> None:
    a, b = [1], [1]
    assert Same(a) == Same(a) and Same(a) != Same(b) and hash(Same(a)) == id(a)


def _placed(n: int) -> Any:
    return SimpleNamespace(tasks=[None] * n)


def _pairing(n: int) -> Any:
    return SimpleNamespace(spans=(None,) * n, messages=(None,) * n)


#: Every memo of the process whose values grow with a team's history, and a value of
#: ``n`` spans (or messages) for it.
WEIGHED: list[tuple[str, Memo[Any, Any], Callable[[int], Any]]] = [
    ("fold.turns pairings", turns._PAIRINGS, _pairing),
    ("timeline.spans turn spans", spans._TURN_SPANS, lambda n: [{}] * n),
    ("timeline.spans sorted spans", spans._SORTED_SPANS, lambda n: ([{}] * n, ())),
    ("timeline.spans last turns", spans._LAST_TURNS, lambda n: ((), [], [{}] * n, {})),
    ("timeline.messages pairings", messages._PAIRINGS, lambda n: ((), _pairing(n), {})),
    ("timeline.messages drawn", messages._LAST_DRAWN, lambda n: SimpleNamespace(drawn=(None,) * n)),
    ("timeline.messages ids", messages._MESSAGE_IDS, lambda n: ["m"] * n),
    ("timeline.tasks placements", tasks._PLACED, lambda n: ((), _placed(n))),
    ("timeline.spans last prompts", spans._LAST_PROMPTS, lambda n: SimpleNamespace(weight=n)),
    ("timeline.tasks replays", tasks._REPLAYED, lambda n: SimpleNamespace(parts=[None] * n)),
    ("timeline.tasks analyses", tasks._ANALYSED, lambda n: SimpleNamespace(views=[None] * n)),
    ("timeline.activity last summaries", activity._LAST_SUMMARY, lambda n: ([{}] * n, None, None)),
    ("timeline.identity shared heads", identity._HEADS, lambda n: (0, True, n, None)),
]
#: The memos whose values are small and alike: bounded by entries.
COUNTED: list[tuple[str, Memo[Any, Any]]] = [
    ("timeline.spans prompt span", spans._PROMPT_SPAN),
    ("timeline.messages drawn message", messages._DRAWN_MESSAGES),
    ("timeline.roster tokens", roster._ROSTER_TOKENS),
    ("timeline.activity span summaries", activity._SUMMARIES),
    ("timeline.tasks task json", tasks._TASK_JSON),
    ("timeline.spans injected kinds", spans._INJECTED),
    ("timeline.liveness earliest task times", liveness._EARLIEST_HISTORY),
]


@pytest.mark.parametrize(("name", "m", "value"), WEIGHED, ids=[w[0] for w in WEIGHED])
def test_each_history_sized_memo_keeps_its_weight_when_filled_past_it(
    name: str, m: Memo[Any, Any], value: Callable[[int], Any]
) -> None:
    """A day of appends makes each lane's pairing (and sorted list, and each team's
    messages) heavier: the memo keeps its spans or messages under its limit, so old
    versions cannot pile up."""
    assert m._max_weight is not None
    clear_memos()
    try:
        heavy = max(m._max_weight // 8, 1)
        for n in range(m._max_entries + 20):
            m.put(("key", n), value(heavy))
            assert len(m) <= m._max_entries and m.weight <= m._max_weight
        assert len(m) <= 8
    finally:
        clear_memos()


@pytest.mark.parametrize(("name", "m"), COUNTED, ids=[c[0] for c in COUNTED])
def test_each_counted_memo_keeps_its_entries_when_filled_past_them(
    name: str, m: Memo[Any, Any]
) -> None:
    clear_memos()
    try:
        for n in range(m._max_entries + 50):
            m.put(("key", n), n)
        assert len(m) == m._max_entries
    finally:
        clear_memos()


def test_memos_keyed_by_a_lanes_fold_keep_one_version_of_each_lane() -> None:
    """Their keys hold the fold itself, and a lead's fold is its whole history: a day of
    appends (one new fold each) leaves each lane's last version only, not one per append
    (a fold before an append holds its own copies of the maps the append changed), and
    the lane's last version is the one found."""
    from dsh_task_gantt.fold.records import LaneFold
    from dsh_task_gantt.timeline import tokens

    clear_memos()
    try:
        for n in range(300):
            for lane in (("lead", "s-lead"), ("t1", "s-1")):
                fold = LaneFold(events_seen=n)
                tokens.lane_tokens(fold, 0, lane)
                turns.pair_turns(fold, 0, False, lane)
        assert len(tokens._LANE_TOKENS) == 2
        assert len(turns._PAIRINGS) == 2
        assert tokens._LANE_TOKENS.get((Same(fold), 0)) is not None
        assert turns._PAIRINGS.get((Same(fold), 0, False)) is not None
    finally:
        clear_memos()


def test_a_family_keeps_its_members_last_used_and_drops_an_old_ones_slots_whole() -> None:
    """A lane (family) drawn at a new scale (member) past ``per_family`` loses the
    layouts of the scale it was drawn at least recently, every slot of it; a hit is a
    use; another lane keeps its own."""
    m: Memo[tuple[str, int, str], str] = Memo(
        1000, lru=True, family=lambda slot: (slot[0], slot[2]), per_family=2
    )

    def put(lane: str, index: int, scale: str) -> None:
        key = (lane, index, scale)
        m.put(key, f"{lane}{index}{scale}", slot=key)

    for scale in ("a", "b"):
        for index in range(3):
            put("lane-0", index, scale)
    put("lane-1", 0, "a")
    assert m.get(("lane-0", 0, "a")) is not None  # "a" is now used after "b"
    put("lane-0", 0, "c")
    kept = {key for key, _ in m.items()}
    assert {k[2] for k in kept if k[0] == "lane-0"} == {"a", "c"}
    assert {k for k in kept if k[2] == "a" and k[0] == "lane-0"} == {
        ("lane-0", i, "a") for i in range(3)
    }
    assert ("lane-1", 0, "a") in kept
    for scale in "defgh":
        put("lane-0", 1, scale)
    assert len([k for k in kept if k[0] == "lane-0"]) <= 4
    assert {k[2] for k, _ in m.items() if k[0] == "lane-0"} == {"g", "h"}
    with pytest.raises(ValueError):
        Memo(10, family=lambda slot: (slot, slot))


def test_forget_members_drops_the_dead_members_slots_whole_and_keeps_the_rest() -> None:
    """A scale no view draws at any more (a member of every lane's family) goes from
    every lane at once, every slot and version of it; the live scales stay, and a lane
    drawn at the dead scale again starts it afresh."""
    m: Memo[tuple[str, int, str, int], str] = Memo(
        1000, lru=True, per_slot=2, family=lambda slot: (slot[0], slot[2]), per_family=4
    )
    for lane in ("lane-0", "lane-1"):
        for scale in ("old", "live"):
            for index in range(3):
                for version in range(2):
                    m.put((lane, index, scale, version), "v", slot=(lane, index, scale))
    assert len(m) == 24
    dropped = m.forget_members(lambda family, member: member == "old")
    assert dropped == 12 and len(m) == 12
    assert {key[2] for key, _ in m.items()} == {"live"}
    assert all(member == "live" for members in m._members.values() for member in members)
    assert m.forget_members(lambda family, member: member == "old") == 0
    m.put(("lane-0", 0, "old", 9), "v", slot=("lane-0", 0, "old"))
    assert len(m) == 13 and set(m._members["lane-0"]) == {"live", "old"}
    m.forget_members(lambda family, member: family == "lane-1")
    assert {key[0] for key, _ in m.items()} == {"lane-0"}


def test_an_lru_memos_slot_drops_its_least_recently_used_version() -> None:
    """With slot_lru, a version still asked for (a replay cursor's task row, hit at
    every poll) stays while newer ones come and go (the live view's, one per append)."""
    m: Memo[str, int] = Memo(100, lru=True, per_slot=2, slot_lru=True)
    m.put("replay", 0, slot="task-1")
    for n in range(1, 6):
        assert m.get("replay") == 0
        m.put(f"live-{n}", n, slot="task-1")
    assert m.get("replay") == 0 and m.get("live-5") == 5 and len(m) == 2
    assert m.newest_in("task-1") == 5  # the last hit: "live-5" after "replay"
    # Without slot_lru (the other lru memos: a lane's last two versions), the oldest
    # put goes, hit or not.
    plain: Memo[str, int] = Memo(100, lru=True, per_slot=2)
    plain.put("first", 0, slot="s")
    plain.put("second", 1, slot="s")
    assert plain.get("first") == 0
    plain.put("third", 2, slot="s")
    assert plain.get("first") is None and len(plain) == 2


def test_forgetting_owners_drops_exactly_the_entries_made_for_them() -> None:
    """The service forgets a team's lanes: what memos made for those sessions goes with
    them, what they made for the teams still kept stays."""
    m: Memo[tuple[str, int], int] = Memo(100, per_slot=3)
    for n in range(6):
        for session in ("s-old", "s-kept"):
            m.put((session, n), n, slot=session, owner=session)
    m.put(("shared", 0), 0)  # no owner: bounded by entries only
    assert len(m) == 7  # three versions per slot, and the unowned one
    m.forget({"s-old", "s-unknown"})
    assert sorted(k for k, _ in m.items()) == [("s-kept", n) for n in (3, 4, 5)] + [("shared", 0)]
    m.put(("s-old", 9), 9, slot="s-old", owner="s-old")  # its slot starts afresh
    assert m.get(("s-old", 9)) == 9 and len(m) == 5
    m.put(("s-kept", 5), 50, owner="s-other")  # put again: its owner is the latest one
    m.forget(["s-kept"])
    assert m.get(("s-kept", 5)) == 50 and m.get(("s-kept", 4)) is None


def test_forget_owners_reaches_every_memo_of_the_process() -> None:
    a: Memo[str, int] = Memo(8)
    b: Memo[str, int] = Memo(8, lru=True)
    a.put("x", 1, owner="s-1")
    b.put("y", 2, owner="s-1")
    b.put("z", 3, owner="s-2")
    memo.forget_owners(["s-1"])
    assert a.items() == [] and b.items() == [("z", 3)]


def test_the_process_wide_lru_caches_keep_their_size_when_filled_past_it() -> None:
    """The time texts, the previews and the parties spans name are cached process-wide:
    teams opened one after another (or a hostile log naming thousands of senders) fill
    them up to their limits and no further; a preview's key is the start of a body, so
    long bodies of teams no longer kept are not held whole."""
    import tracemalloc

    from dsh_task_gantt import timetext
    from dsh_task_gantt.fold import text

    timetext.format_time.cache_clear()
    for n in range(timetext.TIMES_KEPT + 100):
        timetext.format_time(1_800_000_000_000 + n * 1000)
    assert timetext.format_time.cache_info().currsize == timetext.TIMES_KEPT
    timetext.format_time.cache_clear()

    text._preview.cache_clear()
    tracemalloc.start()
    try:
        for n in range(text.PREVIEWS_KEPT + 100):
            assert text.preview(f"{n} " + "body " * 3000).startswith(f"{n} body")
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        text._preview.cache_clear()
    # Keyed by whole bodies (15 KB each) the cache would hold 15 KB an entry; by their
    # first PREVIEW_SOURCE characters it holds under 2 KB an entry.
    assert held < text.PREVIEWS_KEPT * 2 * 1024

    from dsh_task_gantt.timeline import roster

    roster._party.cache_clear()
    for n in range(roster.PARTIES_KEPT + 100):
        party = {"kind": "system", "id": f"sender-{n}", "name": f"sender {n}"}
        assert roster.shared_party(party) == party
    assert roster._party.cache_info().currsize == roster.PARTIES_KEPT
    roster._party.cache_clear()


def test_a_lanes_turn_spans_hold_its_last_version_only_and_keep_unchanged_spans() -> None:
    """A live turn's tokens change with every append, and a turn may come in before
    others: each version keeps the very spans of the turns that did not change (moved
    or not), draws the others, and nothing holds a span per turn and version (a memo by
    value did, ~4 blocks for every closed turn of the day, filling for hours)."""
    from dsh_task_gantt.fold.turns import TurnPairing, TurnSpan

    clear_memos()
    try:
        party = {"kind": "member", "id": "m1", "name": "ann"}
        done = tuple(TurnSpan(f"t-{n}", 500 + n, n, 600 + n, "done") for n in range(200))
        last = None
        for n in range(50):
            live = TurnSpan("t-live", 1_000, 900, None, None)
            pairing = TurnPairing((*done, live), 0, 0, 0, 0, 0)
            totals = {"t-live": ((n, 0, 0, 1, 0), n + 1, 0)}
            drawn = spans.turn_spans(pairing, party, "s1", totals)
            assert drawn[-1]["tokens"]["input"] == n
            if last is not None:
                assert all(map(operator.is_, drawn[:-1], last[:-1])) and drawn[-1] is not last[-1]
            last = drawn
        # One came in before the others: they moved, and keep their spans.
        early = TurnSpan("t-early", 100, 901, 200, "done")
        moved = TurnPairing((early, *done, live), 0, 0, 0, 0, 0)
        assert last is not None
        drawn = spans.turn_spans(moved, party, "s1", totals)
        assert all(map(operator.is_, drawn[1:], last))
        assert [s["id"] for s in drawn] == ["t-early", *(t.turn_id for t in done), "t-live"]
        # The lane's last version (and its pairing's), not an entry per turn or append.
        assert sum(map(len, memo._ALL)) <= 4
    finally:
        clear_memos()


class _Item:
    """An item compared by identity only (as a lane's marks and bars are reused)."""

    def __init__(self, n: int) -> None:
        self.n = n


def test_carried_makes_only_the_items_new_to_a_lanes_next_version() -> None:
    made: list[int] = []

    def make(item: _Item) -> str:
        made.append(item.n)
        return f"entry {item.n}"

    c: memo.Carried[_Item, str] = memo.Carried(lanes=4)
    first = tuple(map(_Item, range(3)))
    assert c.made("lane", first, make) == ("entry 0", "entry 1", "entry 2")
    assert c.made("lane", first, make) == ("entry 0", "entry 1", "entry 2")
    assert made == [0, 1, 2]  # the very items again: nothing made
    # The next version keeps two items (the same objects), drops one, adds one, and an
    # equal-looking item that is another object is made afresh.
    second = (first[0], first[2], _Item(1), _Item(3))
    assert c.made("lane", second, make) == ("entry 0", "entry 2", "entry 1", "entry 3")
    assert made == [0, 1, 2, 1, 3]
    # Another context (what make reads besides the item): nothing carried.
    c.made("lane", second, make, context="renamed")
    assert made[-4:] == [0, 2, 1, 3]


def test_carried_keeps_each_lanes_last_versions_and_its_lanes_bound() -> None:
    """A day of appends gives each lane a new version per append: the memo keeps the
    last two of each lane (an older one's items are no lane's any more), and at most its
    lanes' worth in all, however many lanes come and go."""
    c: memo.Carried[_Item, int] = memo.Carried(lanes=3, versions=2)
    for n in range(200):
        for lane in ("lead", "t1"):
            c.made(lane, tuple(map(_Item, range(n % 7 + 1))), lambda item: item.n)
        assert len(c) <= 4
    assert len(c) == 4
    for n in range(50):
        c.made(("other", n), (_Item(n),), lambda item: item.n)
        assert len(c) <= 6
    assert len(c) == 6
    c.clear()
    assert len(c) == 0


def test_carried_versions_hold_no_dead_items() -> None:
    """What a dropped version held (its items and what was made of them) is freed."""
    c: memo.Carried[_Item, str] = memo.Carried(lanes=2, versions=2)
    old = _Item(0)
    dead = weakref.ref(old)
    c.made("lane", (old,), lambda item: str(item.n))
    del old
    for n in range(1, 4):
        c.made("lane", (_Item(n),), lambda item: str(item.n))
    gc.collect()
    assert dead() is None


def test_carried_entries_are_forgotten_with_their_owner() -> None:
    c: memo.Carried[_Item, int] = memo.Carried(lanes=8)
    c.made("a", (_Item(1),), lambda item: item.n, owner="s-old")
    c.made("b", (_Item(2),), lambda item: item.n, owner="s-kept")
    memo.forget_owners(["s-old"])
    assert len(c) == 1


def test_carried_versions_hold_what_was_made_and_nothing_per_item_beside_it() -> None:
    """A lane's kept versions hold their items and what was made of each (shared from
    one version to the next), not a map of the items by identity: that held an int per
    item and version, for every lane, growing with its history."""
    import tracemalloc

    items = tuple(map(_Item, range(20_000)))
    next_items = (*items[:-1], _Item(-1))
    made = "entry"
    c: memo.Carried[_Item, str] = memo.Carried(lanes=4)
    gc.collect()
    tracemalloc.start()
    try:
        c.made("lane", items, lambda item: made)
        c.made("lane", next_items, lambda item: made)
        gc.collect()
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(c) == 2
    # Two tuples of 20,000 pointers (~160 KB each) and the memo's few entries; a map by
    # identity of each version was ~1.6 MB more.
    assert held < 500_000
