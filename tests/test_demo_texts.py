"""The team a newcomer sees first reads like people doing a small job (checked on the
bundled spec, the ground truth, and on what the live demo appends); the edge cases the
other tests need live in a team of their own."""

from __future__ import annotations

import random
import re
import statistics
from pathlib import Path

from dsh_task_gantt.fixturegen import STORY_TEAM, LiveTeam, TeamSpec, generate_team
from dsh_task_gantt.fixturegen import spec as S
from dsh_task_gantt.fixturegen.texts import EXPORT, GANTT, Texts

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "fixtures" / "specs"
CJK = re.compile(r"[\u4e00-\u9fff]")
#: How a paragraph of a real message ends: a sentence, a code fence, a signature.
SENTENCE_END = re.compile(r"([.:?!。？！：)]|```)$")


def bundled(name: str) -> TeamSpec:
    return TeamSpec.load(SPECS / f"{name}.json", root=str(REPO / "fixtures" / "sessions"))


def reads_as_sentences(text: str) -> bool:
    """Every paragraph ends like a sentence, a code block or a signature: no text sliced
    mid-word out of a corpus."""
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    return all(SENTENCE_END.search(p) or p.startswith("— ") for p in paragraphs)


def mentions_the_project(text: str) -> bool:
    return any(name in text for name in (*EXPORT.files, *EXPORT.tests, *EXPORT.functions))


def test_the_newcomers_team_talks_like_people_doing_a_small_job() -> None:
    team = bundled(STORY_TEAM)
    texts = [m.text for m in team.messages]
    lengths = sorted(len(t) for t in texts)
    print(f"the newcomer's team: median message {statistics.median(lengths):,.0f} characters")
    assert 1_400 <= statistics.median(lengths) <= 2_200, lengths
    assert lengths[0] < 300 and lengths[-1] < 8_000
    assert len(set(texts)) == len(texts), "two messages say exactly the same"
    assert all(reads_as_sentences(t) for t in texts)
    assert sum(mentions_the_project(t) for t in texts) >= len(texts) * 2 // 3
    assert any("```" in t for t in texts), "nobody showed code"
    assert any(CJK.search(t) for t in texts), "no message in Chinese"
    # Everyone talks: the lead and each teammate send and receive.
    senders = {m.sender_id for m in team.messages}
    targets = {m.target_id for m in team.messages}
    assert {m.id for m in team.members} == senders == targets
    # The human asks for the job first, and writes once in Chinese.
    first, *later = team.human_prompts
    assert first.text.startswith("Our accountants want to download invoices")
    assert any(CJK.search(p.text) for p in later)
    subjects = [t.subject for t in team.tasks]
    assert len(set(subjects)) == len(subjects) >= 4
    # Every task is claimed and completed by someone, but the one task nobody needed,
    # which the lead deletes (DSH refuses to delete a task another live task waits on).
    deleted = {t.id for t in team.tasks if t.final.status == "deleted"}
    assert len(deleted) == 1
    assert all(t.final.status == "completed" for t in team.tasks if t.id not in deleted)
    assert not any(deleted & set(t.blocked_by) for t in team.tasks if t.id not in deleted)


def test_the_edge_cases_live_in_a_team_of_their_own() -> None:
    edge = {S.HOSTILE, S.LONG, S.ORPHAN_DELIVERY, S.OFF_ROSTER, S.UNDELIVERED}
    assert edge <= {m.kind for m in bundled("alpha").messages}
    for name in (STORY_TEAM, "beta"):
        team = bundled(name)
        assert {m.kind for m in team.messages} == {S.NORMAL}, name
        assert not any(m.traits for m in team.members), name
        assert team.rewinds == () and team.stray_end_seed is None, name
        every_text = [
            *(m.text for m in team.messages),
            *(p.text for p in team.human_prompts),
            *(t.description for t in team.tasks),
        ]
        assert not any("<script" in t or "javascript:" in t for t in every_text), name
        assert all(len(t) <= 8_000 for t in every_text), name


def test_what_the_live_demo_appends_reads_the_same_way(tmp_path: Path) -> None:
    spec = generate_team(tmp_path, seed=11, shape="story", name=STORY_TEAM, live=True)
    live = LiveTeam(tmp_path, spec)
    now = spec.last_event_time + 1_000
    for _ in range(60):
        live.tick(now)
        now += 2_500
    after = live.spec()
    new_messages = after.messages[len(spec.messages) :]
    new_prompts = after.human_prompts[len(spec.human_prompts) :]
    assert new_messages and new_prompts
    assert all(reads_as_sentences(m.text) for m in new_messages)
    assert all(reads_as_sentences(p.text) for p in new_prompts)
    subjects = [t.subject for t in after.tasks]
    assert len(set(subjects)) == len(subjects), "a follow-up task repeats an open subject"


def test_the_texts_are_drawn_deterministically(tmp_path: Path) -> None:
    a = generate_team(tmp_path / "a", seed=5, shape="story")
    b = generate_team(tmp_path / "b", seed=5, shape="story")
    c = generate_team(tmp_path / "c", seed=6, shape="story")
    assert [m.text for m in a.messages] == [m.text for m in b.messages]
    assert [m.text for m in a.messages] != [m.text for m in c.messages]


TOPICS = ("kickoff", "question", "answer", "progress", "report")


def test_generated_messages_are_as_long_as_a_real_teams() -> None:
    """Over the mix of topics a team writes: median about 1,800 characters, about one
    message in ten a one-liner, none over the cap, about one report in four in
    Chinese; the same for every project's vocabulary."""
    for project in (EXPORT, GANTT):
        texts = Texts(random.Random(2026), project)
        written = [
            (TOPICS[i % 5], texts.message("csv", "qa", topic=TOPICS[i % 5])) for i in range(1_000)
        ]
        lengths = sorted(len(text) for _, text in written)
        median = statistics.median(lengths)
        short = sum(n < 300 for n in lengths) / len(lengths)
        print(f"{project.goal}: median message {median:,.0f} characters, {short:.0%} one-liners")
        assert 1_600 <= median <= 2_000, median
        assert 0.04 <= short <= 0.15, short
        assert lengths[-1] <= 8_000
        reports = [text for topic, text in written if topic in ("progress", "report")]
        # Written in Chinese, not merely quoting a name in it.
        chinese = sum(len(CJK.findall(t)) > len(t) // 5 for t in reports) / len(reports)
        assert 0.15 <= chinese <= 0.35, chinese
        assert all(reads_as_sentences(text) for _, text in written)
