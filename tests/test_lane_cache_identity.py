"""A team read through the lane cache is byte for byte the team read cold.

Each case: a server reads the logs and writes its cache; the logs then change (or
not); a restarted server reads them through that cache, and a cold server (no
cache) reads the same bytes. Their timeline JSON must be identical, and the cache
must have been used exactly when the logs only grew (else it would test nothing).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_task_gantt import host
from dsh_task_gantt.fixturegen import LiveTeam
from dsh_task_gantt.fixturegen.scenario import generate_team
from dsh_task_gantt.lane_cache import LaneCacheStore
from dsh_task_gantt.logs.persistence import DirectorySessionPersistence
from dsh_task_gantt.service import TimelineService
from tests.kit.fakehost import FakeAgent, FakeAgents, FakeSession, ev, header
from tests.kit.lanecache import read_team, store_in, timeline_body
from tests.kit.logwriting import event, frame, line

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"


def logs_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("session*.jsonl*") if p.is_file())


def session_ids(root: Path) -> list[str]:
    rows = asyncio.run(DirectorySessionPersistence(root).list())
    return sorted(str(r["id"]) for r in rows)


@dataclass(frozen=True)
class Restart:
    resumed: int  # lanes resumed from the cache
    writes: int  # entries written when it stopped


def restarted_equals_cold(root: Path, cache: Path, session_id: str) -> Restart:
    """Read through the cache and cold; assert the same bytes."""
    store = store_in(cache)
    cached, resumed = read_team(root, session_id, store)
    assert cached == timeline_body(root, session_id, None)
    return Restart(resumed, store.writes)


Story = tuple[Path, LiveTeam, str, int]


@pytest.fixture
def story(tmp_path: Path) -> Story:
    root = tmp_path / "sessions"
    spec = generate_team(root, seed=3, shape="story", name="cached", live=True)
    return root, LiveTeam(root, spec), spec.lead_id, spec.last_event_time


def test_an_unchanged_team_comes_whole_from_the_cache(story: Story, tmp_path: Path) -> None:
    root, _, lead, _ = story
    cache = tmp_path / "cache"
    timeline_body(root, lead, store_in(cache))
    lanes = len(logs_under(root))
    restart = restarted_equals_cold(root, cache, lead)
    assert restart.resumed == lanes
    assert restart.writes == 0  # nothing was read, so nothing new to keep


def test_appends_of_every_kind_read_through_the_cache_as_cold(story: Story, tmp_path: Path) -> None:
    """The live generator appends turns, steps, messages on two lanes (queued, then
    delivered), human prompts and task transitions: each restart reads only them."""
    root, live, lead, now = story
    cache = tmp_path / "cache"
    timeline_body(root, lead, store_in(cache))
    kinds: set[str] = set()
    for round_ in range(6):
        for _ in range(5):
            now += 2_500
            kinds.update(a.split(" ")[0] for a in live.tick(now).activities)
        restart = restarted_equals_cold(root, cache, lead)
        assert restart.resumed >= 1, f"round {round_}: the cache was not used"
        assert restart.writes >= 1, f"round {round_}: what was appended was not kept"
    assert {"claim", "message"} <= kinds, kinds


def test_a_member_joining_after_the_cache_was_written(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    spec = generate_team(root, seed=9, shape="story", name="joined", live=True)
    cache = tmp_path / "cache"
    late = [m for m in spec.members[1:] if m.rel_path is not None][-1]
    moved = tmp_path / "later"
    shutil.move(root / late.rel_path, moved)  # type: ignore[operator]
    timeline_body(root, spec.lead_id, store_in(cache))
    shutil.move(moved, root / late.rel_path)  # type: ignore[operator]
    restart = restarted_equals_cold(root, cache, spec.lead_id)
    assert 1 <= restart.resumed < len(logs_under(root))


@pytest.mark.parametrize("session_id", session_ids(FIXTURES))
def test_the_fixtures_read_through_the_cache_as_cold(session_id: str, tmp_path: Path) -> None:
    """Every bundled team (older formats, plain logs, forks, hostile text, damaged
    logs), requested by each of its sessions: half of every log first, then the rest."""
    root = tmp_path / "sessions"
    shutil.copytree(FIXTURES, root)
    full = {p: p.read_bytes() for p in logs_under(root)}
    for path, data in full.items():
        path.write_bytes(data[: len(data) // 2])
    cache = tmp_path / "cache"
    restarted_equals_cold(root, cache, session_id)
    for path, data in full.items():
        with open(path, "ab") as f:
            f.write(data[len(data) // 2 :])
    restarted_equals_cold(root, cache, session_id)
    restart = restarted_equals_cold(root, cache, session_id)
    assert restart.resumed >= 1


def turn_frame(turn: str, time: int) -> bytes:
    """One appended write: a frame holding a turn start (seq far past the team's)."""
    return frame(line(event(999_999, "turn/start", {"turn": turn}, time)))


def lead_log(root: Path, lead: str) -> Path:
    return next(p for p in logs_under(root) if p.parent.name == lead)


def test_a_log_rewritten_in_place_is_read_again(story: Story, tmp_path: Path) -> None:
    root, _, lead, _ = story
    cache = tmp_path / "cache"
    timeline_body(root, lead, store_in(cache))
    path = lead_log(root, lead)
    inode = path.stat().st_ino
    other = tmp_path / "other"
    other_lead = generate_team(other, seed=4, shape="story", name="cached", live=True).lead_id
    replacement = lead_log(other, other_lead).read_bytes()
    with open(path, "r+b") as f:  # the same file, other bytes (longer: it "grew")
        f.write(replacement + path.read_bytes()[len(replacement) :])
    assert path.stat().st_ino == inode
    restart = restarted_equals_cold(root, cache, lead)
    assert restart.resumed == len(logs_under(root)) - 1  # every lane but the rewritten one


def test_a_log_whose_last_frame_was_rewritten_is_read_again(story: Story, tmp_path: Path) -> None:
    root, _, lead, _ = story
    cache = tmp_path / "cache"
    path = lead_log(root, lead)
    last = turn_frame("first", 1)
    with open(path, "ab") as f:
        f.write(last)
    timeline_body(root, lead, store_in(cache))
    other = turn_frame("other", 2)
    assert len(other) == len(last)
    with open(path, "r+b") as f:  # the same length, the last write done again otherwise
        f.seek(-len(last), os.SEEK_END)
        f.write(other)
    restart = restarted_equals_cold(root, cache, lead)
    assert restart.resumed == len(logs_under(root)) - 1
    assert b'"other"' in timeline_body(root, lead, None)


def test_a_replaced_log_is_read_again(story: Story, tmp_path: Path) -> None:
    root, live, lead, now = story
    cache = tmp_path / "cache"
    timeline_body(root, lead, store_in(cache))
    path = lead_log(root, lead)
    copy = path.with_name("copy.tmp")
    copy.write_bytes(path.read_bytes())  # the same bytes under a new inode
    os.replace(copy, path)
    live.tick(now + 2_500)
    restart = restarted_equals_cold(root, cache, lead)
    assert restart.resumed == len(logs_under(root)) - 1


def test_a_truncated_log_is_read_again(story: Story, tmp_path: Path) -> None:
    root, _, lead, _ = story
    cache = tmp_path / "cache"
    timeline_body(root, lead, store_in(cache))
    path = lead_log(root, lead)
    os.truncate(path, path.stat().st_size // 2)
    restart = restarted_equals_cold(root, cache, lead)
    assert restart.resumed == len(logs_under(root)) - 1


def test_a_torn_tail_is_left_for_later_and_then_read(story: Story, tmp_path: Path) -> None:
    root, _, lead, _ = story
    cache = tmp_path / "cache"
    path = lead_log(root, lead)
    more = turn_frame("late", 1)
    with open(path, "ab") as f:
        f.write(more[: len(more) // 2])  # a write still in progress
    timeline_body(root, lead, store_in(cache))
    restarted_equals_cold(root, cache, lead)
    with open(path, "ab") as f:
        f.write(more[len(more) // 2 :])
    restart = restarted_equals_cold(root, cache, lead)
    assert restart.resumed == len(logs_under(root))
    assert b'"late"' in timeline_body(root, lead, None)


@pytest.mark.parametrize(
    "damage",
    ["flip a byte", "truncate", "empty", "garbage", "another format", "another session"],
)
def test_a_damaged_or_foreign_cache_entry_is_ignored(
    story: Story, tmp_path: Path, damage: str
) -> None:
    root, live, lead, now = story
    cache = tmp_path / "cache"
    timeline_body(root, lead, store_in(cache))
    entries = sorted(cache.glob("*.lane"))
    assert len(entries) == len(logs_under(root))
    for entry in entries:
        data = entry.read_bytes()
        if damage == "flip a byte":
            data = data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:]
        elif damage == "truncate":
            data = data[: len(data) // 2]
        elif damage == "empty":
            data = b""
        elif damage == "garbage":
            data = os.urandom(4096)
        elif damage == "another format":
            data = data.replace(b'"format":"', b'"format":"0', 1)
        else:
            data = data.replace(b'"session":"', b'"session":"x', 1)
        entry.write_bytes(data)
    live.tick(now + 2_500)
    restart = restarted_equals_cold(root, cache, lead)
    assert restart.resumed == 0


def prefixes(data: bytes, cuts: list[float]) -> list[int]:
    return [int(len(data) * c) for c in sorted(cuts)] + [len(data)]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=3),
    plain=st.booleans(),
)
def test_any_split_of_the_appends_reads_as_cold(
    cuts: list[float], plain: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every log written in steps cut at arbitrary bytes (inside a frame or a line, as a
    writer in progress leaves it), a restarted server after each step: each step, and
    the end, read as a cold read of the same bytes."""
    base = tmp_path_factory.mktemp("split")
    root = base / "sessions"
    spec = generate_team(root, seed=5, shape="pair", name="split", compress=not plain)
    full = {p: p.read_bytes() for p in logs_under(root)}
    for path in full:
        path.write_bytes(b"")
    cache = base / "cache"
    written = dict.fromkeys(full, 0)
    for step in range(len(cuts) + 1):
        for path, data in full.items():
            upto = prefixes(data, cuts)[step]
            with open(path, "ab") as f:
                f.write(data[written[path] : upto])
            written[path] = max(written[path], upto)
        restarted_equals_cold(root, cache, spec.lead_id)


def test_a_live_agent_is_read_from_its_snapshot_not_from_the_cache(tmp_path: Path) -> None:
    """The live snapshot disagrees with the disk log on purpose: a lane whose agent is
    live is read live, as without a cache; the cache serves only the persisted lanes."""
    root = tmp_path / "sessions"
    spec = generate_team(root, seed=6, shape="pair", name="live")
    cache = tmp_path / "cache"
    timeline_body(root, spec.lead_id, store_in(cache))
    agents = FakeAgents()
    head = header(spec.lead_id)
    agents.add(
        FakeAgent(
            spec.lead_id,
            FakeSession(head, [ev("turn/start", 0, 10_000, {"turn": "only-in-the-snapshot"})]),
            status="running",
        )
    )

    def read(store: LaneCacheStore | None) -> tuple[bytes, int]:
        persistence = DirectorySessionPersistence(root, lane_cache=store)
        services = {host.SESSION_PERSISTENCE: persistence, host.AGENTS: agents}
        service = TimelineService(services.get, clock=lambda: 0)
        result = asyncio.run(service.timeline(spec.lead_id))
        assert result is not None
        return result.body, persistence.resumed

    cached, resumed = read(store_in(cache))
    assert cached == read(None)[0]
    assert b"only-in-the-snapshot" in cached and b'"channel":"snapshot"' in cached
    assert resumed == len(logs_under(root)) - 1  # every member lane, not the live lead


# ``None``: an agent that reports no status; only the read's own "a live agent was
# found" says the lane is this process's view.
@pytest.mark.parametrize("status", ["idle", "stopped", None])
def test_a_lane_read_beside_a_live_agent_is_not_kept_for_another_process(
    tmp_path: Path, status: str | None
) -> None:
    """The live agent answers with an empty snapshot, so its lane is read from the log,
    with the agent's status and a note about the snapshot: that is this process's view
    of a live agent, which a restarted server (no agent now) must not show."""
    root = tmp_path / "sessions"
    spec = generate_team(root, seed=6, shape="pair", name="live")
    cache = tmp_path / "cache"
    agents = FakeAgents()
    agents.add(FakeAgent(spec.lead_id, FakeSession(header(spec.lead_id), []), status=status))
    store = store_in(cache)
    persistence = DirectorySessionPersistence(root, lane_cache=store)
    services = {host.SESSION_PERSISTENCE: persistence, host.AGENTS: agents}
    live = asyncio.run(TimelineService(services.get, clock=lambda: 0).timeline(spec.lead_id))
    store.close()
    assert live is not None and b"the live snapshot was empty" in live.body
    assert store.writes == len(logs_under(root)) - 1  # every member lane, not the lead

    restarted = restarted_equals_cold(root, cache, spec.lead_id)
    assert restarted.resumed == len(logs_under(root)) - 1
