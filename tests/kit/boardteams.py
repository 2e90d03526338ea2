"""Hand-made team timelines for the board's tests, and the plugin's app over them.

``TeamBuilder`` builds a timeline dict the way the fold would (a message on both its
lanes); ``demo_team`` is a plausible seven-member team over forty minutes (also used by
the screenshots); ``FakeProvider`` serves a builder's timeline and counts the calls;
``make_app`` mounts the real plugin app (the production route table) over a provider.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.requests import Request

from dsh_task_gantt import ROUTE_PREFIX
from dsh_task_gantt.provider import TimelineProvider, TimelineResult
from dsh_task_gantt.resources import resource_path
from dsh_task_gantt.web import GanttApp

PREFIX = ROUTE_PREFIX
T0 = 1_764_430_000_000  # a fixed instant: the tests never depend on the clock
# ---------------------------------------------------------------------------
# hand-made timelines, in the shape of the timeline JSON (docs/interfaces.md)

NAMES = ("lead", "verify", "host-data", "ui", "docs", "fixtures", "perf")


def _who(name: str) -> dict[str, Any]:
    if name == "you":
        return {"kind": "user", "id": "user", "name": "you"}
    if name == "?":
        return {"kind": "system", "id": "system", "name": "system"}
    return {"kind": "lead" if name == "lead" else "teammate", "id": name, "name": name}


def lane_record(index: int, name: str, status: str | None = "idle") -> dict[str, Any]:
    return {
        "id": name,
        "kind": "lead" if index == 0 else "teammate",
        "name": name,
        "sessionId": f"s-{name}",
        "index": index,
        "color": {
            "fill": "--dsw-alias-state-business-primary",
            "on": "--dsw-alias-label-primary-inverted",
            "slot": index % 5,
        },
        "phase": "active",
        "status": status,
        "createdAt": T0,
        "channel": "persisted",
        "error": None,
        "spans": [],
        "taskIds": [],
    }


@dataclass
class TeamBuilder:
    """Builds a timeline dict the way the fold would: a message on both lanes."""

    names: tuple[str, ...] = NAMES
    live: bool = True
    now: int = T0 + 40 * 60_000
    lanes: dict[str, dict[str, Any]] = field(default_factory=dict)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    source: str = "log"
    _n: int = 0

    def __post_init__(self) -> None:
        for index, name in enumerate(self.names):
            self.lanes[name] = lane_record(
                index, name, "running" if self.live and index < 2 else "idle"
            )

    def turn(
        self, lane: str, start: int, end: int | None, tokens: dict[str, int] | None = None
    ) -> None:
        """A turn; ``tokens``: its usage (the timeline's ``Tokens``), else none."""
        self._n += 1
        span: dict[str, Any] = {
            "kind": "turn",
            "id": f"turn-{self._n}",
            "time": start,
            "end": end,
            "from": _who(lane),
            "to": None,
            "direction": None,
            "preview": "",
            "sessionId": f"s-{lane}",
        }
        if tokens is not None:
            span["tokens"] = tokens
        self.lanes[lane]["spans"].append(span)

    def message(
        self, sender: str, target: str, at: int, body: str, msg_id: str = "", delivered: bool = True
    ) -> str:
        self._n += 1
        delivered_at = at + 400 if delivered else None
        msg_id = msg_id or f"msg-{self._n}"
        preview = body.replace("\n", " ")[:140]
        for lane, direction in ((sender, "outgoing"), (target, "incoming")):
            if lane not in self.lanes:
                continue
            self.lanes[lane]["spans"].append(
                {
                    "kind": "message",
                    "id": msg_id,
                    "time": at,
                    "end": at + 400,
                    "from": _who(sender),
                    "to": _who(target),
                    "direction": direction,
                    "preview": preview,
                    "sessionId": "s-lead",
                    "deliveredAt": delivered_at,
                }
            )
        self.messages[msg_id] = {
            "id": msg_id,
            "from": _who(sender),
            "to": _who(target),
            "queuedAt": at,
            "deliveredAt": delivered_at,
            "body": body[:16_384],
            "length": len(body),
            "truncated": len(body) > 16_384,
        }
        return msg_id

    def prompt(self, at: int, text: str, msg_id: str = "") -> str:
        self._n += 1
        msg_id = msg_id or f"prompt-{self._n}"
        self.lanes[self.names[0]]["spans"].append(
            {
                "kind": "user-prompt",
                "id": msg_id,
                "time": at,
                "end": None,
                "from": _who("you"),
                "to": _who(self.names[0]),
                "direction": "incoming",
                "preview": text[:140],
                "sessionId": "s-lead",
            }
        )
        self.messages[msg_id] = {
            "id": msg_id,
            "from": _who("you"),
            "to": _who(self.names[0]),
            "queuedAt": at,
            "deliveredAt": at,
            "body": text,
            "length": len(text),
            "truncated": False,
        }
        return msg_id

    def task(self, task_id: str, subject: str, moves: list[tuple[int, str, str, str]]) -> None:
        """moves: (time, action, status, actor)."""
        history = [
            {
                "time": at,
                "action": action,
                "revision": n + 1,
                "status": status,
                "sessionId": "s-lead",
                "actor": actor,
            }
            for n, (at, action, status, actor) in enumerate(moves)
        ]
        status = moves[-1][2] if moves else "pending"
        owner = next((a for _, act, _, a in reversed(moves) if act == "claimed"), None)
        self.tasks.append(
            {
                "id": task_id,
                "revision": len(moves),
                "subject": subject,
                "description": f"Do {subject} well.\nSecond line.",
                "status": status,
                "blockedBy": [],
                "writeScopes": [],
                "ownerId": owner,
                "ownerName": owner,
                "laneId": owner or "unassigned",
                "history": history,
            }
        )

    def timeline(self) -> dict[str, Any]:
        lanes = []
        for lane in self.lanes.values():
            lane = dict(lane)
            # Copies: a test changes a span in place (a message delivered), and a
            # timeline's spans are never changed once built (timeline/spans.py; the
            # board reuses what it drew for a span object it saw before).
            lane["spans"] = sorted((dict(s) for s in lane["spans"]), key=lambda s: s["time"])
            lanes.append(lane)
        times = [s["time"] for lane in lanes for s in lane["spans"]]
        times += [s["end"] for lane in lanes for s in lane["spans"] if s["end"] is not None]
        times += [h["time"] for t in self.tasks for h in t["history"]]
        return {
            "version": 1,
            "generatedAt": self.now,
            "sessionId": "s-lead",
            "rootSessionId": "s-lead",
            "source": self.source,
            "live": self.live,
            "range": {
                "start": min(times, default=None),
                "end": None if self.live else max(times, default=None),
            },
            "lanes": lanes,
            "tasks": self.tasks,
            "notes": self.notes,
            "diagnostics": {},
        }


def demo_team(live: bool = True) -> TeamBuilder:
    """A plausible seven-member team over forty minutes (also used by the screenshots)."""
    minute = 60_000
    team = TeamBuilder(live=live)
    team.prompt(T0 + 5_000, "Build the Gantt panel. Lanes per member,\nmessages on both lanes.")
    team.turn("lead", T0, T0 + 6 * minute)
    team.turn("lead", T0 + 14 * minute, T0 + 19 * minute)
    team.turn("lead", T0 + 31 * minute, None if live else T0 + 38 * minute)
    plan = [
        ("verify", 2, 12), ("host-data", 3, 16), ("ui", 3, 25), ("docs", 8, 20),
        ("fixtures", 4, 14), ("perf", 10, 22),
    ]  # fmt: skip
    for name, a, b in plan:
        team.turn(name, T0 + a * minute, T0 + b * minute)
        team.message("lead", name, T0 + (a - 1) * minute + 20_000, f"Please take the {name} part.")
        team.message(
            name, "lead", T0 + b * minute - 30_000, f"{name}: done, see commit.\n- tests green"
        )
    team.turn("ui", T0 + 27 * minute, None if live else T0 + 37 * minute)
    team.turn("verify", T0 + 28 * minute, None if live else T0 + 36 * minute)
    team.message(
        "verify", "host-data", T0 + 16 * minute + 18_000, "The reader drops the torn tail."
    )
    team.message("host-data", "verify", T0 + 17 * minute, "Fixed in a1b2c3, please re-run.")
    team.message("ui", "verify", T0 + 29 * minute, "Panel ready for review.\n" + "detail " * 400)
    team.prompt(T0 + 30 * minute, "Also show the task history please.")
    team.task(
        "1",
        "Log reader",
        [
            (T0 + 2 * minute, "created", "pending", "lead"),
            (T0 + 3 * minute, "claimed", "in_progress", "host-data"),
            (T0 + 15 * minute, "completed", "completed", "host-data"),
            (T0 + 16 * minute, "reopened", "pending", "verify"),
            (T0 + 17 * minute, "claimed", "in_progress", "host-data"),
            (T0 + 20 * minute, "completed", "completed", "host-data"),
        ],
    )
    team.task(
        "2",
        "Gantt panel",
        [
            (T0 + 2 * minute, "created", "pending", "lead"),
            (T0 + 4 * minute, "claimed", "in_progress", "docs"),
            (T0 + 9 * minute, "claimed", "in_progress", "ui"),
        ],
    )
    team.task("3", "Benchmarks", [(T0 + 2 * minute, "created", "pending", "lead")])
    team.notes.append("3 of 83 user messages were from the human; 80 injected by the runtime.")
    return team


# ---------------------------------------------------------------------------
# the fake provider and the plugin's app over it


class FakeProvider:
    def __init__(self, team: TeamBuilder, session_id: str = "s-lead") -> None:
        self.team = team
        self.session_id = session_id
        self.timeline_calls = 0
        self.etag_calls = 0

    def _result(self) -> TimelineResult:
        data = self.team.timeline()
        stable = dict(data)
        stable.pop("generatedAt")
        body = orjson.dumps(data)
        etag = hashlib.sha256(orjson.dumps(stable, option=orjson.OPT_SORT_KEYS)).hexdigest()[:20]
        return TimelineResult(data=data, encoded=body, etag=f'"{etag}"', live=bool(data["live"]))

    async def timeline(self, session_id: str) -> TimelineResult | None:
        self.timeline_calls += 1
        return self._result() if session_id == self.session_id else None

    async def message(self, session_id: str, message_id: str) -> Mapping[str, Any] | None:
        if session_id != self.session_id:
            return None
        return self.team.messages.get(message_id)

    async def current_etag(self, session_id: str) -> str | None:
        self.etag_calls += 1
        return self._result().etag if session_id == self.session_id else None


async def allow_every_request(request: Request) -> None:
    """A connection guard that lets every request through (the tests' loopback client)."""
    return None


def make_app(provider: TimelineProvider) -> GanttApp:
    """The plugin's own app (its route table, checks and security headers) over a provider."""
    return GanttApp(
        provider, allow_every_request, prefix=PREFIX, static_dir=resource_path("static")
    )
