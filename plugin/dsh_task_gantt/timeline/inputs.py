"""What the timeline is built from: each lane's source (its fold and what the host
said about it) and the team's snapshot; and where a forked log's own events begin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..events import Channel, SessionHeader, as_int
from ..fold import EMPTY_FOLD, LaneFold


@dataclass(frozen=True, slots=True)
class LaneSource:
    session_id: str | None
    channel: Channel
    error: str | None
    header: SessionHeader | None
    #: From the host's handle/session (priority 1 for the seed cut).
    inherited_event_count: int | None
    #: From the live agents registry; ``None`` when the agent is not live.
    agent_status: Literal["running", "idle"] | None
    fold: LaneFold = EMPTY_FOLD
    #: The persisted file read (``session.v3.jsonl.zstd``: its name says the format).
    log_name: str | None = None
    #: Where a log that turns to garbage after readable frames stopped being read.
    stopped_at: str | None = None


@dataclass(frozen=True, slots=True)
class TeamSnapshot:
    requested_session_id: str
    root_session_id: str
    lead: LaneSource
    members: Mapping[str, LaneSource]
    live_members: Sequence[Mapping[str, Any]] | None
    live_tasks: Sequence[Mapping[str, Any]] | None
    running_children: Sequence[str]
    #: Only for ``generatedAt``; never used as an event time.
    generated_at: int
    service_notes: Sequence[str] = ()
    #: Sessions whose header names the root as ``parentSession`` (running or not).
    child_sessions: Sequence[str] = ()


def seed_cut(source: LaneSource) -> int:
    """Events with ``seq`` below this were inherited from the parent.

    Sources, in order: the host's count, the header's ``inheritedEventCount`` (or
    format 0's ``seedLength``), the child's ``subagent/descriptor``
    ``inheritedEventCount``, and for a seeded header the last inherited
    ``session/end-seed``. The counts are counts of events (positions): where a log's
    seqs start at 1 (format 0), the first own event's seq is the count plus 1.
    """
    fold = source.fold if isinstance(source.fold, LaneFold) else EMPTY_FOLD
    first_seq = fold.seq_ranges[0][0] if fold.seq_ranges else 0
    count = as_int(source.inherited_event_count)
    header = source.header if isinstance(source.header, SessionHeader) else None
    if count is None or count < 0:
        count = as_int(header.inherited_event_count) if header is not None else None
    if count is None or count < 0:
        count = descriptor_count(fold)
    if count is not None and count >= 0:
        return count + first_seq if count > 0 else 0
    if header is not None and header.is_seeded is True and fold.seed_end_seq is not None:
        return fold.seed_end_seq
    return 0


def descriptor_count(fold: LaneFold) -> int | None:
    """``inheritedEventCount`` of the log's first ``subagent/descriptor`` that has one."""
    for _seq, rec in sorted(fold.descriptors.items()):
        if rec.inherited_count is not None:
            return rec.inherited_count
    return None


def descriptor_label(fold: LaneFold, cut: int = 0) -> str | None:
    """The log's own descriptor label: a forked child may carry its parent's
    descriptor in the inherited prefix, so one at or after the cut comes first."""
    labels = sorted(
        (seq < cut, seq, rec.label) for seq, rec in fold.descriptors.items() if rec.label
    )
    return labels[0][2] if labels else None


def missing_source(session_id: str | None) -> LaneSource:
    """The source of a member whose log the shell did not hand over."""
    return LaneSource(
        session_id=session_id,
        channel="unreadable",
        error="no log was read for this member",
        header=None,
        inherited_event_count=None,
        agent_status=None,
        fold=EMPTY_FOLD,
    )
