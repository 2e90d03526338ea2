"""read_lane: live first, disk second, with fake hosts whose channels disagree on purpose."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt.events import EventRun, LogEvent, event_count
from dsh_task_gantt.fold import RUN_MARKS, UNREAD_DATA, fold_lane
from dsh_task_gantt.logs.channels import NO_SERVICES, LaneRead, read_lane
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from tests.kit.logwriting import event, header, write_session

SID = "s-lead"
LIVE = [event(i, "turn/start", {"from": "live"}) for i in range(5)]
DISK = [event(i, "turn/start", {"from": "disk"}) for i in range(3)]


@dataclass
class Session:
    events: list[Any] | None = None
    mode: str = "ok"  # ok | raise | hang | camel
    header: dict[str, Any] = field(default_factory=lambda: header(SID))
    inheritedEventCount: int | None = None

    def snapshot_events(self) -> Any:
        if self.mode == "raise":
            raise RuntimeError("/secret/path exploded")
        if self.mode == "hang":
            return asyncio.sleep(3600)
        return list(self.events or [])


@dataclass
class CamelSession:
    events: list[Any]
    header: dict[str, Any] = field(default_factory=lambda: header(SID))

    def snapshotEvents(self) -> list[Any]:
        return self.events


@dataclass
class Agent:
    session: Any
    status: str = "running"
    id: str = SID


class Agents:
    def __init__(self, agent: Agent | None) -> None:
        self.agent = agent

    def get(self, agent_id: str) -> Agent | None:
        return self.agent if agent_id == SID else None


class Handle:
    def __init__(self, events: list[Any], fail: str | None, inherited: int | None) -> None:
        self.id = SID
        self.header = header(SID, isSeeded=inherited is not None)
        self.inheritedEventCount = inherited
        self.events = events
        self.fail = fail
        self.closed = 0

    async def read(self, offset: int = 0, length: int | None = None) -> list[Any]:
        if self.fail == "read":
            raise OSError("/home/me/.dsh/sessions/x: boom")
        return self.events[offset:]

    def close(self) -> None:
        self.closed += 1


class Persistence:
    def __init__(
        self, events: list[Any] | None, *, fail: str | None = None, inherited: int | None = None
    ) -> None:
        self.events = events
        self.fail = fail
        self.inherited = inherited
        self.handles: list[Handle] = []

    async def open(self, session_id: str, mode: str) -> Handle:
        if self.fail == "open" or self.events is None:
            raise FileNotFoundError(session_id)
        handle = Handle(self.events, self.fail, self.inherited)
        self.handles.append(handle)
        return handle

    async def stat(self, session_id: str) -> dict[str, Any] | None:
        if self.events is None:
            return None
        return {
            "header": header(SID),
            "revision": f"rev-{len(self.events)}",
            "eventCount": len(self.events),
        }


def lane(agents: Any, persistence: Any, **kw: Any) -> LaneRead:
    return asyncio.run(read_lane(SID, agents=agents, persistence=persistence, timeout=0.2, **kw))


def origins(read: LaneRead) -> set[str]:
    return {e.data["from"] for e in read.events}


def test_live_empty_disk_full_reads_the_disk() -> None:
    disk = Persistence(DISK)
    read = lane(Agents(Agent(Session([]))), disk)
    assert read.channel == "persisted" and origins(read) == {"disk"}
    assert read.total_events == 3 and read.revision == "rev-3" and read.error is None
    assert read.agent_status == "running"
    assert any("empty" in n for n in read.notes)
    assert [h.closed for h in disk.handles] == [1]


def test_live_full_disk_stale_uses_the_live_events() -> None:
    disk = Persistence(DISK)
    read = lane(Agents(Agent(Session(LIVE))), disk)
    assert read.channel == "snapshot" and origins(read) == {"live"}
    assert read.total_events == 5 and read.revision == "snapshot:5"
    assert read.header is not None and read.header.id == SID
    assert disk.handles == []  # the disk was not read, and is not claimed


def test_live_events_from_since() -> None:
    read = lane(Agents(Agent(Session(LIVE))), None, since=3)
    assert read.channel == "snapshot" and [e.seq for e in read.events] == [3, 4]
    assert [e.position for e in read.events] == [3, 4] and read.total_events == 5


def test_camel_case_snapshot_and_objects() -> None:
    class Obj:
        def __init__(self, seq: int) -> None:
            self.type, self.seq, self.time, self.data = (
                "turn/start",
                seq,
                100 + seq,
                {"from": "live"},
            )

    read = lane(Agents(Agent(CamelSession([Obj(0), Obj(1), {"no": "type"}]))), None)
    assert read.channel == "snapshot" and [e.time for e in read.events] == [100, 101]
    assert any("skipped 1 live events" in n for n in read.notes)


def test_live_raising_falls_back_to_the_disk_with_a_note() -> None:
    read = lane(Agents(Agent(Session(LIVE, mode="raise"))), Persistence(DISK))
    assert read.channel == "persisted" and origins(read) == {"disk"}
    assert any("RuntimeError" in n for n in read.notes)
    assert all("/secret" not in n for n in read.notes)


def test_live_hanging_is_bounded_and_falls_back() -> None:
    read = lane(Agents(Agent(Session(LIVE, mode="hang"))), Persistence(DISK))
    assert read.channel == "persisted" and origins(read) == {"disk"}
    assert any("did not answer" in n for n in read.notes)


def test_both_empty_is_a_successful_empty_read() -> None:
    read = lane(Agents(Agent(Session([]))), Persistence([]))
    assert read.channel == "empty" and read.error is None
    assert read.events == [] and read.total_events == 0


def test_no_agent_and_an_empty_log_is_empty() -> None:
    read = lane(Agents(None), Persistence([]))
    assert read.channel == "empty" and read.error is None and read.agent_status is None


def test_neither_service_present() -> None:
    read = lane(None, None)
    assert read.channel == "unreadable" and read.error == NO_SERVICES and read.events == []
    read = lane(Agents(None), None)
    assert read.channel == "unreadable" and read.error == NO_SERVICES


def test_live_empty_without_a_persistence_service_is_empty_with_a_note() -> None:
    read = lane(Agents(Agent(Session([]))), None)
    assert read.channel == "empty" and any("sessionPersistence" in n for n in read.notes)


@pytest.mark.parametrize("fail", ["read", "open"])
def test_persistence_failing_with_no_live_agent_is_unreadable(fail: str) -> None:
    disk = Persistence(DISK, fail=fail)
    read = lane(Agents(None), disk)
    assert read.channel == "unreadable" and read.events == [] and read.total_events == 0
    assert read.error is not None and "/home" not in read.error and "Traceback" not in read.error
    assert read.revision is None
    assert all(h.closed == 1 for h in disk.handles)  # close() also after a failed read


def test_persistence_failing_but_live_answered_is_the_snapshot() -> None:
    disk = Persistence(DISK, fail="read")
    read = lane(Agents(Agent(Session(LIVE))), disk)
    assert read.channel == "snapshot" and origins(read) == {"live"}


def test_live_empty_and_persistence_failing_is_unreadable_not_empty() -> None:
    disk = Persistence(DISK, fail="read")
    read = lane(Agents(Agent(Session([]))), disk)
    assert read.channel == "unreadable" and read.error is not None
    assert [h.closed for h in disk.handles] == [1]


def test_no_persisted_log_and_no_agent() -> None:
    read = lane(Agents(None), Persistence(None))
    assert (
        read.channel == "unreadable" and read.error is not None and "no persisted log" in read.error
    )


def test_inherited_count_from_the_handle_or_the_session() -> None:
    assert lane(Agents(None), Persistence(DISK, inherited=2)).inherited_event_count == 2
    session = Session(LIVE)
    session.inheritedEventCount = 4
    assert lane(Agents(Agent(session)), None).inherited_event_count == 4


def test_persisted_since_reads_only_new_events() -> None:
    read = lane(Agents(None), Persistence(DISK), since=2)
    assert [e.seq for e in read.events] == [2] and read.total_events == 3
    assert read.events[0].position == 2


def test_a_host_that_breaks_in_unforeseen_ways_never_raises() -> None:
    class Weird:
        def __getattr__(self, name: str) -> Any:
            raise ZeroDivisionError(name)

    read = lane(Weird(), Weird())
    assert read.channel == "unreadable" and read.error


def test_with_the_real_directory_persistence(tmp_path: Path) -> None:
    write_session(tmp_path, SID, DISK, per_frame=2)
    persistence = DirectorySessionPersistence(tmp_path)
    read = lane(Agents(Agent(Session([]), status="idle")), persistence)
    assert read.channel == "persisted" and origins(read) == {"disk"}
    assert read.agent_status == "idle" and read.revision is not None
    again = lane(Agents(None), persistence, since=3)
    assert again.channel == "persisted" and again.events == [] and again.total_events == 3
    missing = asyncio.run(read_lane("nobody", agents=None, persistence=persistence, timeout=1))
    assert missing.channel == "unreadable" and str(tmp_path) not in (missing.error or "")


def test_runs_come_only_from_a_handle_that_offers_them(tmp_path: Path) -> None:
    kinds = ["step/start", "assistant/message", "step/end", "turn/start"]
    write_session(tmp_path, SID, [event(i, kinds[i % 4]) for i in range(12)], per_frame=3)
    ours = DirectorySessionPersistence(tmp_path, skip_types=UNREAD_DATA, run_marks=RUN_MARKS)
    runs = lane(Agents(None), ours, runs=True)
    plain = lane(Agents(None), Persistence([event(i, kinds[i % 4]) for i in range(12)]), runs=True)
    assert any(type(e) is EventRun for e in runs.events)
    assert all(type(e) is LogEvent for e in plain.events)
    assert runs.total_events == plain.total_events == 12 == event_count(runs.events)
    assert fold_lane(runs.events) == fold_lane(plain.events)
    again = lane(Agents(None), ours, since=12, runs=True)
    assert again.events == [] and again.total_events == 12


class SlowHandle(Handle):
    async def read(self, offset: int = 0, length: int | None = None) -> list[Any]:
        await asyncio.sleep(0.5)  # longer than the lane() helper's 0.2 s
        return self.events[offset:]


class SlowPersistence(Persistence):
    async def open(self, session_id: str, mode: str) -> Handle:
        handle = SlowHandle(self.events or [], None, None)
        self.handles.append(handle)
        return handle


class SlowOwnPersistence(SlowPersistence):
    #: What our own persistence says: its reads are local work, slow is not hung.
    call_timeout_s = 5.0


def test_a_host_persistence_answering_late_is_given_up_on() -> None:
    read = lane(Agents(None), SlowPersistence(DISK))
    assert read.channel == "unreadable" and "did not answer within 0.2 s" in (read.error or "")


def test_a_persistence_that_says_its_calls_take_longer_is_waited_for() -> None:
    """Our own persistence decodes local logs one at a time: a read that waits for the
    others (a day-long team on a loaded machine) is work in progress, and its lane is
    drawn, not left empty."""
    read = lane(Agents(None), SlowOwnPersistence(DISK))
    assert read.channel == "persisted" and origins(read) == {"disk"}


def test_the_directory_persistence_waits_longer_than_a_host() -> None:
    from dsh_task_gantt import host

    assert host.call_timeout(DirectorySessionPersistence(Path("."))) > host.HOST_CALL_TIMEOUT_S * 10


@pytest.mark.parametrize("said", [0.1, True, "600", None, float("nan")])
def test_a_timeout_a_host_object_says_is_taken_only_when_longer_and_a_number(said: Any) -> None:
    from dsh_task_gantt import host

    class Service:
        call_timeout_s = said

    assert host.call_timeout(Service(), 1.0) == 1.0


def test_a_timeout_property_that_raises_is_the_default() -> None:
    from dsh_task_gantt import host

    class Service:
        @property
        def call_timeout_s(self) -> float:
            raise RuntimeError("no")

    assert host.call_timeout(Service(), 1.0) == 1.0
