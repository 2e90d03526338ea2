"""Where DSH's own projection would refuse a team: member, message and task rules in
one note, the team drawn anyway."""

from __future__ import annotations

from dsh_task_gantt.timeline import build_timeline
from tests.kit.foldkit import LEAD, Log, source, team

A = "m-a"


def _member(log: Log, name: str, phase: str, at: int) -> None:
    member = {"id": A, "name": name, "phase": phase, "description": "d", "provider": "spawn",
              "context": "fresh"}  # fmt: skip
    log.add("team/member", {"version": 2, "teamId": LEAD, "member": member}, at)


def _refusal(log: Log) -> str | None:
    notes = build_timeline(team(source(LEAD, log), {A: source(A)}))["notes"]
    found = [n for n in notes if n.startswith("DSH's own team projection would refuse")]
    return found[0] if found else None


def test_a_well_formed_team_has_no_refusal_note() -> None:
    log = Log()
    _member(log, "ana", "provisioning", 1)
    _member(log, "ana", "active", 2)
    log.task("task-1", 1, at=3).task("task-2", 1, at=4).task("task-1", 2, "in_progress", 5, A)
    assert _refusal(log) is None


def test_each_broken_rule_is_named() -> None:
    log = Log()
    _member(log, "ana", "active", 1)  # did not begin provisioning
    _member(log, "bo", "active", 2)  # renamed, and active twice
    log.task("task-1", 1, at=3).task("task-1", 3, at=4)  # a skipped revision
    log.task("task-2", 2, at=5)  # first seen above 1
    log.delivered("q9", A, 6)  # delivered, never queued
    note = _refusal(log)
    assert note is not None
    for reason in (
        "ana did not begin provisioning",
        "a member renamed (ana to bo)",
        "bo went active to active",
        "task-1 skips from revision 1 to 3",
        "task-2 first seen at a revision above 1",
        "a message delivered without being queued",
    ):
        assert reason in note, reason
