"""fixturegen/story.py and the live demo's appender: a demo left open for hours keeps
reading like a team at work, never filing the same task or writing the same words."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from pathlib import Path

from dsh_task_gantt.demo import TICK_SECONDS
from dsh_task_gantt.fixturegen import STORY_TEAM, LiveTeam, generate_team
from dsh_task_gantt.fixturegen.story import JOBS, RESOURCES, phases

HOUR_MS = 3_600_000


def test_the_phases_never_repeat_a_subject_and_their_tasks_wait_for_each_other() -> None:
    rounds = len(RESOURCES) * len(JOBS)
    found = list(itertools.islice(phases(), rounds * 2 + 5))  # into the third API version
    subjects = [s for phase in found for s in phase.subjects]
    assert len(set(subjects)) == len(subjects)
    assert len({phase.title for phase in found}) == len(found)
    # the bundled team exported the invoices as CSV: the story goes on from there
    assert found[0].title == "filters for invoices"
    assert not any("export" in t.title and "invoices" in t.title for t in found[: rounds - 1])
    first = found[0]
    assert first.blocked_by[0] == () and all(first.blocked_by[1:])
    assert all(max(b, default=-1) < n for n, b in enumerate(first.blocked_by))
    # the files move on with the work: every phase talks of its own resource
    assert found[0].project.files != found[len(JOBS)].project.files
    assert "(API v2)" in found[rounds - 1].subjects[0]


def test_two_hours_of_the_live_demo_file_no_task_twice_and_repeat_no_message(
    tmp_path: Path,
) -> None:
    """The appender ticks as the demo does (every TICK_SECONDS), its clock driven by
    hand: two hours of demo time in a few seconds, no sleeping."""
    spec = generate_team(tmp_path, seed=11, shape="story", name=STORY_TEAM, live=True)
    live = LiveTeam(tmp_path, spec)
    now = spec.last_event_time + 1_000
    ticks = int(2 * HOUR_MS / (TICK_SECONDS * 1000))
    started = time.perf_counter()
    activities: Counter[str] = Counter()
    for _ in range(ticks):
        report = live.tick(now)
        activities.update(a.split(" ")[0] for a in report.activities)
        now += int(TICK_SECONDS * 1000)
    print(f"{ticks} ticks in {time.perf_counter() - started:.1f} s: {dict(activities)}")
    after = live.spec()
    subjects = [t.subject for t in after.tasks]
    repeated = [s for s, n in Counter(subjects).items() if n > 1]
    assert repeated == []
    new_tasks = after.tasks[len(spec.tasks) :]
    assert len(new_tasks) >= 20, "the story stalled"
    # the job moved through phases: several jobs, several resources' files
    assert activities["phase"] >= 5
    # a phase's tasks wait for each other, and nothing was claimed before its blockers
    assert sum(bool(t.blocked_by) for t in new_tasks) >= len(new_tasks) // 2
    done_at = {t.id: r.time for t in after.tasks for r in t.revisions if r.status == "completed"}
    for task in new_tasks:
        claims = [r.time for r in task.revisions if r.tool_action == "claim"]
        for blocker in task.blocked_by if claims else ():
            assert blocker in done_at and done_at[blocker] <= claims[0], (task.id, blocker)
    assert sum(t.final.status == "completed" for t in new_tasks) >= 15
    bodies = [m.text for m in after.messages]
    assert len(bodies) > len(spec.messages) + 200
    assert len(set(bodies)) == len(bodies), "two messages say exactly the same"
    prompts = [p.text for p in after.human_prompts]
    assert len(prompts) > len(spec.human_prompts) + 20
    assert len(set(prompts)) == len(prompts), "the human asked the same thing twice"
