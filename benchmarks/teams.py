"""The teams the benchmarks generate: real-format logs whose history is the hour before
now, sized like the biggest real team (``real``), with 5x its messages and 8x its tasks
(``big``), or small (``small``, for smoke tests).

``real`` is the fixture generator's large "full" team (a lead of ~19k lines, 9 member
logs) with messages and task moves added to its work rounds until it holds ~360
messages and ~30 tasks, its clock scaled so that its history spans one hour.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_task_gantt.fixturegen import TeamSpec
from dsh_task_gantt.fixturegen import spec as S
from dsh_task_gantt.fixturegen.scale import SCALES
from dsh_task_gantt.fixturegen.scenario import _full  # the "full" team's script
from dsh_task_gantt.fixturegen.sim import Sim

HOUR_MS = 3_600_000
#: The dependency chains of ``big-deps`` (tasks wait on the one this many before).
CHAINS = 8


@dataclass(frozen=True)
class TeamShape:
    scale: str
    #: Messages and tasks the "full" script writes anyway are counted in these totals.
    messages: int
    tasks: int
    #: Extra tasks wait on earlier ones (chains and fan-ins) and share write scopes,
    #: so the board draws phases, chips, overlaps and finish-to-start links.
    dependencies: bool = False


TEAMS = {
    "small": TeamShape("small", messages=40, tasks=10),
    "real": TeamShape("large", messages=360, tasks=30),
    "big": TeamShape("large", messages=5 * 360, tasks=8 * 30),
    "big-deps": TeamShape("large", messages=5 * 360, tasks=8 * 30, dependencies=True),
}


class BusyTeamSim(Sim):
    """The generator's simulation with extra messages and task moves in its work rounds,
    spread evenly over them, so a team reaches a given count of each."""

    def setup_extras(self, messages: int, tasks: int, dependencies: bool = False) -> None:
        self.dependencies = dependencies
        self.extra_messages = messages
        self.extra_tasks = tasks
        self.rounds_done = 0
        self.messages_sent = 0
        self.tasks_made = 0
        self.extra_task_ids: list[str] = []

    def _active_ids(self) -> list[str]:
        return [
            m.id
            for m in self.members
            if m.role == "teammate"
            and m.phase == "active"
            and m.log is not None
            and S.COLD_OPEN_STEP not in m.traits
        ]

    def work_round(self, logs: list[Any]) -> None:
        super().work_round(logs)
        self.rounds_done += 1
        rounds = self.scale.rounds + 1  # the script's rounds and its last one
        share = min(self.rounds_done / rounds, 1.0)
        active = self._active_ids()
        if not active:
            return
        lead_id = self.lead_log().member_id
        people = [lead_id, *active]
        while self.messages_sent < round(self.extra_messages * share):
            sender, target = self.rng.sample(people, 2)
            self.message(sender, target, S.NORMAL, self.text.take(self.rng.randint(80, 2400)))
            self.messages_sent += 1
        # The script names "task-7" by id: extra tasks only come after it.
        if len(self.tasks) < 7:
            return
        while self.tasks_made < round(self.extra_tasks * share):
            subject = f"Extra work item {self.tasks_made + 1}"
            made: list[str] = []
            earlier = self.extra_task_ids[-CHAINS:]
            # CHAINS chains side by side (each task waits on the one CHAINS before) and,
            # every tenth task, a fan-in of the last three.
            chain = earlier[:1] if len(earlier) == CHAINS else []
            fan_in = self.tasks_made % 10 == 0
            blocked = (earlier[-3:] if fan_in else chain) if self.dependencies else []
            scopes = [f"src/area{self.tasks_made % 6}"] if self.dependencies else []

            def create(m: list[str] = made, s: str = subject, b: list[str] = blocked,
                       w: list[str] = scopes) -> None:  # fmt: skip
                m.append(self.create_task(lead_id, s, blocked_by=b, write_scopes=w))

            self.act(lead_id, create)
            self.extra_task_ids.extend(made)
            self.tasks_made += 1
        # Waiting tasks move on only as their blockers finish: finish work sooner then.
        done_p = 0.6 if self.dependencies else 0.3
        for task in self.tasks:
            if task.id not in self.extra_task_ids:
                continue
            roll = self.rng.random()
            if self.ready(task) and roll < 0.6:
                actor = self.rng.choice(active)
                self.act(actor, lambda a=actor, t=task.id: self.update_task(a, t, "claim"))
            elif task.status == "in_progress" and task.owner_id in active and roll < done_p:
                owner = task.owner_id
                self.act(owner, lambda a=owner, t=task.id: self.update_task(a, t, "complete"))


def _simulate(root: Path, shape: TeamShape, *, seed: int, start_ms: int, time_scale: float) -> Sim:
    sim = BusyTeamSim(
        root,
        rng=random.Random(seed),
        scale=SCALES[shape.scale],
        name="bench",
        seed=seed,
        cwd="/Users/dev/work/bench-service",
        start_ms=start_ms,
        compress=True,
    )
    sim.time_scale = time_scale
    # The "full" script itself writes 17 messages and 7 tasks.
    sim.setup_extras(
        max(shape.messages - 17, 0), max(shape.tasks - 7, 0), dependencies=shape.dependencies
    )
    _full(sim, live=True, extra=SCALES[shape.scale].extra_teammates)
    sim.finish()
    return sim


def generate_recent_team(
    root: Path, shape: TeamShape, *, seed: int = 7, ends_ms: int | None = None
) -> TeamSpec:
    """The team with its history in the hour before now, or before ``ends_ms``
    (calibrated by two dry runs in a scratch folder: the generator's times scale with
    its ``time_scale``)."""
    scratch = Path(tempfile.mkdtemp(prefix="dsh-gantt-calibrate-"))
    try:
        span = 0
        scale = 1.0
        for attempt in range(2):
            dry = _simulate(scratch / str(attempt), shape, seed=seed, start_ms=0, time_scale=scale)
            span = dry.spec().last_event_time
            scale *= HOUR_MS / max(span, 1)
        dry = _simulate(scratch / "2", shape, seed=seed, start_ms=0, time_scale=scale)
        span = dry.spec().last_event_time
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    end = int(time.time() * 1000) if ends_ms is None else ends_ms
    start = end - span - 5_000
    return _simulate(root, shape, seed=seed, start_ms=start, time_scale=scale).spec()
