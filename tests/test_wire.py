"""The timeline on the wire: reused bytes equal a fresh serialisation, and a client that
applies each ``?since=`` answer to its copy holds exactly the full answer.

Three sources: the pure timeline over hand-made folds (a Hypothesis property over
random appends, orders, duplicates and hostile text), the routes through ``apply(ctx)``
with an in-memory persistence that is appended to step by step (every kind of append,
one at a time), and the embedded host over real zstd logs in the real layout that a
``LiveTeam`` keeps appending to.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from dsh_task_gantt import wire
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec, generate_team
from dsh_task_gantt.plugin import apply
from dsh_task_gantt.timeline import build_timeline, clear_memos
from tests.kit import foldkit as K
from tests.kit.fakehost import (
    FakeConnection,
    FakeContext,
    FakePersistence,
    FakeWebServer,
    ev,
    header,
)

PREFIX = "/plugins/dsh-task-gantt"
API = f"{PREFIX}/api/timeline"


def apply_answer(held: dict[str, Any] | None, answer: dict[str, Any]) -> dict[str, Any]:
    """What a client does with an answer to ``?since=``: the documented merge."""
    answer = dict(answer)
    delta = answer.pop("delta")
    if not delta["known"]:
        return answer
    assert held is not None
    lanes = {lane["id"]: lane for lane in held["lanes"]}
    lanes.update({lane["id"]: lane for lane in answer["lanes"]})
    tasks = {task["id"]: task for task in held["tasks"]}
    tasks.update({task["id"]: task for task in answer["tasks"]})
    answer["lanes"] = [lanes[i] for i in delta["laneIds"]]
    answer["tasks"] = [tasks[i] for i in delta["taskIds"]]
    return answer


# -- the encoder over the pure timeline ---------------------------------------------

MEMBERS = ("m-a", "m-b", "m-c")
texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=0, max_size=40
) | st.sampled_from(["<script>alert(1)</script>", '"}],"lanes":[', "\u202e\x00\\"])
steps = st.one_of(
    st.tuples(st.just("turn"), st.integers(0, 3)),
    st.tuples(st.just("message"), st.integers(0, 3), st.integers(0, 3), st.booleans(), texts),
    st.tuples(st.just("deliver"), st.integers(0, 50)),
    st.tuples(st.just("prompt"), texts),
    st.tuples(st.just("task"), st.integers(0, 4), st.sampled_from(["claim", "complete", "reopen"])),
    st.tuples(st.just("join"), st.integers(0, 2)),
    st.tuples(st.just("unreadable"), st.integers(0, 2)),
    st.tuples(
        st.just("same"),
    ),
)


class FoldTeam:
    """A team of foldkit logs that steps append to (times only move forward)."""

    def __init__(self) -> None:
        self.lead = K.Log()
        self.logs: dict[str, K.Log] = {}
        self.unreadable: set[str] = set()
        self.t = 0
        self.pending: list[tuple[str, str]] = []
        self.tasks: dict[str, tuple[int, str, str | None]] = {}
        self.n = 0

    def ids(self) -> list[str]:
        return [K.LEAD, *self.logs]

    def step(self, op: tuple[Any, ...]) -> None:
        self.t += 100
        self.n += 1
        kind, *args = op
        people = self.ids()
        if kind == "turn":
            who = people[args[0] % len(people)]
            log = self.lead if who == K.LEAD else self.logs[who]
            log.turn(f"t{self.n}", self.t, self.t + 50)
        elif kind == "message":
            sender, target = people[args[0] % len(people)], people[args[1] % len(people)]
            mid = f"msg-{self.n}"
            self.lead.queued(mid, sender, target, args[3], self.t)
            if args[2]:
                self.lead.delivered(mid, target, self.t + 10)
            else:
                self.pending.append((mid, target))
        elif kind == "deliver" and self.pending:
            mid, target = self.pending.pop(args[0] % len(self.pending))
            self.lead.delivered(mid, target, self.t)
        elif kind == "prompt":
            self.lead.prompt(args[0], self.t, id_=f"p{self.n}")
        elif kind == "task":
            task_id = f"task-{args[0]}"
            revision, status, owner = self.tasks.get(task_id, (0, "pending", None))
            if revision == 0:
                self.lead.create_call(f"subject {args[0]}", self.t)
                status, owner = "pending", None
            else:
                actor = owner or (next(iter(self.logs)) if self.logs else K.LEAD)
                log = self.lead if actor == K.LEAD else self.logs[actor]
                log.update_call(task_id, revision, args[1], self.t)
                owner = actor if args[1] != "reopen" else None
                status = {"claim": "in_progress", "complete": "completed", "reopen": "pending"}[
                    args[1]
                ]
            self.tasks[task_id] = (revision + 1, status, owner)
            self.lead.task(task_id, revision + 1, status, self.t + 5, owner=owner)
        elif kind == "join":
            member = MEMBERS[args[0]]
            if member not in self.logs:
                self.lead.member(member, f"name-{member}", self.t)
                self.logs[member] = K.Log()
                self.logs[member].turn("first", self.t + 1)
        elif kind == "unreadable" and self.logs:
            self.unreadable.add(list(self.logs)[args[0] % len(self.logs)])

    def snapshot(self) -> Any:
        members = {
            m: K.source(m, None, channel="unreadable", error="read failed")
            if m in self.unreadable
            else K.source(m, log)
            for m, log in self.logs.items()
        }
        return K.team(K.source(K.LEAD, self.lead), members)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(steps, min_size=1, max_size=25), st.data())
def test_reused_bytes_equal_a_fresh_serialisation_and_deltas_rebuild_every_version(
    ops: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    team = FoldTeam()
    encoder = wire.Encoder()
    held: dict[str, dict[str, Any]] = {}  # etag -> the client's copy at that version
    for i, op in enumerate(ops):
        team.step(op)
        timeline = build_timeline(team.snapshot())
        etag = f'"v{i}"'
        encoded = encoder.encode("team", timeline, etag)
        assert encoded.body == orjson.dumps(timeline)
        current = orjson.loads(encoded.body)
        # A client that holds any earlier version (not only the last) catches up.
        if held:
            since = data.draw(st.sampled_from(sorted(held)))
            answer = orjson.loads(encoded.since(since))
            assert answer["delta"]["known"] is True
            assert apply_answer(copy.deepcopy(held[since]), answer) == current
        unknown = orjson.loads(encoded.since('"never-seen"'))
        assert unknown["delta"]["known"] is False
        assert apply_answer(None, unknown) == current
        held[etag] = current


def test_an_unchanged_lane_keeps_its_part_and_only_changed_parts_are_sent() -> None:
    team = FoldTeam()
    team.step(("join", 0))
    team.step(("join", 1))
    encoder = wire.Encoder()
    first = encoder.encode("team", build_timeline(team.snapshot()), '"a"')
    team.step(("turn", 1))  # the first member's lane only
    second = encoder.encode("team", build_timeline(team.snapshot()), '"b"')
    reused = [
        p.id for p, q in zip(first.lanes, second.lanes, strict=True) if p.generation == q.generation
    ]
    assert reused == ["lead", "m-b"]
    assert [p.generation for p in second.lanes if p.id == "m-a"] > [
        p.generation for p in first.lanes if p.id == "m-a"
    ]
    delta = orjson.loads(second.since('"a"'))
    assert [lane["id"] for lane in delta["lanes"]] == ["m-a"]
    assert delta["tasks"] == []
    assert delta["delta"]["laneIds"] == ["lead", "m-a", "m-b"]


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ('"abc123"', '"abc123"'),
        ("abc123", '"abc123"'),
        ('W/"abc"', '"abc"'),
        (' "x-y_z" ', '"x-y_z"'),
    ],
)
def test_since_accepts_an_etag_with_or_without_its_quotes(raw: str, parsed: str) -> None:
    assert wire.parse_since(raw) == parsed


@pytest.mark.parametrize("raw", ["", '""', '"a b"', "<script>", '"a"b"', "a" * 129, "é", '"'])
def test_a_malformed_since_is_refused(raw: str) -> None:
    assert wire.parse_since(raw) is None


# -- through apply(ctx): every kind of append, one at a time ----------------------------

LEAD, MATE, MATE2, NEWBIE = "lead-1", "mate-1", "mate-2", "mate-3"


class Host:
    """The plugin mounted with ``apply(ctx)`` over an in-memory persistence."""

    def __init__(self) -> None:
        self.persistence = FakePersistence()
        self.seqs: dict[str, int] = {}
        self.t = 10_000
        ctx = FakeContext(
            webServer=FakeWebServer(),
            sessionPersistence=self.persistence,
            connection=FakeConnection(),
        )
        apply(ctx)
        self.client = TestClient(ctx.get("webServer"), raise_server_exceptions=False)
        self.start(LEAD, None)
        self.start(MATE, LEAD)
        self.start(MATE2, LEAD)
        self.add(LEAD, "turn/start", {"turn": "L1"})
        for member, name in ((MATE, "verify"), (MATE2, "build")):
            self.add(LEAD, "team/member", self._member(member, name))
            self.add(member, "turn/start", {"turn": "x1"})
            self.add(member, "turn/end", {"turn": "x1", "reason": {"kind": "completed"}})

    @staticmethod
    def _member(member: str, name: str) -> dict[str, Any]:
        return {
            "version": 2,
            "teamId": LEAD,
            "member": {"id": member, "name": name, "context": "fresh", "phase": "active"},
        }

    def start(self, session: str, parent: str | None) -> None:
        self.persistence.put(session, header(session, parent=parent), [])
        self.seqs[session] = 0

    def add(self, session: str, etype: str, data: dict[str, Any]) -> None:
        self.t += 100
        self.persistence.append(session, [ev(etype, self.seqs[session], self.t, data)])
        self.seqs[session] += 1

    def queued(self, mid: str, sender: str, target: str) -> None:
        message = {"id": mid, "senderId": sender, "targetId": target}
        message["content"] = [{"type": "text", "text": f"body of {mid} <b>&</b>"}]  # type: ignore[assignment]
        self.add(LEAD, "team/message/queued", {"teamId": LEAD, "message": message})

    def delivered(self, mid: str, target: str) -> None:
        self.add(
            LEAD, "team/message/delivered", {"teamId": LEAD, "messageId": mid, "targetId": target}
        )

    def task(self, actor: str, revision: int, status: str, owner: str | None) -> None:
        if revision == 1:
            args = {"subject": "Write it", "description": "d", "blocked_by": [], "write_scopes": []}
            name = "team_task_create"
        else:
            action = {"in_progress": "claim", "completed": "complete", "pending": "reopen"}[status]
            args = {"task_id": "task-1", "expected_revision": revision - 1, "action": action}
            name = "team_task_update"
        call = {"turn": 1, "step": 1, "callId": f"c{self.t}", "name": name}
        self.add(actor, "tool/call", {**call, "arguments": orjson.dumps(args).decode()})
        task: dict[str, Any] = {
            "id": "task-1",
            "revision": revision,
            "subject": "Write it",
            "description": "d",
            "status": status,
            "blockedBy": [],
            "writeScopes": [],
        }
        if owner:
            task["ownerId"] = owner
        self.add(LEAD, "team/task", {"version": 2, "teamId": LEAD, "task": task})

    def get(self, **params: str) -> Any:
        return self.client.get(API, params={"session": LEAD, **params})

    def fresh_get(self) -> Any:
        """The same logs through a newly mounted plugin, the timeline's memos emptied:
        nothing kept from before."""
        clear_memos()
        ctx = FakeContext(
            webServer=FakeWebServer(),
            sessionPersistence=self.persistence,
            connection=FakeConnection(),
        )
        apply(ctx)
        client = TestClient(ctx.get("webServer"), raise_server_exceptions=False)
        return client.get(API, params={"session": LEAD})


APPENDS: list[tuple[str, Any]] = [
    ("a turn", lambda h: h.add(MATE, "turn/start", {"turn": "x2"})),
    ("a message on two lanes", lambda h: (h.queued("m1", LEAD, MATE), h.delivered("m1", MATE))),
    ("a pending message", lambda h: h.queued("m2", MATE, MATE2)),
    ("its delivery", lambda h: h.delivered("m2", MATE2)),
    (
        "a human prompt",
        lambda h: h.add(
            LEAD,
            "user/message",
            {
                "id": "u1",
                "role": "user",
                "content": [{"type": "text", "text": "status?"}],
                "source": {"kind": "user"},
            },
        ),
    ),
    ("a task created", lambda h: h.task(LEAD, 1, "pending", None)),
    ("a task claimed", lambda h: h.task(MATE, 2, "in_progress", MATE)),
    ("a task completed", lambda h: h.task(MATE, 3, "completed", MATE)),
    ("a task reopened", lambda h: h.task(LEAD, 4, "pending", None)),
    (
        "a member joining",
        lambda h: (
            h.start(NEWBIE, LEAD),
            h.add(LEAD, "team/member", Host._member(NEWBIE, "late")),
            h.add(NEWBIE, "turn/start", {"turn": "n1"}),
        ),
    ),
    (
        "a lane becoming unreadable",
        lambda h: (h.persistence.fail_read.add(MATE2), h.add(MATE2, "turn/start", {"turn": "x3"})),
    ),
]


def test_a_client_applying_each_delta_holds_the_full_answer_after_every_kind_of_append() -> None:
    host = Host()
    first = host.get()
    assert first.status_code == 200
    held = first.json()
    etag = first.headers["etag"]
    seen_partial = False
    for what, append in APPENDS:
        append(host)
        answer = host.get(since=etag)
        full = host.get()
        assert answer.status_code == 200, what
        assert answer.headers["etag"] == full.headers["etag"] != etag, what
        delta = answer.json()
        assert delta["delta"]["known"] is True, what
        assert delta["delta"]["since"] == etag
        held = apply_answer(held, delta)
        assert held == full.json(), what
        # The full answer, assembled from kept bytes, is what a fresh build says (but
        # for the time it was built) and orjson's own serialisation of it.
        fresh = host.fresh_get()
        assert fresh.headers["etag"] == full.headers["etag"], what
        assert {**fresh.json(), "generatedAt": 0} == {**full.json(), "generatedAt": 0}, what
        assert full.content == orjson.dumps(full.json()), what
        sent = {lane["id"] for lane in delta["lanes"]}
        seen_partial = seen_partial or len(sent) < len(held["lanes"])
        etag = full.headers["etag"]
    assert seen_partial  # not every answer was the whole team
    mate2 = next(lane for lane in held["lanes"] if lane["id"] == MATE2)
    assert mate2["channel"] == "unreadable" and held["source"] == "partial"
    assert held["tasks"][0]["status"] == "pending" and len(held["tasks"][0]["history"]) == 4
    assert any(lane["id"] == NEWBIE for lane in held["lanes"])


def test_a_turn_on_one_member_sends_that_lane_alone() -> None:
    host = Host()
    etag = host.get().headers["etag"]
    host.add(MATE, "turn/start", {"turn": "x2"})
    delta = host.get(since=etag).json()
    assert [lane["id"] for lane in delta["lanes"]] == [MATE]
    assert delta["tasks"] == []
    assert delta["delta"]["laneIds"] == ["lead", MATE, MATE2]


def test_since_the_current_version_sends_no_lane_and_if_none_match_still_wins() -> None:
    host = Host()
    etag = host.get().headers["etag"]
    same = host.get(since=etag)
    assert same.status_code == 200
    assert same.json()["lanes"] == [] and same.json()["delta"]["known"] is True
    cached = host.client.get(
        API, params={"session": LEAD, "since": etag}, headers={"If-None-Match": etag}
    )
    assert cached.status_code == 304 and cached.content == b""


def test_an_unknown_version_gets_the_full_answer_and_says_so() -> None:
    host = Host()
    full = host.get()
    answer = host.get(since='"0123456789abcdef0123456789abcdef"')
    assert answer.status_code == 200
    data = answer.json()
    assert data.pop("delta") == {
        "since": '"0123456789abcdef0123456789abcdef"',
        "known": False,
        "laneIds": [lane["id"] for lane in full.json()["lanes"]],
        "taskIds": [],
    }
    assert data == full.json()


def test_the_default_answer_is_the_plain_timeline_in_orjsons_compact_form() -> None:
    host = Host()
    host.get()
    host.add(MATE, "turn/start", {"turn": "x2"})  # the next body reuses the lead's bytes
    answer = host.get()
    assert "delta" not in answer.json()
    assert answer.content == orjson.dumps(answer.json())


@pytest.mark.parametrize("since", ["", "a b", "<script>", '"x"y"', "z" * 200])
def test_a_malformed_since_is_400_before_the_session_is_looked_up(since: str) -> None:
    host = Host()
    for session in (LEAD, "nobody"):
        answer = host.client.get(API, params={"session": session, "since": since})
        assert answer.status_code == 400, since
        assert "since" in answer.json()["error"]


# -- the embedded host over real zstd logs, appended to by a LiveTeam ---------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TeamSpec]:
    root = tmp_path_factory.mktemp("wire") / "sessions"
    return root, generate_team(root, seed=11, scale="small", shape="full", name="wire")


def test_real_logs_reused_bytes_equal_a_fresh_build_and_deltas_follow_live_appends(
    generated: tuple[Path, TeamSpec], tmp_path: Path
) -> None:
    source, spec = generated
    root = tmp_path / "sessions"
    shutil.copytree(source, root)
    spec.dump(tmp_path / "spec.json")
    live = LiveTeam(root, TeamSpec.load(tmp_path / "spec.json", root=str(root)))
    client = TestClient(
        EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)
    )
    params = {"session": spec.lead_id}
    first = client.get(API, params=params)
    held, etag = first.json(), first.headers["etag"]
    now = spec.last_event_time
    kinds: set[str] = set()
    for _ in range(12):
        now += 2500
        report = live.tick(now)
        kinds.update(a.split()[0] for a in report.activities)
        answer = client.get(API, params={**params, "since": etag})
        full = client.get(API, params=params)
        assert answer.headers["etag"] == full.headers["etag"]
        held = apply_answer(held, answer.json())
        assert held == full.json()
        # The reused bytes are what a fresh process serialises for the same logs (but
        # for the time it built them).
        command = [sys.executable, "-m", "dsh_task_gantt.cli", "timeline"]
        fresh = subprocess.run(
            [*command, "--sessions-root", str(root), "--session", spec.lead_id],
            capture_output=True,
            check=True,
            timeout=60,
        )
        fresh_data = {**orjson.loads(fresh.stdout), "generatedAt": 0}
        assert fresh_data == {**full.json(), "generatedAt": 0}
        assert full.content == orjson.dumps(full.json())
        etag = full.headers["etag"]
    assert {"lead-step", "message"} <= kinds


# -- what is reused between builds follows what it was drawn from ---------------------


def test_a_message_drawn_again_after_its_sender_is_renamed_carries_the_new_name() -> None:
    lead = K.Log().member("m-a", "first-name", 0).turn("t1", 10, 20)
    lead.queued("msg-1", "m-a", K.LEAD, "hello", 30).delivered("msg-1", K.LEAD, 40)
    mate = K.Log().turn("x1", 5, 50)
    before = build_timeline(K.team(K.source(K.LEAD, lead), {"m-a": K.source("m-a", mate)}))
    lead.member("m-a", "second-name", 60)  # the same member, renamed
    after = build_timeline(K.team(K.source(K.LEAD, lead), {"m-a": K.source("m-a", mate)}))
    for timeline, name in ((before, "first-name"), (after, "second-name")):
        for lane_id in ("lead", "m-a"):
            (mark,) = K.spans(timeline, lane_id, "message")
            assert mark["from"]["name"] == name


def test_another_teams_messages_are_counted_in_the_notes_at_every_build() -> None:
    lead = K.Log().member("m-a", "mate", 0).turn("t1", 10, 20)
    lead.queued("msg-1", K.LEAD, "m-a", "ours", 30).delivered("msg-1", "m-a", 40)
    foreign = {"id": "msg-2", "senderId": "x", "targetId": "y", "content": []}
    lead.add("team/message/queued", {"teamId": "other-team", "message": foreign}, 50)
    snapshot = K.team(K.source(K.LEAD, lead), {"m-a": K.source("m-a", K.Log())})
    first, again = build_timeline(snapshot), build_timeline(snapshot)  # again: all kept
    for timeline in (first, again):
        assert any(
            "1 team record of another team (teamId other-team)" in n for n in timeline["notes"]
        )
        assert [s["id"] for s in K.spans(timeline, "lead", "message")] == ["msg-1"]
    assert first == again


def test_the_encoder_keeps_at_most_its_versions_and_teams_and_forgets_a_team() -> None:
    """Filling the encoder past its limits keeps its size: VERSIONS_KEPT versions for
    ``since``, TEAMS_KEPT teams' parts; a forgotten team's parts are gone."""
    from dsh_task_gantt import wire

    encoder = wire.Encoder()
    lanes = [{"id": "lead", "spans": []}]
    for n in range(wire.VERSIONS_KEPT + 40):
        encoder.encode("team-a", {"lanes": lanes, "n": n}, f'"v{n}"')
    assert len(encoder._history) == wire.VERSIONS_KEPT
    assert '"v0"' not in encoder._history and f'"v{wire.VERSIONS_KEPT + 39}"' in encoder._history
    for n in range(wire.TEAMS_KEPT + 10):
        encoder.encode(f"team-{n}", {"lanes": lanes}, f'"t{n}"')
    assert len(encoder._teams) == wire.TEAMS_KEPT
    assert len(encoder._last) == wire.TEAMS_KEPT
    encoder.forget(f"team-{wire.TEAMS_KEPT + 9}")
    assert f"team-{wire.TEAMS_KEPT + 9}" not in encoder._teams
    assert f"team-{wire.TEAMS_KEPT + 9}" not in encoder._last
    assert len(encoder._teams) == wire.TEAMS_KEPT - 1


def test_a_list_of_the_very_same_tasks_keeps_their_parts_and_one_moved_is_sent_alone() -> None:
    """A poll that moved no task holds a list of the very same task dicts: their parts
    (bytes and generations) are the last encoding's, and a ``since`` of it sends no task;
    a task replaced (a move) gets a new part and is the one task sent. Every body is
    a fresh serialisation's."""
    lanes = [{"id": "lead", "spans": []}]
    tasks = [{"id": f"t{n}", "status": "pending", "history": []} for n in range(5)]
    encoder = wire.Encoder()
    first = encoder.encode("team", {"lanes": lanes, "tasks": tasks}, '"a"')
    again = encoder.encode("team", {"lanes": list(lanes), "tasks": list(tasks)}, '"b"')
    assert all(p is q for p, q in zip(first.tasks, again.tasks, strict=True))
    assert orjson.loads(again.since('"a"'))["tasks"] == []
    moved = list(tasks)
    moved[2] = {**tasks[2], "status": "in_progress"}
    data = {"lanes": lanes, "tasks": moved}
    third = encoder.encode("team", data, '"c"')
    assert third.body == orjson.dumps(data)
    assert [p is q for p, q in zip(again.tasks, third.tasks, strict=True)] == [
        True, True, False, True, True
    ]  # fmt: skip
    assert [t["id"] for t in orjson.loads(third.since('"b"'))["tasks"]] == ["t2"]
    # Fewer tasks (or not a list any more): no stale parts.
    fewer = {"lanes": lanes, "tasks": moved[:3]}
    assert encoder.encode("team", fewer, '"d"').body == orjson.dumps(fewer)
    plain = {"lanes": lanes, "tasks": None}
    assert encoder.encode("team", plain, '"e"').body == orjson.dumps(plain)
    assert encoder.encode("team", data, '"f"').body == orjson.dumps(data)


