"""The notes: what the timeline says in words about what it read, drew and left out.

Every count in a note is one of :class:`~.counts.Counts` (or the task replay's), so
the notes add up with the diagnostics.
"""

from __future__ import annotations

from ..fold.text import text
from ..plurals import counted
from .dsh_rules import dsh_refusals
from .model import Model
from .roster import Lane
from .task_graph import graph_notes

#: Member phases in which having no log is expected rather than a loss.
_NO_LOG_YET_PHASES = frozenset({"failed", "provisioning"})


def degraded_lanes(model: Model) -> tuple[list[Lane], list[Lane]]:
    """The lanes that make the timeline ``partial`` — those whose log could not be read,
    and those whose log stops being readable part way — with a note on each, and on
    members that have no log yet (which make nothing partial)."""
    unreadable = [
        lane for lane in model.lanes if lane.source and lane.source.channel == "unreadable"
    ]
    # A member that failed (or is still being set up) may never have written a log:
    # nothing is missing from the picture, so the timeline is not "partial".
    never_started = [lane for lane in unreadable if lane.phase in _NO_LOG_YET_PHASES]
    unreadable = [lane for lane in unreadable if lane not in never_started]
    for lane in never_started:
        state = "failed to start" if lane.phase == "failed" else "is still being set up"
        model.notes.append(f"{lane.name} {state} and has no log to read; its lane is empty")
    # A log that turns to garbage after readable frames: what was read is drawn, the
    # rest is missing from the picture.
    cut_short = [lane for lane in model.lanes if lane.source and lane.source.stopped_at]
    for lane in cut_short:
        where = lane.source.stopped_at if lane.source else None
        model.notes.append(
            f"the log of {lane.name} stops being readable ({text(where, 512)}); "
            "only what came before that point is drawn"
        )
    return unreadable, cut_short


def format_notes(model: Model) -> list[str]:
    """Which log file (so which format) each lane was read from."""
    by_name: dict[str, list[str]] = {}
    for lane in model.lanes:
        name = lane.source.log_name if lane.source else None
        if name:
            by_name.setdefault(name, []).append(lane.name)
    notes = []
    for name, lanes in sorted(by_name.items()):
        fmt = "4" if ".v4." in name else "3" if ".v3." in name else "0"
        notes.append(
            f"read {counted(len(lanes), 'log')} from {name} (format {fmt}): {', '.join(lanes)}"
        )
    return notes


_MESSAGE_PARTS = (
    ("two lanes", "drawn on two lanes"),
    ("to itself", "sent to the sender itself, drawn once"),
    ("target outside", "to a target outside the team, drawn on the sender's lane only"),
    ("sender outside", "from a sender outside the team, drawn on the recipient's lane only"),
    (
        "no queue record",
        "delivered without a queue record, drawn on the recipient's lane with an unknown sender",
    ),
    ("not drawn", "not drawn (no time, or neither end on the team)"),
)


