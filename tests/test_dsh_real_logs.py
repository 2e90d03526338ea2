"""Real logs from real DSH: DSH runs headless against the scripted model
(tests/kit/scripted_model.py, which says the story) and the timeline of what it wrote is
checked against what the script made happen.

- npm's ``@deepseek-ai/dsh@0.1.0-rc.8`` (cached install, tests/kit/dsh_npm.py) plays the
  solo story: a lead and a subagent child. No DSH on npm runs agent teams
  (``NO_TEAM_FROM_NPM`` says exactly why).
- A DSH 0.1.1-rc.2 tree built from DSH's repository, when ``DSH_TASK_GANTT_DSH_TREE``
  points to one, plays the team story with the patch layer of HOST §9: a lead, alice
  (fresh), bob (forked), a subagent child, two dependent tasks, a claim, a reassignment,
  a release, an assignment, messages both ways.

The logs are written per run into a temporary DSH_HOME, never committed. Skipped (saying
why) only when npm or its registry is unavailable, or no built tree is pointed to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fold.text import preview
from tests.kit import scripted_model as story
from tests.kit.dsh_headless import (
    NO_TEAM_FROM_NPM,
    SOLO_PATCH,
    TREE_ENV,
    HeadlessRun,
    built_tree,
    run_headless,
    team_patch,
)
from tests.kit.dsh_npm import DshInstall, RegistryUnavailable, install_dsh
from tests.kit.scripted_model import Ledger, scripted_model


@dataclass(frozen=True)
class Played:
    """One headless run and the timeline of what it wrote."""

    run: HeadlessRun
    ledger: Ledger
    timeline: dict[str, Any]
    #: Each agent of the story -> its session id (from DSH's request headers).
    sessions: dict[str, str]

    def lane(self, agent: str) -> dict[str, Any]:
        lane_id = "lead" if agent == "lead" else self.sessions[agent]
        [found] = [lane for lane in self.timeline["lanes"] if lane["id"] == lane_id]
        return dict(found)

    def marks(self, agent: str, text: str) -> list[dict[str, Any]]:
        """The message marks on ``agent``'s lane whose preview is ``text``'s."""
        return [
            s
            for s in self.lane(agent)["spans"]
            if s["kind"] == "message" and s["preview"] == preview(text)
        ]


@pytest.fixture(scope="module")
def dsh() -> DshInstall:
    try:
        return install_dsh()
    except RegistryUnavailable as why:
        pytest.skip(f"DSH cannot be installed from npm here: {why}")


def _play(
    tmp: Path, node: Path, cli: Path, env: dict[str, str], prompt: str, patch: str, plot: Any
) -> Iterator[Played]:
    with scripted_model(plot) as model:
        run = run_headless(node, cli, env, tmp / "home", prompt, patch, model)
    assert run.returncode == 0, run.stderr[-3000:]
    assert model.ledger.failures == []
    sessions = {}
    for agent, ids in model.ledger.sessions.items():
        if agent != "other":  # the title model's calls carry the lead's id
            assert len(ids) == 1, (agent, ids)
            sessions[agent] = next(iter(ids))
    lead = run.lead_session({sessions["lead"]})
    result = asyncio.run(EmbeddedHost(run.sessions_root).plugin.service.timeline(lead))
    assert result is not None
    print(f"headless DSH ran {run.seconds:.1f} s")  # the report's figure (pytest -s)
    yield Played(run, model.ledger, orjson.loads(result.body), sessions)


@pytest.fixture(scope="module")
def solo(dsh: DshInstall, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """npm's rc.8 playing the solo story (a lead and a subagent child)."""
    yield from _play(
        tmp_path_factory.mktemp("dsh-solo"),
        dsh.node,
        dsh.cli,
        dsh.env(),
        story.SOLO_PROMPT,
        SOLO_PATCH,
        story.SOLO_STORY,
    )


