"""Small real-format teams the tests share: a lead and one teammate.

``team_logs``: the two logs as a fake host's events (a prompt, a member, one message
delivered). ``hostile_team``: a team on disk whose every log-controlled string
(message body, prompt, member name, task subject and description, workspace, ids)
is hostile HTML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.kit.fakehost import ev
from tests.kit.logwriting import T0, event, header, write_session

LEAD = "lead-1"
MATE = "mate-1"
HOSTILE_LEAD, HOSTILE_MATE = "lead-x", "mate-x"


def team_logs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    lead = [
        ev("turn/start", 0, 10_000, {"turn": "t1"}),
        ev(
            "user/message",
            1,
            10_001,
            {
                "id": "u1",
                "role": "user",
                "content": [{"type": "text", "text": "build it"}],
                "source": {"kind": "user"},
            },
        ),
        ev(
            "team/member",
            2,
            10_100,
            {
                "version": 2,
                "teamId": LEAD,
                "member": {
                    "id": MATE,
                    "name": "verify",
                    "provider": "spawn",
                    "context": "fresh",
                    "phase": "active",
                },
            },
        ),
        ev(
            "team/message/queued",
            3,
            10_200,
            {
                "teamId": LEAD,
                "message": {
                    "id": "m1",
                    "senderId": LEAD,
                    "senderName": "lead",
                    "targetId": MATE,
                    "content": [{"type": "text", "text": "line one\nline <b>two</b>"}],
                },
            },
        ),
        ev(
            "team/message/delivered",
            4,
            10_300,
            {"teamId": LEAD, "messageId": "m1", "targetId": MATE},
        ),
        ev("turn/end", 5, 11_000, {"turn": "t1", "reason": {"kind": "completed"}}),
    ]
    mate = [
        ev("turn/start", 0, 10_400, {"turn": "x1"}),
        ev("turn/end", 1, 10_900, {"turn": "x1", "reason": {"kind": "completed"}}),
    ]
    return lead, mate


#: Breaks out of text, of both attribute quotings, and tries script, handler and URL.
EVIL = (
    "<script>alert(1)</script><img src=x onerror=alert(2)>"
    "\"'><a href=\"javascript:alert(3)\" onclick='alert(4)'>j</a><style>*{}</style>"
)
EVIL_ID = 'm-"><b>x'  # a message id as it might be written (the fold keeps it)
MARKERS = ("alert(1)", "alert(2)", "alert(3)", "alert(4)")


def hostile_ev(seq: int, etype: str, data: Any) -> dict[str, Any]:
    """One event a second."""
    return event(seq, etype, data, time=T0 + 1_000 * seq)


def hostile_team(root: Path) -> None:
    task = {
        "id": "t-1",
        "revision": 1,
        "subject": "subject " + EVIL,
        "description": "description " + EVIL,
        "status": "in_progress",
        "blockedBy": [],
        "writeScopes": [EVIL],
        "ownerId": HOSTILE_MATE,
    }
    member = {"id": HOSTILE_MATE, "name": "name " + EVIL, "provider": "spawn", "phase": "active"}
    lead_events = [
        hostile_ev(0, "turn/start", {"turn": "t1"}),
        hostile_ev(
            1,
            "user/message",
            {
                "id": "u-1",
                "role": "user",
                "content": [{"type": "text", "text": "prompt " + EVIL}],
                "source": {"kind": "user"},
            },
        ),
        hostile_ev(2, "team/member", {"version": 2, "teamId": HOSTILE_LEAD, "member": member}),
        hostile_ev(3, "team/task", {"version": 2, "teamId": HOSTILE_LEAD, "task": task}),
        hostile_ev(
            4,
            "team/message/queued",
            {
                "teamId": HOSTILE_LEAD,
                "message": {
                    "id": "m-1",
                    "senderId": HOSTILE_LEAD,
                    "senderName": "lead",
                    "targetId": HOSTILE_MATE,
                    "content": [{"type": "text", "text": "body " + EVIL}],
                },
            },
        ),
        hostile_ev(
            5,
            "team/message/delivered",
            {"teamId": HOSTILE_LEAD, "messageId": "m-1", "targetId": HOSTILE_MATE},
        ),
        hostile_ev(
            6,
            "team/message/queued",
            {
                "teamId": HOSTILE_LEAD,
                "message": {
                    "id": EVIL_ID,
                    "senderId": HOSTILE_MATE,
                    "senderName": EVIL,
                    "targetId": "off-roster-" + EVIL,  # lands in a note
                    "content": [{"type": "text", "text": EVIL}],
                },
            },
        ),
        hostile_ev(7, "turn/end", {"turn": "t1", "reason": {"kind": "completed"}}),
    ]
    write_session(root, HOSTILE_LEAD, lead_events, head=header(HOSTILE_LEAD, cwd="/w/" + EVIL))
    write_session(
        root,
        HOSTILE_MATE,
        [hostile_ev(0, "turn/start", {"turn": "x1"}), hostile_ev(1, "turn/end", {"turn": "x1"})],
        head=header(HOSTILE_MATE, parentSession=HOSTILE_LEAD, delegationDepth=1),
    )
