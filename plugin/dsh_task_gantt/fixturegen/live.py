"""Keep a generated team moving: append real-format frames on each :meth:`LiveTeam.tick`.

State (next seq per log, turns, task revisions) comes from the team's spec once and
is then kept here; the only time used is the ``now_ms`` each tick is given. The work
follows :mod:`.story`: phase after phase of a job, each a few tasks that wait for each
other, so a demo left open for hours never files the same task twice; every message
and prompt it writes is one the team has not written before.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dsh_task_gantt.fixturegen import spec as S
from dsh_task_gantt.fixturegen.scale import SCALES
from dsh_task_gantt.fixturegen.session_log import Log
from dsh_task_gantt.fixturegen.sim import MemberMeta, Sim
from dsh_task_gantt.fixturegen.spec import TeamSpec
from dsh_task_gantt.fixturegen.story import LIVE_PROMPTS, Phase, phases
from dsh_task_gantt.fixturegen.task_state import TaskState
from dsh_task_gantt.fixturegen.texts import EXPORT, Project
from dsh_task_gantt.fixturegen.writer import SessionLogWriter

#: Delays in a tick are this fraction of the generator's (a turn fits in a second).
LIVE_TIME_SCALE = 0.02
#: A tick's events start this long before its ``now_ms``.
TICK_WINDOW_MS = 1500
#: A claimed task is worked on at least this long (the ticks' time) before it is done.
MIN_WORK_MS = 90_000
#: A task's state once it no longer holds up the tasks that wait for it.


@dataclass(frozen=True, slots=True)
class TickReport:
    now_ms: int
    #: What happened, e.g. ("lead-step", "claim task-3", "message msg-…").
    activities: tuple[str, ...]
    #: Events appended per member id.
    appended: dict[str, int]


class LiveTeam:
    """Appends activity to a generated team under ``root`` (e.g. a temp copy).

    The lead always ends a tick on an open turn, so the team reads as live.
    """

    def __init__(
        self, root: Path, spec: TeamSpec, *, seed: int | None = None, project: Project = EXPORT
    ) -> None:
        if not spec.team_id:
            raise ValueError("a lone session has no team to animate")
        rng = random.Random(spec.seed * 7919 + 1 if seed is None else seed)
        sim = Sim(
            root,
            rng=rng,
            scale=SCALES["small"],
            name=spec.name,
            seed=spec.seed,
            cwd=spec.cwd,
            start_ms=spec.start_ms,
            project=project,
        )
        sim.team_id = spec.team_id
        sim.time_scale = LIVE_TIME_SCALE
        sim.now = spec.last_event_time
        for m in spec.members:
            log: Log | None = None
            if m.rel_path is not None:
                writer = SessionLogWriter.reopen(
                    root / m.rel_path, line_count=m.line_count, frame_count=m.frame_count
                )
                log = Log(sim, writer, m.id, m.last_time or m.created_at or spec.start_ms)
                log.next_seq = m.next_seq
                log.last_time = m.last_time
                log.own_first_time = m.own_first_time
                log.inherited = m.inherited_count
                log.turn = m.last_turn
                log.open_turn = m.open_turn
                log.open_step = m.open_step
                log.step = m.open_step or 0
                log.turn_count = m.turn_count
                log.closed_turn_count = m.closed_turn_count
                log.human_prompt_ids = list(m.human_prompt_ids)
                log.injected = Counter(m.injected_counts)
                log.received = list(m.received_message_ids)
            meta = MemberMeta(
                m.id,
                m.name,
                list(m.aliases),
                m.role,
                m.context,
                m.phase,
                list(m.traits),
                m.created_at,
                log,
            )
            sim.members.append(meta)
            if m.role == "lead":
                sim.lead = log
        for t in spec.tasks:
            final = t.final
            sim.tasks.append(
                TaskState(
                    t.id,
                    t.subject,
                    t.description,
                    list(t.blocked_by),
                    list(t.write_scopes),
                    list(t.traits),
                    list(t.revisions),
                    final.status,
                    final.owner_id,
                    final.revision,
                )
            )
        sim.rewinds = list(spec.rewinds)
        sim.messages = list(spec.messages)
        sim.prompts = list(spec.human_prompts)
        sim.stray_end_seed = spec.stray_end_seed
        self._sim = sim
        self._phases = phases()
        self._phase: Phase | None = None
        #: When each task the ticks claimed was claimed (the ticks' time).
        self._claimed_at: dict[str, int] = {}
        #: Every message and prompt text written so far: none is written twice.
        self._said = {m.text for m in spec.messages} | {p.text for p in spec.human_prompts}
        self._now = spec.last_event_time

    def _active(self) -> list[MemberMeta]:
        """Teammates that can still act: active, with a log, not dead mid-step."""
        return [
            m
            for m in self._sim.members
            if m.role == "teammate"
            and m.phase == "active"
            and m.log is not None
            and S.COLD_OPEN_STEP not in m.traits
        ]

    def tick(self, now_ms: int) -> TickReport:
        sim = self._sim
        rng = sim.rng
        lead = sim.lead_log()
        before = {m.id: m.log.next_seq for m in sim.members if m.log is not None}
        sim.ceiling = now_ms
        sim.now = max(sim.now, now_ms - TICK_WINDOW_MS)
        self._now = now_ms
        done: list[str] = []
        sim.sync(lead)
        if lead.open_step is not None:
            lead.end_step()
        active = self._active()
        choice = rng.random()
        moved = self._move_task(active) if active and choice < 0.4 else None
        if moved is not None:
            done.append(moved)
        elif len(active) >= 1 and 0.4 <= choice < 0.75:
            people = [sim.meta(lead.member_id), *active]
            sender, target = rng.sample(people, 2)
            # The lead asks and answers; teammates also report their work.
            topics = ("question", "answer", "progress", "report")
            topic = rng.choice(topics[:2] if sender.role == "lead" else topics)
            msg = sim.message(
                sender.id, target.id, S.NORMAL, self._message_text(sender, target, topic)
            )
            done.append(f"message {msg.id}")
        elif active:
            member = rng.choice(active)
            log = member.log
            assert log is not None
            sim.sync(log)
            log.filler_turn(rng.randint(1, 2))
            sim.settle(log, gap=(10, 100))
            done.append(f"turn {member.id}")
        # The lead ends every tick inside a step: the team reads as live.
        sim.sync(lead)
        if lead.open_turn is not None and rng.random() < 0.15:
            lead.end_turn("completed")
        if lead.open_turn is None:
            if rng.random() < 0.5:
                sim.human_prompt(lead, self._prompt_text())
                done.append("human-prompt")
            else:
                lead.user_message("time-context", "Tick.")
            lead.begin_turn()
        lead.begin_step()
        lead.assistant(sim.text.take(rng.randint(40, 600)))
        done.append("lead-step")
        sim.live = True
        sim.finish()
        sim.ceiling = None
        appended = {
            m.id: m.log.next_seq - before[m.id]
            for m in sim.members
            if m.log is not None and m.log.next_seq != before[m.id]
        }
        return TickReport(now_ms, tuple(done), appended)

    def _move_task(self, active: list[MemberMeta]) -> str | None:
        """Complete a task worked on long enough, claim one whose blockers are done, or
        (nothing left to claim or finish) start the story's next phase; ``None``:
        nothing to move this tick (the others are still at work)."""
        sim = self._sim
        rng = sim.rng
        active_ids = {m.id for m in active}
        working = [t for t in sim.tasks if t.status == "in_progress" and t.owner_id in active_ids]
        ripe = [t for t in working if self._now - self._claimed_at.get(t.id, 0) >= MIN_WORK_MS]
        ready = sim.ready_tasks()  # DSH lets only a ready task be claimed
        if ripe and (not ready or rng.random() < 0.5):
            task = rng.choice(ripe)
            owner = task.owner_id
            assert owner is not None
            sim.act(owner, lambda: sim.update_task(owner, task.id, "complete"))
            return f"complete {task.id}"
        if ready:
            task = ready[0]  # in the order filed: a phase's work goes in its order
            busy = {t.owner_id for t in working}
            free = [m for m in active if m.id not in busy] or active
            actor = rng.choice(free).id
            sim.act(actor, lambda: sim.update_task(actor, task.id, "claim"))
            self._claimed_at[task.id] = self._now
            return f"claim {task.id}"
        if working:
            return None
        return self._start_phase()

    def _start_phase(self) -> str:
        """The lead files the next phase's tasks, each waiting for those before it."""
        sim = self._sim
        taken = {t.subject for t in sim.tasks}
        phase = next(self._phases)
        while any(subject in taken for subject in phase.subjects):
            phase = next(self._phases)
        self._phase = phase
        sim.words.project = phase.project
        lead_id = sim.lead_log().member_id
        files = phase.project.files
        ids: list[str] = []

        def file_all() -> None:
            for n, subject in enumerate(phase.subjects):
                blockers = [ids[i] for i in phase.blocked_by[n]]
                scope = [files[n % len(files)]]
                filed = sim.create_task(lead_id, subject, blocked_by=blockers, write_scopes=scope)
                ids.append(filed)

        sim.act(lead_id, file_all)
        return f"phase {phase.title}: create {' '.join(ids)}"

    def _topic_task(self, *people: MemberMeta) -> TaskState | None:
        """What two members talk about: a task one of them is on, else the newest."""
        tasks = self._sim.tasks
        ids = {p.id for p in people}
        on = [t for t in tasks if t.status == "in_progress" and t.owner_id in ids]
        return on[-1] if on else (tasks[-1] if tasks else None)

    def _message_text(self, sender: MemberMeta, target: MemberMeta, topic: str) -> str:
        """A message on the work at hand, never one the team wrote before: it names
        the task and the commit it is about."""
        sim = self._sim
        task = self._topic_task(sender, target)
        text = sim.words.message(
            sender.name,
            target.name,
            topic=topic,
            task=task.subject if task else "the current task",
            scope=task.write_scopes[0] if task and task.write_scopes else None,
            median=sim.scale.message_median,
            most=sim.scale.message_max,
        )
        where = task.id if task else "main"
        while True:
            ref = f"{where}, commit {sim.rng.getrandbits(28):07x}"
            head, sep, signature = text.rpartition("\n\n— ")
            # Before the signature when there is one; a one-liner gets it in brackets.
            unique = f"{head}\n\nOn {ref}.{sep}{signature}" if sep else f"{text} (on {ref}.)"
            if unique not in self._said:
                self._said.add(unique)
                return unique

    def _prompt_text(self) -> str:
        """The human's question about the work at hand (never asked before)."""
        sim = self._sim
        rng = sim.rng
        project = sim.words.project
        task = self._topic_task()
        names = {
            "task": task.subject if task else project.goal,
            "phase": self._phase.title if self._phase else project.goal,
            "file": rng.choice(project.files),
            "function": rng.choice(project.functions),
        }
        for template in rng.sample(LIVE_PROMPTS, len(LIVE_PROMPTS)):
            text = template.format(**names)
            if text not in self._said:
                break
        else:
            text = f"{text} (asking again: {len(self._said)} questions in.)"
        self._said.add(text)
        return text

    def spec(self) -> TeamSpec:
        """The team as it stands now (use it to assert on what the ticks wrote)."""
        return self._sim.spec()