def notes_of(model: Model, unreadable: list[Lane]) -> list[str]:
    c = model.counts
    notes = model.notes
    for lane in unreadable:
        reason = (lane.source.error if lane.source else None) or "unknown reason"
        session = f" (session {lane.session_id})" if lane.session_id != lane.name else ""
        notes.append(
            f"could not read the log of {lane.name} ({text(reason, 1024)}); its lane is "
            f"empty{session}"
        )
    for lane in model.lanes:
        skipped = c.skipped_inherited.get(lane.id)
        if skipped:
            notes.append(
                f"skipped {counted(skipped, 'event')} inherited from the lead in {lane.name}'s log"
            )
    closed = c.turns - c.open_turns
    notes.append(
        f"{counted(c.turns, 'turn')} drawn: {closed} closed, {c.open_turns} with no end recorded"
    )
    if c.orphan_ends:
        notes.append(f"{counted(c.orphan_ends, 'turn end')} without a start, not drawn")
    if c.ends_before_start:
        notes.append(
            f"{counted(c.ends_before_start, 'turn end')} dated before the turn's start, "
            "drawn with zero length"
        )
    if c.undated_turns:
        notes.append(f"{counted(c.undated_turns, 'turn start')} without a time, not drawn")
    if c.duplicate_starts:
        notes.append(
            f"{counted(c.duplicate_starts, 'repeated turn start')} ignored (earliest kept)"
        )
    if c.idless_turn_events:
        notes.append(f"{counted(c.idless_turn_events, 'turn start')} without a turn id ignored")
    if c.closed_by_idless_end:
        notes.append(
            f"{counted(c.closed_by_idless_end, 'turn')} closed by a turn end without a turn id "
            "(the latest turn open before it)"
        )
    if c.closed_by_restore:
        notes.append(
            f"{counted(c.closed_by_restore, 'turn')} still open when the session was reloaded "
            "(session/end-seed), closed there as interrupted"
        )
    total = sum(c.messages.values())
    if total:
        parts = [f"{c.messages[k]} {words}" for k, words in _MESSAGE_PARTS if c.messages[k]]
        notes.append(
            f"{counted(total, 'unique message')}: {', '.join(parts)}; "
            f"{counted(c.message_marks, 'message mark')} in all"
        )
    else:
        notes.append("0 unique messages")
    if c.relays or c.briefs:
        notes.append(
            f"of these, {counted(c.relays, 'message')} relayed between a parent agent and its "
            f"child and {counted(c.briefs, 'brief')} from a parent agent to its child "
            f"({counted(c.relay_copies, 'copy', 'copies')} in other logs not drawn again)"
        )
    for team_id, n in sorted(model.counts.foreign.items()):
        notes.append(
            f"{counted(n, 'team record')} of another team (teamId {team_id}) in the lead's "
            "log not used"
        )
    if c.pending:
        notes.append(
            f"{counted(c.pending, 'message')} queued but not yet delivered "
            "(drawn at the queued time)"
        )
    if model.duplicate_queued or model.duplicate_delivered:
        notes.append(
            f"{counted(model.duplicate_queued, 'repeated queue record')} (first kept) and "
            f"{counted(model.duplicate_delivered, 'repeated delivery', 'repeated deliveries')} "
            "(last kept)"
        )
    notes.append(
        f"{counted(c.prompts, 'human prompt')} drawn, each once on the first lane whose log "
        f"carries it ({counted(c.prompt_copies, 'copy', 'copies')} not drawn again: logged "
        "twice, spliced into the inbox first, or in another log)"
    )
    if c.undated_prompts:
        notes.append(f"{counted(c.undated_prompts, 'human prompt')} without a time, not drawn")
    injected_total = sum(c.injected.values())
    if injected_total:
        by_kind = ", ".join(
            f"{kind} {n}" for kind, n in sorted(c.injected.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        notes.append(
            f"{counted(injected_total, 'runtime-injected user message')} not drawn as "
            f"human prompts: {by_kind}"
        )
    r = model.replay
    notes.append(
        f"{counted(len(model.tasks), 'task')}: {counted(r.applied_revisions, 'revision')} "
        "replayed from the lead's log"
    )
    if r.duplicate_revisions or r.rewound_revisions:
        notes.append(
            f"{counted(r.duplicate_revisions + r.rewound_revisions, 'task revision')} skipped "
            f"({r.duplicate_revisions} duplicate, {r.rewound_revisions} rewound); "
            "a task's state never goes back"
        )
    if r.invalid_snapshots:
        notes.append(f"{counted(r.invalid_snapshots, 'task snapshot')} without a valid revision")
    if r.undated_revisions:
        notes.append(
            f"{counted(r.undated_revisions, 'task revision')} without any time, left out of "
            "the history"
        )
    if r.ambiguous_revisions or r.unattributed_revisions:
        notes.append(
            f"{counted(r.ambiguous_revisions + r.unattributed_revisions, 'task revision')} "
            f"without an actor ({r.ambiguous_revisions} ambiguous, "
            f"{r.unattributed_revisions} with no matching tool call)"
        )
    for task_id in r.live_only_tasks:
        notes.append(
            f"task {task_id} is on the live board but not in the lead's log; its history "
            "comes from the members' tool calls"
        )
    if model.deleted:
        notes.append(
            f"{counted(model.deleted, 'deleted task')} listed with its history but on no lane"
        )
    if model.orphaned_owner:
        notes.append(
            f"{counted(model.orphaned_owner, 'task')} owned by someone outside the team, "
            "shown as unassigned"
        )
    notes.extend(graph_notes(model.graph))
    refusals = dsh_refusals(model)
    if refusals:
        notes.append(
            "DSH's own team projection would refuse this team ("
            + "; ".join(refusals)
            + "); it is drawn as read"
        )
    skipped = sum(t.skipped for t in model.tokens.values())
    bad_chunks = sum(t.bad_chunks for t in model.tokens.values())
    if skipped:
        notes.append(
            f"{counted(skipped, 'token count')} not a non-negative integer, skipped"
            + (
                f" ({counted(bad_chunks, 'usage chunk')} not an object: "
                "the assistant message's usage counted instead)"
                if bad_chunks
                else ""
            )
        )
    unknown = sum(lane.fold.unknown_events for lane in model.lanes)
    malformed = sum(lane.fold.malformed_events for lane in model.lanes)
    if unknown:
        notes.append(f"{counted(unknown, 'event')} of unknown types skipped")
    if malformed:
        notes.append(f"{counted(malformed, 'malformed event')} skipped")
    return notes
