"""roster_hints: members from the lead's log in order of first appearance."""

from __future__ import annotations

from dsh_task_gantt.fold import EMPTY_FOLD, MemberHint, roster_hints
from tests.kit.foldkit import LEAD, T0, Log


def test_hints_merge_member_and_catalog_in_first_appearance_order() -> None:
    log = Log().catalog("m-b", 4).member("m-a", "alpha", phase="provisioning")
    log.member("m-b", "beta").member("m-a", "alpha2", phase="active", error="boom")
    log.member("m-a", "alpha", phase="active").catalog("m-c", None)
    log.member(LEAD, "lead")  # the lead itself (teamId) is no teammate
    hints = roster_hints(log.fold())
    assert [h.id for h in hints] == ["m-b", "m-a", "m-c"]
    b, a, c = hints
    assert b == MemberHint(
        "m-b", "beta", ("beta",), "active", None, None, "fresh", T0 + 4, 0, label="x"
    )
    assert a.name == "alpha" and a.aliases == ("alpha", "alpha2")
    assert a.phase == "active" and a.error is None and a.first_seq == 1
    assert c.name is None and c.aliases == () and c.created_at is None


def test_no_hints_from_an_empty_fold() -> None:
    assert roster_hints(EMPTY_FOLD) == []
