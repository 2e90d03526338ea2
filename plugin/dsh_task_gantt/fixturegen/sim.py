"""A team being written: its members' logs, the lead's team journal, tasks, messages
and prompts, and the spec it reports (the ground truth the tests check against).
Deterministic: every choice comes from the ``random.Random`` it is given; no wall
clock is read here.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dsh_task_gantt.fixturegen.scale import Scale
from dsh_task_gantt.fixturegen.seeded import TextSource
from dsh_task_gantt.fixturegen.session_log import Log
from dsh_task_gantt.fixturegen.spec import (
    MemberSpec,
    MessageSpec,
    PromptSpec,
    RewindSpec,
    TaskRevisionSpec,
    TaskSpec,
    TeamSpec,
)
from dsh_task_gantt.fixturegen.task_state import (
    STATUS_AFTER,
    TaskState,
    derived_action,
    tool_action_name,
)
from dsh_task_gantt.fixturegen.texts import EXPORT, Project, Texts
from dsh_task_gantt.fixturegen.writer import Event, SessionLogWriter, header_record
from dsh_task_gantt.logs.project_key import project_key


@dataclass(slots=True)
class MemberMeta:
    id: str
    name: str
    aliases: list[str]
    role: str
    context: str | None
    phase: str
    traits: list[str]
    created_at: int | None
    log: Log | None


class Sim:
    """A team being written. Scenario code drives it; :meth:`spec` reports it."""

    def __init__(
        self,
        root: Path,
        *,
        rng: random.Random,
        scale: Scale,
        name: str,
        seed: int,
        cwd: str,
        start_ms: int,
        compress: bool = True,
        project: Project = EXPORT,
    ) -> None:
        self.root = root
        self.rng = rng
        self.scale = scale
        self.name = name
        self.seed = seed
        self.cwd = cwd
        self.start_ms = start_ms
        self.compress = compress
        self.now = start_ms
        #: Readable texts (prompts, task descriptions, messages) about ``project``.
        text_rng = random.Random(rng.getrandbits(64))
        self.words = Texts(random.Random(text_rng.getrandbits(64)), project)
        #: Bulk text (tool results, assistant turns), sliced from the same phrases.
        self.text = TextSource(text_rng, self.words.corpus_line)
        self.members: list[MemberMeta] = []
        self.tasks: list[TaskState] = []
        self.rewinds: list[RewindSpec] = []
        self.messages: list[MessageSpec] = []
        self.prompts: list[PromptSpec] = []
        self.stray_end_seed: tuple[str, int] | None = None
        self.live = False
        self.team_id = ""
        self.lead: Log | None = None
        #: Multiplies every delay (live ticks squeeze a turn into a second).
        self.time_scale = 1.0
        #: Latest time an event may take (live ticks: the caller's now).
        self.ceiling: int | None = None

    def dt(self, lo: int, hi: int) -> int:
        return max(1, int(self.rng.randint(lo, hi) * self.time_scale))

    # -- sessions ------------------------------------------------------------
    def open_log(
        self, session_id: str, created_at: int, *, parent: str | None = None, seeded: bool = False
    ) -> Log:
        header = header_record(
            session_id=session_id,
            created_at=created_at,
            cwd=self.cwd,
            parent_session=parent,
            is_seeded=seeded,
        )
        writer = SessionLogWriter(self.root, header, compress=self.compress)
        return Log(self, writer, session_id, created_at)

    def add_lead(self, lead_id: str) -> Log:
        log = self.open_log(lead_id, self.now)
        self.lead = log
        self.members.append(
            MemberMeta(lead_id, "lead", ["lead"], "lead", None, "active", [], self.now, log)
        )
        return log

    def lead_log(self) -> Log:
        assert self.lead is not None
        return self.lead

    def meta(self, member_id: str) -> MemberMeta:
        for m in self.members:
            if m.id == member_id:
                return m
        raise KeyError(member_id)

    def name_of(self, member_id: str) -> str:
        return self.meta(member_id).aliases[-1]

    def log_of(self, member_id: str) -> Log:
        log = self.meta(member_id).log
        assert log is not None, member_id
        return log

    def sync(self, *logs: Log) -> int:
        """Bring the logs' clocks to the global clock (cross-log beats happen 'now')."""
        for log in logs:
            log.t = max(log.t, self.now)
        return self.now

    def settle(self, *logs: Log, gap: tuple[int, int] = (500, 6000)) -> None:
        self.now = max([self.now, *(log.t for log in logs)]) + self.dt(*gap)

    # -- team/* (all in the lead's log, flushed at once like the host's journal) ----
    def team_event(
        self, etype: str, data: dict[str, Any], dt: tuple[int, int] = (20, 150)
    ) -> Event:
        lead = self.lead_log()
        self.sync(lead)
        event = lead.emit(etype, data, dt)
        lead.flush()
        return event

    def member_event(
        self, meta: MemberMeta, phase: str, *, description: str, error: str | None = None
    ) -> Event:
        member: dict[str, Any] = {
            "id": meta.id,
            "name": meta.aliases[-1],
            "description": description,
            "provider": "spawn",
            "context": meta.context or "fresh",
            "phase": phase,
        }
        if error is not None:
            member["error"] = error
        meta.phase = phase
        return self.team_event(
            "team/member", {"version": 2, "teamId": self.team_id, "member": member}
        )

    def catalog_event(self, meta: MemberMeta, label: str) -> Event:
        return self.team_event(
            "subagent/catalog",
            {
                "version": 1,
                "childId": meta.id,
                "childCreatedAt": meta.created_at,
                "mode": "continuable",
                "label": label,
            },
        )

    # -- tasks -----------------------------------------------------------------
    def task(self, task_id: str) -> TaskState:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def ready(self, task: TaskState) -> bool:
        """DSH's *ready* (docs/host-contract.md §7): pending, every blocker completed. Only a ready
        task can be claimed or assigned."""
        return self._ready(task, self._completed())

    def ready_tasks(self) -> list[TaskState]:
        """Every ready task, in the order filed (one pass over the board: a day-long live
        team files hundreds of tasks, and asking :meth:`ready` of each was quadratic)."""
        done = self._completed()
        return [t for t in self.tasks if self._ready(t, done)]

    def _completed(self) -> set[str]:
        return {t.id for t in self.tasks if t.status == "completed"}

    @staticmethod
    def _ready(task: TaskState, done: set[str]) -> bool:
        return task.status == "pending" and all(b in done for b in task.blocked_by)

    def _snapshot(self, task: TaskState) -> dict[str, Any]:
        snap: dict[str, Any] = {
            "id": task.id,
            "revision": task.revision,
            "subject": task.subject,
            "description": task.description,
            "status": task.status,
            "blockedBy": list(task.blocked_by),
            "writeScopes": list(task.write_scopes),
        }
        if task.owner_id is not None:
            snap["ownerId"] = task.owner_id
        return snap

    def _record(
        self,
        task: TaskState,
        prev_status: str | None,
        tool_action: str,
        actor: str,
        event: Event,
        call: Event,
        expected: str | None = None,
    ) -> None:
        task.revisions.append(
            TaskRevisionSpec(
                revision=task.revision,
                status=task.status,
                owner_id=task.owner_id,
                tool_action=tool_action,
                expected_action=expected
                if expected is not None
                else derived_action(prev_status, task.status, task.revision),
                actor_id=actor,
                time=event.time,
                lead_seq=event.seq,
                call_seq=call.seq,
                call_time=call.time,
                call_id=call.data["callId"],
            )
        )

    def create_task(
        self,
        actor: str,
        subject: str,
        *,
        blocked_by: list[str] | None = None,
        write_scopes: list[str] | None = None,
        traits: list[str] | None = None,
    ) -> str:
        """A team_task_create in the actor's log (inside an open step), then revision 1."""
        task_id = f"task-{len(self.tasks) + 1}"
        description = self.words.task_description(subject, self.name_of(actor))
        task = TaskState(
            task_id,
            subject,
            description,
            list(blocked_by or []),
            list(write_scopes or []),
            list(traits or []),
            [],
        )
        self.tasks.append(task)
        log = self.log_of(actor)

        def on_call(call: Event) -> None:
            self.now = max(self.now, call.time)
            task.revision = 1
            event = self.team_event(
                "team/task", {"version": 2, "teamId": self.team_id, "task": self._snapshot(task)}
            )
            self._record(task, None, "create", actor, event, call)

        log.tool(
            "team_task_create",
            {
                "subject": subject,
                "description": description,
                "blocked_by": task.blocked_by,
                "write_scopes": task.write_scopes,
            },
            on_call,
            result_text=f'{{"ok":true,"task_id":"{task_id}"}}',
        )
        return task_id

    def update_task(
        self,
        actor: str,
        task_id: str,
        action: str,
        *,
        owner: str | None = None,
        blocked_by: list[str] | None = None,
        subject: str | None = None,
        description: str | None = None,
        write_scopes: list[str] | None = None,
        skip_revision: bool = False,
    ) -> None:
        """A team_task_update by ``actor`` (expected_revision = current), then the snapshot.

        ``action`` is one of DSH's: claim, release, complete, reopen, delete, edit
        (``subject``/``description``/``write_scopes``), set_dependencies
        (``blocked_by``), reassign (``owner``; none: back to pending, unowned).
        ``skip_revision`` writes revision + 2 (an odd case DSH refuses)."""
        task = self.task(task_id)
        log = self.log_of(actor)

        def on_call(call: Event) -> None:
            self.now = max(self.now, call.time)
            prev_status, prev_owner = task.status, task.owner_id
            task.revision += 2 if skip_revision else 1
            task.status = STATUS_AFTER.get(action, task.status)
            if action == "claim":
                task.owner_id = actor
            elif action in ("release", "reopen"):
                task.owner_id = None
            elif action == "reassign":
                task.owner_id = owner
                task.status = "in_progress" if owner is not None else "pending"
            elif action == "edit":
                task.subject = subject if subject is not None else task.subject
                task.description = description if description is not None else task.description
                if write_scopes is not None:
                    task.write_scopes = list(write_scopes)
            elif action == "set_dependencies":
                task.blocked_by = list(blocked_by or [])
            event = self.team_event(
                "team/task", {"version": 2, "teamId": self.team_id, "task": self._snapshot(task)}
            )
            expected = tool_action_name(action, actor, prev_owner, task.owner_id, prev_status)
            self._record(task, prev_status, action, actor, event, call, expected)

        arguments: dict[str, Any] = {
            "task_id": task_id,
            "expected_revision": task.revision,
            "action": action,
        }
        if action == "reassign" and owner is not None:
            arguments["owner_id"] = owner
        if action == "set_dependencies":
            arguments["blocked_by"] = list(blocked_by or [])
        if action == "edit":
            extra = {"subject": subject, "description": description, "write_scopes": write_scopes}
            arguments.update({k: v for k, v in extra.items() if v is not None})
        log.tool(
            "team_task_update",
            arguments,
            on_call,
            result_text=f'{{"ok":true,"task_id":"{task_id}"}}',
        )

    def rewind(self, task_id: str, revision: int) -> None:
        """Re-emit an old snapshot (a duplicate/rewound revision) in the lead log."""
        task = self.task(task_id)
        old = next(r for r in task.revisions if r.revision == revision)
        snap = self._snapshot(task)
        snap.update(revision=old.revision, status=old.status)
        snap.pop("ownerId", None)
        if old.owner_id is not None:
            snap["ownerId"] = old.owner_id
        self.sync(self.lead_log())
        event = self.team_event("team/task", {"version": 2, "teamId": self.team_id, "task": snap})
        self.rewinds.append(RewindSpec(task_id, revision, event.seq, event.time))
        if "rewound" not in task.traits:
            task.traits.append("rewound")

    # -- messages ------------------------------------------------------------
    def message(
        self,
        sender: str,
        target: str,
        kind: str,
        text: str | None = None,
        *,
        queue: bool = True,
        deliver: bool = True,
        reply: bool = True,
        topic: str = "progress",
        about: str | None = None,
    ) -> MessageSpec:
        """A team message: the sender's tool call, queued/delivered in the lead log, and
        the recipient's team-message user/message (when the target has a log). Without
        ``text``, one about ``topic`` is written on task ``about`` (an id; by default the
        task one of the two is working on)."""
        rng = self.rng
        msg_id = f"msg-{rng.getrandbits(48):012x}"
        sender_name = self.name_of(sender)
        if text is None:
            task = self.task(about) if about else self._task_between(sender, target)
            known = any(m.id == target for m in self.members)
            text = self.words.message(
                sender_name,
                self.name_of(target) if known else "team",
                topic=topic,
                task=task.subject if task else "the current task",
                scope=task.write_scopes[0] if task and task.write_scopes else None,
                median=self.scale.message_median,
                most=self.scale.message_max,
            )
        slog = self.log_of(sender)
        self.sync(slog)
        fresh = slog.enter_turn()
        slog.begin_step()
        slog.assistant()
        queued: Event | None = None

        def on_call(call: Event) -> None:
            nonlocal queued
            self.now = max(self.now, call.time)
            if queue:
                message = {
                    "id": msg_id,
                    "senderId": sender,
                    "senderName": sender_name,
                    "targetId": target,
                    "content": [{"type": "text", "text": text}],
                }
                queued = self.team_event(
                    "team/message/queued",
                    {"version": 2, "teamId": self.team_id, "message": message},
                )

        slog.tool(
            "team_message_send", {"to": target, "content": text}, on_call, result_text='{"ok":true}'
        )
        slog.end_step()
        if fresh:
            slog.end_turn()
        self.now = max(self.now, slog.t)
        delivered: Event | None = None
        rec_id: str | None = None
        rec_seq: int | None = None
        if deliver:
            self.now += self.dt(300, 20_000)
            delivered = self.team_event(
                "team/message/delivered",
                {"version": 2, "teamId": self.team_id, "messageId": msg_id, "targetId": target},
            )
            target_meta = next((m for m in self.members if m.id == target), None)
            if target_meta is not None and target_meta.log is not None:
                rlog = target_meta.log
                self.sync(rlog)
                rlog.t = max(rlog.t, delivered.time)
                ev = rlog.user_message(
                    "team-message",
                    f"Team message {msg_id} from {sender_name}:\n{text}",
                    extra_source={"messageId": msg_id},
                )
                rlog.received.append(msg_id)
                rec_id, rec_seq = target, ev.seq
                if reply:
                    fresh = rlog.enter_turn()
                    rlog.work_step()
                    if fresh:
                        rlog.end_turn()
                self.now = max(self.now, rlog.t)
        spec = MessageSpec(
            id=msg_id,
            kind=kind,
            sender_id=sender,
            sender_name=sender_name,
            target_id=target,
            text=text,
            queued_seq=queued.seq if queued else None,
            queued_time=queued.time if queued else None,
            delivered_seq=delivered.seq if delivered else None,
            delivered_time=delivered.time if delivered else None,
            recipient_id=rec_id,
            recipient_seq=rec_seq,
        )
        self.messages.append(spec)
        return spec

    def _task_between(self, sender: str, target: str) -> TaskState | None:
        """The task a message between two members is most likely about."""
        for task in reversed(self.tasks):
            if task.owner_id in (sender, target) and task.status == "in_progress":
                return task
        return self.tasks[-1] if self.tasks else None

    def act(self, actor: str, body: Callable[[], object], *, reason: str = "completed") -> None:
        """A short turn on ``actor`` whose first step runs ``body`` (its tool calls)."""
        log = self.log_of(actor)
        self.sync(log)
        fresh = log.enter_turn()
        log.begin_step()
        log.assistant()
        body()
        log.end_step()
        if self.rng.random() < 0.5:
            log.work_step()
        if fresh:
            log.end_turn(reason)
        self.settle(log, gap=(200, 3000))

    # -- human prompts -------------------------------------------------------
    def human_prompt(self, log: Log, text: str, *, msg_id: str | None = None) -> Event:
        event = log.user_message("user", text, msg_id=msg_id)
        mid = event.data["id"]
        for i, p in enumerate(self.prompts):
            if p.id == mid and p.member_id == log.member_id:
                self.prompts[i] = replace(p, seqs=(*p.seqs, event.seq))
                return event
        self.prompts.append(PromptSpec(mid, text, log.member_id, (event.seq,), event.time, ()))
        return event

    # -- rounds of filler work -------------------------------------------------
    def work_round(self, logs: list[Log]) -> None:
        """Every given log does a filler turn, in parallel from the same start."""
        start = self.now
        for log in logs:
            log.t = max(log.t, start)
            lo, hi = self.scale.lead_steps if log is self.lead else self.scale.mate_steps
            steps = self.rng.randint(lo, hi)
            while steps > 0:  # big budgets become several turns
                n = min(steps, self.rng.randint(3, 14))
                log.filler_turn(n)
                steps -= n
        self.settle(*logs)

    # -- the report ----------------------------------------------------------
    def finish(self) -> None:
        for m in self.members:
            if m.log is not None:
                m.log.flush()

    def spec(self) -> TeamSpec:
        members: list[MemberSpec] = []
        last = self.start_ms
        first: int | None = None
        for m in self.members:
            log = m.log
            if log is not None and log.last_time is not None:
                last = max(last, log.last_time)
                own = log.own_first_time or log.last_time
                first = own if first is None else min(first, own)
            members.append(
                MemberSpec(
                    id=m.id,
                    name=m.name,
                    aliases=tuple(m.aliases),
                    role=m.role,
                    context=m.context,
                    phase=m.phase,
                    traits=tuple(m.traits),
                    rel_path=log.writer.path.relative_to(self.root).as_posix() if log else None,
                    created_at=m.created_at,
                    inherited_count=log.inherited if log else 0,
                    event_count=log.next_seq if log else 0,
                    line_count=log.writer.line_count if log else 0,
                    frame_count=log.writer.frame_count if log else 0,
                    own_first_time=log.own_first_time if log else None,
                    last_time=log.last_time if log else None,
                    turn_count=log.turn_count if log else 0,
                    closed_turn_count=log.closed_turn_count if log else 0,
                    open_turn=log.open_turn if log else None,
                    open_step=log.open_step if log else None,
                    last_turn=log.turn if log else 0,
                    next_seq=log.next_seq if log else 0,
                    human_prompt_ids=tuple(log.human_prompt_ids) if log else (),
                    injected_counts=dict(sorted(log.injected.items())) if log else {},
                    received_message_ids=tuple(log.received) if log else (),
                )
            )
        tasks = tuple(
            TaskSpec(
                t.id,
                t.subject,
                t.description,
                tuple(t.blocked_by),
                tuple(t.write_scopes),
                tuple(t.traits),
                tuple(t.revisions),
            )
            for t in self.tasks
        )
        lead = self.lead_log()
        return TeamSpec(
            name=self.name,
            seed=self.seed,
            scale=self.scale.name,
            root=str(self.root),
            cwd=self.cwd,
            project_key=project_key(self.cwd),
            lead_id=lead.member_id,
            team_id=self.team_id,
            live=self.live,
            start_ms=self.start_ms,
            first_event_time=first if first is not None else self.start_ms,
            last_event_time=last,
            members=tuple(members),
            tasks=tasks,
            rewinds=tuple(self.rewinds),
            messages=tuple(self.messages),
            human_prompts=tuple(self.prompts),
            stray_end_seed=self.stray_end_seed,
        )