@pytest.fixture(scope="module")
def team(dsh: DshInstall, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """A built DSH 0.1.1-rc.2 playing the team story."""
    tree = built_tree()
    if tree is None:
        pytest.skip(f"{TREE_ENV} names no built DSH tree; {NO_TEAM_FROM_NPM}")
    assert (tree / "apps" / "cli" / "lib" / "bin.js").is_file(), f"{TREE_ENV}: {tree} is not built"
    yield from _play(
        tmp_path_factory.mktemp("dsh-team"),
        dsh.node,
        tree / "apps" / "cli" / "lib" / "bin.js",
        dsh.env(),
        story.HUMAN_PROMPT,
        team_patch(tree),
        story.STORY,
    )


def _prompts(played: Played) -> list[tuple[str, str]]:
    return [
        (lane["name"], s["preview"])
        for lane in played.timeline["lanes"]
        for s in lane["spans"]
        if s["kind"] == "user-prompt"
    ]


def _brief_is_the_leads_message(played: Played, agent: str, text: str) -> None:
    [received] = played.marks(agent, text)
    assert received["from"]["kind"] == "lead" and received["direction"] == "incoming"
    assert received["to"]["id"] == played.sessions[agent]
    [sent] = [m for m in played.marks("lead", text) if m["id"] == received["id"]]
    assert sent["direction"] == "outgoing" and sent["to"]["id"] == played.sessions[agent]


def _tokens_match_the_ledger(played: Played) -> None:
    usage = played.ledger.usage_by_agent()
    total = dict.fromkeys(usage["lead"], 0)
    for agent in played.sessions:
        lane = played.lane(agent)
        assert lane["tokens"] == usage[agent], agent
        assert lane["model"]["model"] in played.ledger.models
        for k, v in lane["tokens"].items():
            total[k] += v
    assert played.timeline["tokens"] == total


# The solo story, npm's DSH 0.1.0-rc.8 -----------------------------------------------


def test_solo_lanes_are_the_lead_and_its_subagent_child(solo: Played) -> None:
    lanes = solo.timeline["lanes"]
    assert [lane["id"] for lane in lanes] == ["lead", solo.sessions["child"]]
    assert [lane["label"] for lane in lanes] == [None, "Count input files"]
    assert solo.timeline["live"] is False and solo.timeline["source"] == "log"
    for lane in lanes:
        turns = [s for s in lane["spans"] if s["kind"] == "turn"]
        assert turns and all(t["end"] is not None for t in turns), lane["id"]


def test_solo_the_human_prompt_is_drawn_once_and_the_childs_brief_is_the_leads(
    solo: Played,
) -> None:
    assert _prompts(solo) == [("lead", preview(story.SOLO_PROMPT))]
    assert solo.timeline["diagnostics"]["humanPrompts"] == 1
    _brief_is_the_leads_message(solo, "child", story.CHILD_PROMPT)


def test_solo_tokens_are_what_the_model_reported(solo: Played) -> None:
    _tokens_match_the_ledger(solo)


# The team story, DSH 0.1.1-rc.2 built from its repository ----------------------------


def test_team_lanes_are_the_lead_two_teammates_and_the_child(team: Played) -> None:
    lanes = {lane["id"]: lane for lane in team.timeline["lanes"]}
    assert next(iter(lanes)) == "lead"
    assert set(lanes) == {"lead", *(team.sessions[a] for a in ("alice", "bob", "child"))}
    assert lanes[team.sessions["alice"]]["name"] == "alice"
    assert lanes[team.sessions["bob"]]["name"] == "bob"
    assert lanes[team.sessions["alice"]]["label"] == "Collects the data"
    assert lanes[team.sessions["child"]]["label"] == "Count input files"
    assert team.timeline["live"] is False and team.timeline["source"] == "log"
    for lane in lanes.values():
        turns = [s for s in lane["spans"] if s["kind"] == "turn"]
        assert turns and all(t["end"] is not None for t in turns), lane["name"]


def test_team_the_one_human_prompt_is_drawn_once_on_the_lead(team: Played) -> None:
    assert _prompts(team) == [("lead", preview(story.HUMAN_PROMPT))]
    assert team.timeline["diagnostics"]["humanPrompts"] == 1


def test_team_each_brief_is_the_leads_message_to_that_member(team: Played) -> None:
    task_a = team.ledger.task_ids["A"]
    _brief_is_the_leads_message(team, "alice", story.alice_brief(task_a))
    _brief_is_the_leads_message(team, "bob", story.bob_brief(task_a))
    _brief_is_the_leads_message(team, "child", story.CHILD_PROMPT)


def test_team_each_message_is_drawn_once_on_both_lanes(team: Played) -> None:
    """Sender's lane outgoing, recipient's incoming, once each (alice's inbox got one
    of them spliced twice in some runs: one message all the same)."""
    a, b = team.ledger.task_ids["A"], team.ledger.task_ids["B"]
    sent = [
        ("lead", "bob", story.msg_a_to_bob(a)),
        ("lead", "alice", story.msg_a_to_alice(a)),
        ("bob", "lead", story.MSG_BOB_DONE_A),
        ("lead", "alice", story.msg_b_to_alice(b)),
        ("alice", "lead", story.MSG_ALICE_RELEASED),
        ("lead", "bob", story.msg_b_to_bob(b)),
        ("bob", "lead", story.MSG_BOB_DONE_B),
    ]
    for sender, target, text in sent:
        [out] = team.marks(sender, text)
        [into] = team.marks(target, text)
        assert out["id"] == into["id"]
        assert (out["direction"], into["direction"]) == ("outgoing", "incoming")
        assert out["from"]["name"] == into["from"]["name"] == sender
        assert out["to"]["name"] == into["to"]["name"] == target
        assert out["deliveredAt"] is not None


def _history(team: Played, name: str) -> list[dict[str, Any]]:
    [task] = [t for t in team.timeline["tasks"] if t["id"] == team.ledger.task_ids[name]]
    return list(task["history"])


def test_team_every_task_revision_is_dated_and_made_by_its_actor(team: Played) -> None:
    a = _history(team, "A")
    assert [(h["revision"], h["status"], h["actor"]) for h in a] == [
        (1, "pending", "lead"),
        (2, "in_progress", "alice"),
        (3, "in_progress", "lead"),
        (4, "completed", "bob"),
    ]
    b = _history(team, "B")
    assert [(h["revision"], h["status"], h["actor"]) for h in b] == [
        (1, "pending", "lead"),
        (2, "in_progress", "alice"),
        (3, "pending", "alice"),
        (4, "in_progress", "lead"),
        (5, "completed", "bob"),
    ]
    [task_b] = [t for t in team.timeline["tasks"] if t["id"] == team.ledger.task_ids["B"]]
    assert task_b["blockedBy"] == [team.ledger.task_ids["A"]]
    assert all(h["time"] is not None for h in a + b)
    assert {t["ownerName"] for t in team.timeline["tasks"]} == {"bob"}


def test_team_task_actions_say_what_each_revision_did(team: Played) -> None:
    assert [h["action"] for h in _history(team, "A")] == [
        "created",
        "claimed",
        "reassigned",
        "completed",
    ]
    assert [h["action"] for h in _history(team, "B")] == [
        "created",
        "claimed",
        "released",
        "assigned",
        "completed",
    ]


def test_team_tokens_are_what_the_model_reported(team: Played) -> None:
    _tokens_match_the_ledger(team)
