"""A child's parent's brief, logged as a ``kind: "user"`` message, is the parent's
message to the child and never the human's prompt (timeline/briefs.py; HOST §6)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.timeline import build_timeline
from tests.kit.foldkit import LEAD, Log, header, source, spans, team

ALICE = "0f1e2d3c-alice"
BOB = "9a8b7c6d-bob"
BRIEF_A = "You are alice. Claim task t-1 and collect the data."
BRIEF_B = "You are bob. Wait for the lead."
HUMAN = "Build the report with a team."


def _lead(*, spawn_alice: str = BRIEF_A, spawn_bob: str = BRIEF_B) -> Log:
    log = Log()
    log.prompt(HUMAN, 1, "human-1").turn("t1", 2)
    log.spawn_call("alice", spawn_alice, 3).member(ALICE, "alice", 4, phase="provisioning")
    log.spawn_call("bob", spawn_bob, 5, context="fork").member(BOB, "bob", 6)
    return log


def _child(member: str, brief: str, *, extra: tuple[tuple[str, str], ...] = ()) -> Log:
    log = Log()
    log.prompt(brief, 10, f"{member}-brief").turn("c1", 11)
    for n, (text, id_) in enumerate(extra):
        log.prompt(text, 20 + n, id_)
    return log


def _timeline(lead: Log, alice: Log, bob: Log) -> dict[str, Any]:
    members = {
        ALICE: source(ALICE, alice, hdr=header(ALICE, parent=LEAD)),
        BOB: source(BOB, bob, hdr=header(BOB, parent=LEAD)),
    }
    return build_timeline(team(source(LEAD, lead), members))


def _prompts(tl: dict[str, Any], lane_id: str) -> list[str]:
    return [s["preview"] for s in spans(tl, lane_id, "user-prompt")]


def test_each_spawn_prompt_is_the_leads_message_to_that_teammate_not_a_human_prompt() -> None:
    tl = _timeline(_lead(), _child("alice", BRIEF_A), _child("bob", BRIEF_B))
    assert _prompts(tl, "lead") == [HUMAN]
    for lane_id, brief, name in ((ALICE, BRIEF_A, "alice"), (BOB, BRIEF_B, "bob")):
        assert _prompts(tl, lane_id) == []
        [mark] = [s for s in spans(tl, lane_id, "message") if s["preview"] == brief]
        assert mark["from"]["kind"] == "lead" and mark["to"]["name"] == name
        assert mark["direction"] == "incoming"
        [sent] = [s for s in spans(tl, "lead", "message") if s["id"] == mark["id"]]
        assert sent["direction"] == "outgoing" and sent["to"]["name"] == name
    assert tl["diagnostics"]["humanPrompts"] == 1


def test_a_brief_logged_twice_is_one_brief_and_no_prompt() -> None:
    """DSH splices the brief into the inbox, then logs it as a user/message (one id)."""
    alice = Log().splice(BRIEF_A, "alice-brief", 9)
    alice.prompt(BRIEF_A, 10, "alice-brief").turn("c1", 11)
    tl = _timeline(_lead(), alice, _child("bob", BRIEF_B))
    assert _prompts(tl, ALICE) == []
    assert [s["id"] for s in spans(tl, ALICE, "message")] == ["alice-brief"]
    assert [s["id"] for s in spans(tl, "lead", "message")].count("alice-brief") == 1
    assert tl["diagnostics"]["humanPrompts"] == 1


def test_a_subagent_calls_prompt_is_the_brief_of_the_child_it_describes() -> None:
    """DSH 0.1.1's subagent tool: ``{description, prompt}``; the child's descriptor
    label is the description (no catalog entry, no parent id in the brief)."""
    lead = Log().prompt(HUMAN, 1, "human-1").turn("t1", 2)
    lead.add(
        "tool/call",
        {"callId": "c1", "name": "subagent",
         "arguments": '{"description": "Count input files", "prompt": "Count them."}'},
        3,
    )  # fmt: skip
    child = Log().add("subagent/descriptor", {"label": "Count input files"}, 4)
    child.prompt("Count them.", 5, "child-brief").turn("c1", 6)
    other = Log().add("subagent/descriptor", {"label": "Something else"}, 4)
    other.prompt("Count them.", 5, "other-brief")
    members = {
        ALICE: source(ALICE, child, hdr=header(ALICE, parent=LEAD)),
        BOB: source(BOB, other, hdr=header(BOB, parent=LEAD)),
    }
    tl = build_timeline(team(source(LEAD, lead), members, requested=LEAD, running=(ALICE, BOB)))
    assert _prompts(tl, ALICE) == []
    [mark] = spans(tl, ALICE, "message")
    assert mark["from"]["kind"] == "lead" and mark["preview"] == "Count them."
    assert _prompts(tl, BOB) == ["Count them."]  # not the child that call described


def test_a_prompt_matching_another_teammates_spawn_stays_the_humans() -> None:
    """The match is by the spawn call's name: bob's brief in alice's log is not hers."""
    tl = _timeline(_lead(), _child("alice", BRIEF_B), _child("bob", BRIEF_B))
    assert _prompts(tl, ALICE) == [BRIEF_B]
    assert _prompts(tl, BOB) == []


