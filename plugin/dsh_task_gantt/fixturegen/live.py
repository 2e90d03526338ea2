"""Keep a generated team moving: append real-format frames on each :meth:`LiveTeam.tick`.

State (next seq per log, turns, task revisions) comes from the team's spec once and
is then kept here; the only time used is the ``now_ms`` each tick is given.
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
from dsh_task_gantt.fixturegen.task_state import TaskState
from dsh_task_gantt.fixturegen.texts import EXPORT, Project
from dsh_task_gantt.fixturegen.writer import SessionLogWriter

#: Delays in a tick are this fraction of the generator's (a turn fits in a second).
LIVE_TIME_SCALE = 0.02
#: A tick's events start this long before its ``now_ms``.
TICK_WINDOW_MS = 1500


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
        done: list[str] = []
        sim.sync(lead)
        if lead.open_step is not None:
            lead.end_step()
        active = self._active()
        choice = rng.random()
        if active and choice < 0.4:
            done.append(self._move_task(active))
        elif len(active) >= 1 and choice < 0.75:
            people = [sim.meta(lead.member_id), *active]
            sender, target = rng.sample(people, 2)
            # The lead asks and answers; teammates also report their work.
            topics = ("question", "answer", "progress", "report")
            topic = rng.choice(topics[:2] if sender.role == "lead" else topics)
            msg = sim.message(sender.id, target.id, S.NORMAL, topic=topic)
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
                sim.human_prompt(lead, sim.words.status_prompt())
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

    def _move_task(self, active: list[MemberMeta]) -> str:
        sim = self._sim
        rng = sim.rng
        active_ids = {m.id for m in active}
        working = [t for t in sim.tasks if t.status == "in_progress" and t.owner_id in active_ids]
        pending = [t for t in sim.tasks if sim.ready(t)]  # DSH lets only a ready task be claimed
        if working and (not pending or rng.random() < 0.5):
            task = rng.choice(working)
            owner = task.owner_id
            assert owner is not None
            sim.act(owner, lambda: sim.update_task(owner, task.id, "complete"))
            return f"complete {task.id}"
        if pending:
            task = rng.choice(pending)
            actor = rng.choice(active).id
            sim.act(actor, lambda: sim.update_task(actor, task.id, "claim"))
            return f"claim {task.id}"
        lead_id = sim.lead_log().member_id
        subject = sim.words.follow_up([t.subject for t in sim.tasks])
        new_id: list[str] = []
        sim.act(lead_id, lambda: new_id.append(sim.create_task(lead_id, subject)))
        return f"create {new_id[0]}"

    def spec(self) -> TeamSpec:
        """The team as it stands now (use it to assert on what the ticks wrote)."""
        return self._sim.spec()