def test_since_another_teams_version_or_one_before_a_forget_is_answered_in_full() -> None:
    """A version is its team and a mark in the generations: an etag of another team is
    not a base for this one's delta (the full answer, saying so), and after the encoder
    forgot the team every lane counts as changed since the old version."""
    team = FoldTeam()
    team.step(("join", 0))
    encoder = wire.Encoder()
    timeline = build_timeline(team.snapshot())
    encoder.encode("other", timeline, '"o"')
    first = encoder.encode("team", timeline, '"a"')
    answer = orjson.loads(first.since('"o"'))
    assert answer["delta"]["known"] is False
    assert apply_answer(None, answer) == orjson.loads(first.body)
    encoder.forget("team")
    again = encoder.encode("team", timeline, '"b"')
    delta = orjson.loads(again.since('"a"'))
    assert delta["delta"]["known"] is True
    assert [lane["id"] for lane in delta["lanes"]] == [lane["id"] for lane in timeline["lanes"]]


def test_an_answered_body_is_not_kept_by_the_encoder() -> None:
    """The full answer and each lane's bytes are made for the answer and let go: after
    a day the body is tens of megabytes, and kept they were two more copies of the
    timeline that grew with every append."""
    import gc
    import tracemalloc

    lanes = [
        {"id": f"m-{n}", "spans": [{"id": f"t-{n}-{i}", "label": "x" * 200} for i in range(400)]}
        for n in range(5)
    ]
    data = {"version": 1, "lanes": lanes, "tasks": []}
    encoder = wire.Encoder()
    encoded = encoder.encode("team", data, '"a"')
    gc.collect()
    tracing = tracemalloc.is_tracing()  # pytest may have started it: count the difference
    tracemalloc.start()
    try:
        before, _peak = tracemalloc.get_traced_memory()
        body = encoded.body
        delta = encoder.encode("team", data, '"b"').since('"a"')
        size = len(body)
        whole = body == orjson.dumps(data)
        known = orjson.loads(delta)["delta"]["known"]
        del body, delta
        gc.collect()
        after, _peak = tracemalloc.get_traced_memory()
    finally:
        if not tracing:
            tracemalloc.stop()
    held = after - before
    assert whole
    assert known is True
    # The encoder, its parts and the timeline object hold less than a tenth of the body.
    assert size > 400_000
    assert held < size // 10