def test_a_different_text_is_not_a_brief_and_each_spawn_call_is_one_brief() -> None:
    alice = _child("alice", BRIEF_A, extra=((BRIEF_A, "again"), ("Thanks, carry on.", "h2")))
    tl = _timeline(_lead(), alice, _child("bob", "Hello bob"))
    # One spawn call for alice: her first copy is the brief, the same words later are a prompt.
    assert _prompts(tl, ALICE) == [BRIEF_A, "Thanks, carry on."]
    assert _prompts(tl, BOB) == ["Hello bob"]


def test_without_a_parent_in_the_header_the_spawn_rule_does_not_apply() -> None:
    members = {
        ALICE: source(ALICE, _child("alice", BRIEF_A)),  # a root session, not a child
        BOB: source(BOB, _child("bob", BRIEF_B), hdr=header(BOB, parent=LEAD)),
    }
    tl = build_timeline(team(source(LEAD, _lead()), members))
    assert _prompts(tl, ALICE) == [BRIEF_A]
    assert _prompts(tl, BOB) == []


def test_the_older_parent_id_rule_still_holds() -> None:
    brief = f"Port build.sh.\nYour parent agent id is {LEAD}."
    tl = _timeline(_lead(), _child("alice", brief), _child("bob", BRIEF_B))
    assert _prompts(tl, ALICE) == []
    assert [s["preview"] for s in spans(tl, ALICE, "message")] == [
        "Port build.sh. Your parent agent id is session-lead."
    ]


#: Short texts, often equal (a preview collapses runs of spaces: keep single ones).
_WORDS = st.lists(st.sampled_from(["a", "b", "xyz."]), min_size=1, max_size=3).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    alice_brief=_WORDS,
    bob_brief=_WORDS,
    alice_first=_WORDS,
    bob_first=_WORDS,
    more=st.lists(_WORDS, max_size=3),
)
def test_a_childs_prompt_is_a_brief_exactly_when_it_equals_its_own_spawn_prompt(
    alice_brief: str, bob_brief: str, alice_first: str, bob_first: str, more: list[str]
) -> None:
    extra = tuple((text, f"m{n}") for n, text in enumerate(more))
    tl = _timeline(
        _lead(spawn_alice=alice_brief, spawn_bob=bob_brief),
        _child("alice", alice_first, extra=extra),
        _child("bob", bob_first),
    )
    alice_texts = [alice_first, *more]
    if alice_brief in alice_texts:
        alice_texts.remove(alice_brief)  # the first equal one is the brief
    assert _prompts(tl, ALICE) == alice_texts
    assert _prompts(tl, BOB) == ([] if bob_first == bob_brief else [bob_first])
    assert _prompts(tl, "lead") == [HUMAN]
    # The briefs are the only messages: each on the teammate's lane and the lead's.
    briefs = (alice_brief in [alice_first, *more]) + (bob_first == bob_brief)
    assert tl["diagnostics"]["messageMarks"] == 2 * briefs
    assert len(spans(tl, "lead", "message")) == briefs
