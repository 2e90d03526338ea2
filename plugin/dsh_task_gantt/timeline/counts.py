"""Every count that goes into the notes and the diagnostics (filled while drawing)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Counts:
    messages: dict[str, int] = field(default_factory=dict)
    message_marks: int = 0
    pending: int = 0
    prompts: int = 0
    prompt_copies: int = 0
    undated_prompts: int = 0
    injected: dict[str, int] = field(default_factory=dict)
    skipped_inherited: dict[str, int] = field(default_factory=dict)
    turns: int = 0
    open_turns: int = 0
    orphan_ends: int = 0
    duplicate_starts: int = 0
    ends_before_start: int = 0
    undated_turns: int = 0
    idless_turn_events: int = 0
    closed_by_idless_end: int = 0
    closed_by_restore: int = 0
    relays: int = 0
    briefs: int = 0
    relay_copies: int = 0
    #: ``team/*`` records of another team in the lead's log, by teamId.
    foreign: dict[str, int] = field(default_factory=dict)
