"""counted / counted_thousands: the one way a count is written with its noun."""

from __future__ import annotations

from dsh_task_gantt.plurals import counted, counted_thousands


def test_one_is_singular_and_everything_else_plural() -> None:
    assert [counted(n, "turn") for n in (0, 1, 2)] == ["0 turns", "1 turn", "2 turns"]
    assert counted(1, "copy", "copies") == "1 copy"
    assert counted(3, "copy", "copies") == "3 copies"


def test_thousands_are_grouped_only_where_asked() -> None:
    # The timeline's notes and the board write plain digits; the start page groups them.
    assert counted(1_204, "event") == "1204 events"
    assert counted_thousands(1_204, "message") == "1,204 messages"
    assert counted_thousands(1, "delivery", "deliveries") == "1 delivery"
    assert counted_thousands(2_000_000, "delivery", "deliveries") == "2,000,000 deliveries"
