"""A fake DSH host for tests: every service in memory, each one breakable on purpose.

The live snapshot and the persisted log of a session are kept apart so a test can
make them disagree (live empty while the disk is full was the previous plugin's
worst bug, hidden by fakes that shared one list for both channels).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from dsh_task_gantt.events import LogEvent, coerce_event


def ev(etype: str, seq: int, time: int | None, data: Any = None) -> dict[str, Any]:
    line: dict[str, Any] = {"type": etype, "seq": seq, "data": data if data is not None else {}}
    if time is not None:
        line["time"] = time
    return line


def header(
    session_id: str, *, parent: str | None = None, created_at: int = 1_000
) -> dict[str, Any]:
    h: dict[str, Any] = {
        "type": "session",
        "version": 4,
        "id": session_id,
        "createdAt": created_at,
        "cwd": "/work/project",
        "isSeeded": False,
        "delegationDepth": 0 if parent is None else 1,
        "agentPreset": "cordis",
    }
    if parent is not None:
        h["parentSession"] = parent
        h["origin"] = "subagent"
    return h


@dataclass
class FakeSession:
    header: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    fail: bool = False

    def snapshot_events(self) -> list[dict[str, Any]]:
        if self.fail:
            raise RuntimeError("snapshot exploded")
        return list(self.events)


@dataclass
class FakeAgent:
    id: str
    session: FakeSession
    status: str = "idle"
    options: dict[str, Any] = field(default_factory=dict)


class FakeAgents:
    def __init__(self) -> None:
        self.agents: dict[str, FakeAgent] = {}

    def add(self, agent: FakeAgent) -> FakeAgent:
        self.agents[agent.id] = agent
        return agent

    def get(self, agent_id: str) -> FakeAgent | None:
        return self.agents.get(agent_id)

    def list(self) -> list[FakeAgent]:
        return list(self.agents.values())


@dataclass
class FakeHandle:
    id: str
    header: dict[str, Any]
    events: list[dict[str, Any]]
    inherited_event_count: int | None
    closed: bool = False
    fail_read: bool = False

    async def read(self, offset: int = 0, length: int | None = None) -> list[LogEvent]:
        if self.fail_read:
            raise OSError("disk on fire")
        stop = None if length is None else offset + length
        out = []
        for position, line in enumerate(self.events[offset:stop], start=offset):
            event = coerce_event(line, position)
            if event is not None:
                out.append(event)
        return out

    def close(self) -> None:
        self.closed = True


class FakePersistence:
    """Persisted logs in memory; ``revision`` changes whenever a log changes."""

    def __init__(self) -> None:
        self.logs: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
        self.revisions: dict[str, int] = {}
        self.handles: list[FakeHandle] = []
        self.fail_read: set[str] = set()
        self.stat_calls = 0
        self.read_calls = 0

    def put(self, session_id: str, head: dict[str, Any], events: list[dict[str, Any]]) -> None:
        self.logs[session_id] = (head, list(events))
        self.revisions[session_id] = self.revisions.get(session_id, 0) + 1

    def append(self, session_id: str, events: list[dict[str, Any]]) -> None:
        head, old = self.logs[session_id]
        self.put(session_id, head, old + events)

    async def open(self, session_id: str, mode: str = "read") -> FakeHandle:
        if session_id not in self.logs:
            raise FileNotFoundError(session_id)
        head, events = self.logs[session_id]
        handle = FakeHandle(session_id, head, events, None, fail_read=session_id in self.fail_read)
        self.handles.append(handle)
        self.read_calls += 1
        return handle

    async def stat(self, session_id: str) -> dict[str, Any] | None:
        self.stat_calls += 1
        if session_id not in self.logs:
            return None
        head, events = self.logs[session_id]
        return {
            "header": head,
            "revision": f"r{self.revisions[session_id]}",
            "eventCount": len(events),
        }

    async def list(self) -> list[dict[str, Any]]:
        return [
            {"id": sid, "header": h, "revision": f"r{self.revisions[sid]}"}
            for sid, (h, _) in self.logs.items()
        ]


class FakeConnection:
    def __init__(self, verdict: int | None = None, *, fail: bool = False) -> None:
        self.verdict = verdict
        self.fail = fail
        self.calls = 0

    def request_rejection(self, request: Any) -> int | None:
        self.calls += 1
        if self.fail:
            raise RuntimeError("guard broke")
        return self.verdict


class FakeWebServer:
    """Exact routes win, then the longest prefix; a duplicate registration raises."""

    def __init__(self, *, fail: bool = False) -> None:
        self.routes: dict[tuple[str, str], ASGIApp] = {}
        self.fail = fail

    def register(self, route: Mapping[str, Any]) -> Callable[[], None]:
        if self.fail:
            raise RuntimeError("web server refuses")
        key = (route["kind"], route["path"])
        if key in self.routes:
            raise ValueError("duplicate route")
        self.routes[key] = route["handler"]
        return lambda: self.routes.pop(key, None)  # type: ignore[return-value]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        for (kind, prefix), handler in sorted(self.routes.items(), key=lambda kv: -len(kv[0][1])):
            if (kind == "exact" and path == prefix) or (
                kind == "prefix" and (path == prefix or path.startswith(prefix + "/"))
            ):
                await handler(scope, receive, send)
                return
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"host 404"})


class FakeContext:
    def __init__(self, **services: Any) -> None:
        self.services = {k: v for k, v in services.items() if v is not None}
        self.injected: list[tuple[list[str], Callable[[Any], Any]]] = []
        self.warnings: list[str] = []
        self.logger = self

    def get(self, name: str) -> Any:
        return self.services.get(name)

    # logger
    def warning(self, msg: str, *args: Any) -> None:
        self.warnings.append(msg % args if args else msg)

    def error(self, msg: str, *args: Any) -> None:
        self.warnings.append(msg % args if args else msg)

    def info(self, msg: str, *args: Any) -> None:
        pass


class SlowAwaitable:
    """A host answer that never comes (bounded by the plugin's timeout)."""

    def __await__(self) -> Any:
        return asyncio.sleep(3600).__await__()
