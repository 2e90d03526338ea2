"""Deterministic generator of real-format DSH team logs (tests, the demo, benchmarks).

``generate_team`` writes a team under a sessions root and returns its
:class:`TeamSpec` (the ground truth); ``LiveTeam`` keeps appending to one.
"""

from __future__ import annotations

from dsh_task_gantt.fixturegen.live import LiveTeam
from dsh_task_gantt.fixturegen.scale import SCALES, Scale
from dsh_task_gantt.fixturegen.scenario import (
    DEFAULT_START_MS,
    FIXTURE_SEED,
    SHAPES,
    STORY_SEED_OFFSET,
    STORY_TEAM,
    generate_fixture_set,
    generate_team,
)
from dsh_task_gantt.fixturegen.spec import (
    MemberSpec,
    MessageSpec,
    PromptSpec,
    RewindSpec,
    TaskRevisionSpec,
    TaskSpec,
    TeamSpec,
)
from dsh_task_gantt.fixturegen.writer import (
    Event,
    SessionLogWriter,
    compress_frame,
    encode_event,
    header_record,
    session_log_path,
)

__all__ = [
    "DEFAULT_START_MS",
    "FIXTURE_SEED",
    "SCALES",
    "SHAPES",
    "STORY_SEED_OFFSET",
    "STORY_TEAM",
    "Event",
    "LiveTeam",
    "MemberSpec",
    "MessageSpec",
    "PromptSpec",
    "RewindSpec",
    "Scale",
    "SessionLogWriter",
    "TaskRevisionSpec",
    "TaskSpec",
    "TeamSpec",
    "compress_frame",
    "encode_event",
    "generate_fixture_set",
    "generate_team",
    "header_record",
    "session_log_path",
]
