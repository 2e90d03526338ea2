"""Fold one session log's events into a compact :class:`LaneFold` (pure, total).

``fold_lane`` looks at ``event.type`` first and touches ``data`` only for the types
it keeps; bulk types (assistant messages, tool results, requests) only contribute
their ``seq`` and ``time``. Every update is commutative (keyed by seq, max, count),
so the result does not depend on the order of the events and
``fold_lane(a + b) == fold_lane(b, start=fold_lane(a))``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from functools import partial
from itertools import chain, compress, repeat
from operator import add, itemgetter, not_, sub
from sys import intern
from typing import Any, TypeVar

import orjson

from ..events import MAX_SAFE_INT, EventRun, LogEvent, UsageColumns, as_int, as_time
from .appends import SeqMap, copied, last_keys, rewrote, settle
from .records import (
    EMPTY_FOLD,
    PACK_ROW,
    USAGE_IDS_AT,
    CatalogRec,
    DeliveredRec,
    DescriptorRec,
    LaneFold,
    MemberRec,
    PromptRec,
    QueuedRec,
    RelayRec,
    SpawnRec,
    TaskCallRec,
    TaskRec,
    TurnMark,
    UsageRec,
    joined_rec,
    new_usage_rec,
)
from .records import step_ids as spelled_step_ids
from .text import LABEL_CAP, MESSAGE_BODY_CAP, capped_body, content_text, key, text
from .usage import USAGE_KEYS, read_usage

#: Types the plugin knows but does not fold beyond seq/time (never counted as unknown).
_BULK = (
    "assistant/message",
    "assistant/attempt",
    "tool/result",
    "request/header",
    "request/context",
    "system/message",
    "session/title",
    "compaction/start",
    "compaction/end",
    "compaction/summary",
    # Seen in real logs and safe to skip (settings, approvals, streaming, plugins).
    "permission/preset",
    "sandbox/mode",
    "approval/policy",
    "approval/asked",
    "approval/decided",
    "model/selection",
    "workspace/changes",
    "developer/message",
    "image/offload",
    "llm/retry",
    "goal/change",
    "deliverables/presented",
    # DSH 0.1.1: the title model's request (its answer is a ``session/title``).
    "session/title-llm-request",
)
#: ``logs.reader.line_ends.LINE_ENDS``: the reader probes such a line's two ends for
#: its small fields instead of parsing it (the fold does not import the reader).
LINE_ENDS = "line-ends"

_R = TypeVar("_R")


#: LaneFold's fields that ``fold_lane`` keeps itself, whatever the event type. Every
#: other field is the state of the rules below and lives in ``_State.kept`` under its
#: LaneFold name, so a new record kind is one LaneFold field (and the rule filling it).
_BOOKKEEPING = frozenset(
    {"events_seen", "seq_ranges", "last_time", "unknown_events", "malformed_events"}
)
_KEPT = tuple(f.name for f in fields(LaneFold) if f.name not in _BOOKKEEPING)
#: Those of them that are maps (seq -> record, mostly), and the others (a few values).
_KEPT_MAPS = tuple(name for name in _KEPT if isinstance(getattr(EMPTY_FOLD, name), Mapping))
_KEPT_VALUES = tuple(name for name in _KEPT if name not in _KEPT_MAPS)


class _Kept(dict[str, Any]):
    """The rules' fields by LaneFold name: the values set at start; each map copied
    from ``base`` when a rule first touches it (copy-on-write: an append touches a few
    of the fold's maps, and a day's maps are long)."""

    __slots__ = ("base",)

    def __init__(self, base: LaneFold) -> None:
        super().__init__((name, getattr(base, name)) for name in _KEPT_VALUES)
        self.base = base

    def __missing__(self, name: str) -> Any:
        value = getattr(self.base, name)
        if isinstance(value, Mapping):
            value = copied(value)
        self[name] = value
        return value

    def peek(self, name: str) -> Any:
        """The field as it stands, for reading only: a map not touched yet is
        ``base``'s own (not copied: a rule that only looks, as a message looking for
        its step's chunk in a day of them, copies nothing)."""
        value = self.get(name, _NOT_KEPT)
        return getattr(self.base, name) if value is _NOT_KEPT else value


#: What ``_Kept.peek`` finds for a map not copied yet.
_NOT_KEPT: Any = object()


@dataclass(slots=True)
class _State:
    """Mutable working state of a fold (``start``'s maps are copied when touched)."""

    events_seen: int
    last_time: int | None
    unknown_events: int
    malformed_events: int
    #: The rules' fields by LaneFold name (see :class:`_Kept`).
    kept: _Kept
    #: Seqs seen in this call, merged into ``seq_ranges`` once at the end.
    new_seqs: list[int] = field(default_factory=list)
    #: False once a usage chunk's step arrived: its messages are dropped at the end.
    usage_pruned: bool = True


def _working_copy(base: LaneFold) -> _State:
    """``base`` as a working state (``base`` is not mutated)."""
    return _State(
        base.events_seen, base.last_time, base.unknown_events, base.malformed_events, _Kept(base)
    )


def _kept_fields(st: _State) -> dict[str, Any]:
    """The rules' fields of the fold made: the maps no rule touched are ``base``'s own."""
    kept = st.kept
    made = {name: getattr(kept.base, name) for name in _KEPT_MAPS}
    made.update(kept)
    for value in kept.values():
        if type(value) is SeqMap:
            settle(value)
    return made


#: A record a map does not hold (a held record may be ``None``: an end-seed's time).
_ABSENT: Any = object()


def _put(records: dict[int, _R], seq: int, record: _R) -> None:
    """Keep one record per seq; on a collision the smallest ``repr`` wins (order-free)."""
    existing = records.get(seq, _ABSENT)
    if existing is _ABSENT:
        records[seq] = record
    elif existing is None or repr(record) < repr(existing):
        rewrote(records, seq)
        records[seq] = record


def _mapping(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # what a reader gives: skip the ABC check (a hot path)
        return value
    return value if isinstance(value, Mapping) else {}


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(s for s in (text(v, MESSAGE_BODY_CAP) for v in value[:1024]) if s is not None)


#: ``TurnMark(...)`` without the named tuple's generated ``__new__`` (a lead's log has
#: thousands of turns, each folded on a cold read).
_new_mark: Callable[[tuple[str | None, int | None, str | None]], TurnMark] = partial(
    tuple.__new__, TurnMark
)


def _turn_key(value: Any) -> str | None:
    """:func:`key` of a turn id, a safe integer's without the calls (DSH numbers turns)."""
    if type(value) is int and -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
        return intern(str(value))
    return key(value)


def _put_mark(records: dict[int, TurnMark], seq: int, mark: TurnMark) -> None:
    """:func:`_put` for a turn mark: the usual seq is new (no call, no ``repr``)."""
    if seq in records:
        _put(records, seq, mark)
    else:
        records[seq] = mark


def _turn_start(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = data if type(data) is dict else _mapping(data)
    _put_mark(st.kept["turn_starts"], seq, _new_mark((_turn_key(d.get("turn")), time, None)))


def _turn_end(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = data if type(data) is dict else _mapping(data)
    reason = d.get("reason")
    kind = text(reason.get("kind")) if isinstance(reason, Mapping) else text(reason)
    mark = _new_mark((_turn_key(d.get("turn")), time, kind or "ended"))
    _put_mark(st.kept["turn_ends"], seq, mark)


def _step_start(st: _State, seq: int, time: int | None, data: Any) -> None:
    start, end = st.kept["step_marks"]
    if seq > start:
        st.kept["step_marks"] = (seq, end)


def _step_end(st: _State, seq: int, time: int | None, data: Any) -> None:
    start, end = st.kept["step_marks"]
    if seq > end:
        st.kept["step_marks"] = (start, seq)


#: Source kinds of a message relayed between a parent agent and its child.
RELAY_KINDS = frozenset({"coordinator", "subagent-report", "subagent-settled"})
#: How a subagent child's brief from its parent ends (the id is the parent's session).
_BRIEF_END = re.compile(r"Your parent agent id is\s+[`'\"]?([A-Za-z0-9._:-]{1,128})[`'\"]?\W*\Z")


def _prompt(message: Mapping[str, Any], time: int | None) -> PromptRec:
    raw = content_text(message.get("content"))
    body, length = capped_body(raw)
    brief = _BRIEF_END.search(raw[-512:])
    return PromptRec(key(message.get("id")), time, body, length, brief.group(1) if brief else None)


def _user_message(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = _mapping(data)
    source = _mapping(d.get("source"))
    kind = source.get("kind")
    if kind == "user":
        _put(st.kept["prompts"], seq, _prompt(d, time))
        return
    sender = key(source.get("senderSessionId"))
    if kind in RELAY_KINDS and sender is not None:
        raw = content_text(d.get("content")) or (
            text(source.get("summary"), MESSAGE_BODY_CAP) or ""
        )
        body, length = capped_body(raw)
        _put(st.kept["relays"], seq, RelayRec(key(d.get("id")), kind, sender, time, body, length))
        return
    _put(st.kept["injected"], seq, text(kind, 64) or "unknown")


def _inbox_spliced(st: _State, seq: int, time: int | None, data: Any) -> None:
    """The human's prompt, spliced into the inbox before it is logged as a
    ``user/message`` with the same id (one prompt: deduplicated by id later)."""
    inserted = _mapping(data).get("inserted")
    for message in inserted[:64] if isinstance(inserted, list) else ():
        m = _mapping(message)
        if _mapping(m.get("source")).get("kind") == "user":
            _put(st.kept["prompts"], seq, _prompt(m, time))
            return


def _descriptor(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = _mapping(data)
    child = key(d.get("childSessionId")) or key(d.get("childId"))
    if child is not None:
        # Some writers log a launched child's descriptor in the parent's log, naming
        # the child: that is what a catalog entry says.
        _put(st.kept["catalog"], seq, CatalogRec(child, None, text(d.get("label"), 1024), time))
        return
    count = as_int(d.get("inheritedEventCount"))
    rec = DescriptorRec(
        count if count is not None and count >= 0 else None, text(d.get("label"), 1024)
    )
    _put(st.kept["descriptors"], seq, rec)


def _is_replace(surface_op: Any) -> bool:
    """An envelope ``surfaceOp`` that rewrites earlier messages (a summary)."""
    return isinstance(surface_op, Mapping) and surface_op.get("op") == "replace"


def _arguments(raw: Any) -> Mapping[str, Any]:
    """Tool-call arguments: a JSON string (or, defensively, an object)."""
    if isinstance(raw, str | bytes):
        try:
            raw = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {}
    return _mapping(raw)


def _tool_call(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = _mapping(data)
    name = d.get("name")
    if name == "team_task_update":
        args = _arguments(d.get("arguments"))
        revision = as_int(args.get("expected_revision"))
        rec = TaskCallRec(
            "update", key(args.get("task_id")), revision, None, text(args.get("action")), time
        )
        _put(st.kept["task_calls"], seq, rec)
    elif name == "team_task_create":
        args = _arguments(d.get("arguments"))
        subject = text(args.get("subject"), MESSAGE_BODY_CAP)
        _put(st.kept["task_calls"], seq, TaskCallRec("create", None, None, subject, None, time))
    elif isinstance(name, str):
        # A spawn_teammate call, or a subagent tool's (its name is configurable): the
        # brief is the ``prompt`` argument.
        args = _arguments(d.get("arguments"))
        prompt = args.get("prompt")
        if not isinstance(prompt, str):
            return
        member = text(args.get("name")) if name == "spawn_teammate" else None
        if name == "spawn_teammate" and not member:
            return
        body, length = capped_body(prompt)
        description = text(args.get("description"), LABEL_CAP)
        _put(
            st.kept["spawns"],
            seq,
            SpawnRec(text(name, 128) or "", member, description, body, length, time),
        )


def _team_member(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = _mapping(data)
    m = _mapping(d.get("member"))
    member_id = key(m.get("id"))
    if member_id is None:
        st.malformed_events += 1
        return
    rec = MemberRec(
        team_id=key(d.get("teamId")),
        id=member_id,
        name=text(m.get("name")) or None,
        phase=text(m.get("phase")),
        error=text(m.get("error"), MESSAGE_BODY_CAP),
        description=text(m.get("description"), MESSAGE_BODY_CAP),
        context=text(m.get("context")),
        time=time,
    )
    _put(st.kept["members"], seq, rec)


def _catalog(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = _mapping(data)
    child = key(d.get("childId"))
    if child is None:
        st.malformed_events += 1
        return
    rec = CatalogRec(child, as_time(d.get("childCreatedAt")), text(d.get("label"), 1024), time)
    _put(st.kept["catalog"], seq, rec)


def _team_task(st: _State, seq: int, time: int | None, data: Any) -> None:
    t = _mapping(_mapping(data).get("task"))
    task_id = key(t.get("id"))
    if task_id is None:
        st.malformed_events += 1
        return
    rec = TaskRec(
        id=task_id,
        revision=as_int(t.get("revision")),
        subject=text(t.get("subject"), MESSAGE_BODY_CAP),
        description=text(t.get("description"), MESSAGE_BODY_CAP),
        status=text(t.get("status")),
        blocked_by=_strings(t.get("blockedBy")),
        write_scopes=_strings(t.get("writeScopes")),
        owner_id=key(t.get("ownerId")),
        time=time,
        team_id=key(_mapping(data).get("teamId")),
    )
    _put(st.kept["tasks"], seq, rec)


def _queued(st: _State, seq: int, time: int | None, data: Any) -> None:
    # version 1 records also carry ``delivery`` ("quiet" | "wakeup"): not used.
    m = _mapping(_mapping(data).get("message"))
    message_id = key(m.get("id"))
    if message_id is None:
        st.malformed_events += 1
        return
    body, length = capped_body(content_text(m.get("content")))
    rec = QueuedRec(
        id=message_id,
        sender_id=key(m.get("senderId")),
        sender_name=text(m.get("senderName")) or None,
        target_id=key(m.get("targetId")),
        body=body,
        length=length,
        time=time,
        team_id=key(_mapping(data).get("teamId")),
    )
    _put(st.kept["queued"], seq, rec)


def _delivered(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = _mapping(data)
    message_id = key(d.get("messageId"))
    if message_id is None:
        st.malformed_events += 1
        return
    rec = DeliveredRec(message_id, key(d.get("targetId")), time, key(d.get("teamId")))
    _put(st.kept["delivered"], seq, rec)


def _end_seed(st: _State, seq: int, time: int | None, data: Any) -> None:
    _put(st.kept["end_seeds"], seq, time)
    last_inherited = st.kept["seed_end_seq"]
    if _mapping(data).get("inherited") is True and (last_inherited is None or seq > last_inherited):
        st.kept["seed_end_seq"] = seq


def _assistant_chunk(st: _State, seq: int, time: int | None, data: Any) -> None:
    d = _mapping(data)
    chunk = _mapping(d.get("chunk"))
    if chunk.get("type") != "usage":
        return
    # A usage that is not an object keeps counts None: the step falls back to its
    # message, and the skipped value is still counted.
    counts, skipped = read_usage(chunk.get("usage"))
    turn, step = key(d.get("turn")), key(d.get("step"))
    _put(st.kept["usage_chunks"], seq, new_usage_rec(turn, step, time, counts, skipped))
    if counts is not None and turn is not None and step is not None:
        _chunk_step(st, (turn, step), seq)


def _chunk_step(st: _State, step: tuple[str, str], seq: int) -> None:
    steps = st.kept["usage_chunk_steps"]
    held = steps.get(step)
    if held is None:
        steps[step] = seq
    elif seq > held:
        rewrote(steps, step)
        steps[step] = seq
    st.usage_pruned = False


def _assistant_message(st: _State, seq: int, time: int | None, data: Any) -> None:
    # A reader's probe hands over only turn, step, usage and the message's source;
    # a reader that skipped the line entirely hands over nothing to count.
    if data is None:
        return
    d = _mapping(data)
    _note_source(st, seq, _mapping(d.get("message")).get("source"))
    turn, step = key(d.get("turn")), key(d.get("step"))
    if turn is not None and step is not None and (turn, step) in st.kept.peek("usage_chunk_steps"):
        return  # the step's chunk counts, never its message too
    counts, skipped = read_usage(d.get("usage"))
    _put(st.kept["usage_messages"], seq, new_usage_rec(turn, step, time, counts, skipped))


def _note_source(st: _State, seq: int, value: Any) -> None:
    """The message's ``source`` names the lane's model when it is the latest that does."""
    source = _mapping(value)
    provider, model = text(source.get("provider")), text(source.get("model"))
    if provider is not None or model is not None:
        held = st.kept["usage_source"]
        named = (seq, provider, model)
        if held is None or _source_rank(named) > _source_rank(held):
            st.kept["usage_source"] = named


def _source_rank(named: tuple[int, str | None, str | None]) -> tuple[int, str, str]:
    """Latest seq first; on one seq the names decide (order-free)."""
    return (named[0], named[1] or "", named[2] or "")


#: A (seq, source) row's seq.
_SEQ_OF = itemgetter(0)


#: A usage record's step, as the record spells it (``records.step_ids``): sliced in C,
#: not decoded (a lane keeps thousands of messages, passed over after each append).
_STEP_OF = itemgetter(slice(USAGE_IDS_AT, None))


def _prune_messages(st: _State) -> None:
    """Drop the messages of steps a chunk arrived for (the canonical form: equal
    events in any order and any split give equal folds)."""
    steps = st.kept["usage_chunk_steps"]
    # Looked at, copied only when a message goes (most appends' chunks drop none).
    messages = st.kept.peek("usage_messages")
    if steps and messages:
        were = messages.source if "usage_messages" in st.kept else messages
        came = _steps_came(steps, were)
        if len(came) > len(messages):
            # (A fold from scratch: every step came. Each message's ids read once.)
            gone = [s for s, rec in messages.items() if rec.fields()[:2] in came]
        else:
            spelled = {spelled_step_ids(*step) for step in came}
            # Checked in C first: most appends' chunks are for steps with no message kept.
            gone = []
            if not spelled.isdisjoint(map(_STEP_OF, messages.values())):
                gone = [s for s, rec in messages.items() if _STEP_OF(rec) in spelled]
        if gone:
            messages = st.kept["usage_messages"]
        for seq in gone:
            rewrote(messages, seq)
            del messages[seq]
    st.usage_pruned = True


def _steps_came(
    steps: Mapping[Any, int], were_messages: Mapping[int, UsageRec] | None
) -> AbstractSet[Any]:
    """The steps whose messages may have to go: those this call's chunks added, when
    the fold started from one that kept none of its own steps' messages (a fold's, or
    one holding no steps or no messages); else every step. ``were_messages``: the
    messages the fold started with."""
    were_steps = steps.source if type(steps) is SeqMap else None
    if were_steps is None or were_messages is None:
        return steps.keys()
    if not (type(were_steps) is SeqMap or not were_steps) or not (
        type(were_messages) is SeqMap or not were_messages
    ):
        return steps.keys()
    # A step's key is never dropped and a later chunk keeps its place: the new ones
    # are the last.
    return set(last_keys(steps, len(steps) - len(were_steps)))


def _ignore(st: _State, seq: int, time: int | None, data: Any) -> None:
    return None


_Handler = Callable[[_State, int, int | None, Any], None]


@dataclass(frozen=True, slots=True)
class EventRule:
    """How the fold takes one event type, and what a reader may skip for it.

    ``skip``: the handler never reads the data, so a reader may hand over the
    type, seq and time only. ``markers``: with ``skip``, only lines containing one of
    these bytes need parsing (the rest are data the handler ignores). ``run_mark``:
    the handler needs the latest seq of this type, which an :class:`EventRun` carries.
    """

    handler: _Handler
    skip: bool = False
    markers: tuple[bytes, ...] = ()
    run_mark: bool = False
    #: With ``skip``: the reader hands over only the small fields at the line's two
    #: ends (``LINE_ENDS``), never parsing the long middle.
    ends: bool = False


#: One registration per event type: the handler and the reader's leeway for it. The
#: reader's skip lists, the run marks and the fold's fast path are all derived from
#: this table, so a type the fold starts reading cannot stay skipped by a reader.
EVENT_RULES: Mapping[str, EventRule] = {
    "turn/start": EventRule(_turn_start),
    "turn/end": EventRule(_turn_end),
    # Steps of one session run one after another: the latest step/start and step/end
    # seqs say whether one is open, without their data.
    "step/start": EventRule(_step_start, skip=True, run_mark=True),
    "step/end": EventRule(_step_end, skip=True, run_mark=True),
    "user/message": EventRule(_user_message),
    # A tool call matters only when it creates or updates a task (its line then holds
    # the tool's name) or starts a child with a brief (a ``prompt`` argument);
    # team_task_list and team_task_get are most of a lead's calls.
    "tool/call": EventRule(
        _tool_call,
        skip=True,
        # A brief's argument, inside the arguments' JSON string (or an object).
        markers=(b"team_task_update", b"team_task_create", b'\\"prompt\\"', b'"prompt"'),
    ),
    "team/member": EventRule(_team_member),
    "subagent/catalog": EventRule(_catalog),
    "team/task": EventRule(_team_task),
    "team/message/queued": EventRule(_queued),
    "team/message/delivered": EventRule(_delivered),
    "session/end-seed": EventRule(_end_seed),
    "agent/inbox/spliced": EventRule(_inbox_spliced),
    "subagent/descriptor": EventRule(_descriptor),
    # Token use (HOST §8). A usage chunk is a short line among many text chunks; an
    # assistant message is long, and its usage sits at one end of its line.
    "assistant/chunk": EventRule(_assistant_chunk, skip=True, markers=(b'"usage"',)),
    "assistant/message": EventRule(_assistant_message, skip=True, ends=True),
    # The header line's type: never an event of a reader, known all the same.
    "session": EventRule(_ignore),
    **{t: EventRule(_ignore, skip=True) for t in _BULK if t != "assistant/message"},
}

#: Types the plugin knows but does not fold beyond seq/time (never counted as unknown).
BULK_TYPES = frozenset(
    t
    for t, rule in EVENT_RULES.items()
    if rule.handler in (_ignore, _assistant_message, _assistant_chunk)
)
#: What a reader may leave unparsed for this fold (``LogReader``'s ``skip_types``):
#: ``None`` for types whose data is never read, markers for those read only when a
#: line contains one.
UNREAD_DATA: Mapping[str, tuple[bytes, ...] | str | None] = {
    t: LINE_ENDS if rule.ends else rule.markers or None
    for t, rule in EVENT_RULES.items()
    if rule.skip
}
#: Types whose latest seq a reader's :class:`EventRun` should carry (``run_marks``).
RUN_MARKS: tuple[str, ...] = tuple(sorted(t for t, rule in EVENT_RULES.items() if rule.run_mark))
_HANDLERS: Mapping[str, _Handler] = {t: rule.handler for t, rule in EVENT_RULES.items()}
_STEP_MARKERS: Mapping[str, _Handler] = {
    t: rule.handler for t, rule in EVENT_RULES.items() if rule.run_mark
}
#: Folded from seq and time alone (the fold's fast path).
_SEQ_TIME_ONLY = frozenset(
    t for t, rule in EVENT_RULES.items() if rule.skip and not rule.markers and not rule.ends
)


def _runs_of(seqs: list[int]) -> list[tuple[int, int]]:
    """Sorted disjoint runs of consecutive integers covering ``seqs`` (C-level loops:
    a cold read hands over tens of thousands of seqs)."""
    if not seqs:
        return []
    low, high = min(seqs), max(seqs)
    distinct_seqs = set(seqs)
    if len(distinct_seqs) == high - low + 1:
        # As many distinct seqs as the span holds: every one of them, one run (a log's
        # seqs nearly always are; no sort, no pass for the breaks).
        return [(low, high)]
    distinct = sorted(distinct_seqs)
    # Where the next seq is not this one plus one, a run ends.
    breaks = list(
        compress(range(1, len(distinct)), map((1).__ne__, map(sub, distinct[1:], distinct)))
    )
    firsts = map(distinct.__getitem__, [0, *breaks])
    lasts = map(distinct.__getitem__, [b - 1 for b in breaks] + [len(distinct) - 1])
    return list(zip(firsts, lasts, strict=True))


def _merge_ranges(
    ranges: tuple[tuple[int, int], ...], new_seqs: list[int]
) -> tuple[tuple[int, int], ...]:
    """Canonical sorted disjoint ranges covering ``ranges`` and ``new_seqs``."""
    if not new_seqs:
        return ranges
    spans = sorted([*ranges, *_runs_of(new_seqs)])
    merged: list[tuple[int, int]] = []
    lo, hi = spans[0]
    for a, b in spans[1:]:
        if a <= hi + 1:
            hi = max(hi, b)
        else:
            merged.append((lo, hi))
            lo, hi = a, b
    merged.append((lo, hi))
    return tuple(merged)


def fold_lane(events: Iterable[Any], start: LaneFold | None = None) -> LaneFold:
    """Fold ``events`` onto ``start`` (not mutated). Pure and total."""
    base = start if isinstance(start, LaneFold) else EMPTY_FOLD
    st = _working_copy(base)
    try:
        iterator = iter(events)
    except TypeError:
        iterator = iter(())
    seen = 0
    new_seqs = st.new_seqs
    for event in iterator:
        seen += 1
        if type(event) is EventRun:
            try:
                seen += _fold_run(st, event) - 1
            except Exception:  # a run built by someone else: malformed, not fatal
                st.malformed_events += 1
            continue
        # Fast paths for a reader's LogEvent with a safe seq and time: the lines whose
        # data the fold never reads (most of them), then those of a type with a handler
        # (turn marks, messages, calls), their checks inline. Everything else goes the
        # long way (``_fold_one``).
        if type(event) is LogEvent:
            etype, seq, time, data, _, surface_op = event
            if etype in _SEQ_TIME_ONLY:
                if (
                    type(seq) is int
                    and 0 <= seq <= MAX_SAFE_INT
                    and (time is None or (type(time) is int and 0 <= time <= MAX_SAFE_INT))
                ):
                    new_seqs.append(seq)
                    if time is not None and (st.last_time is None or time > st.last_time):
                        st.last_time = time
                    marker = _STEP_MARKERS.get(etype)
                    if marker is not None:
                        marker(st, seq, time, None)
                    continue
            elif (
                type(etype) is str
                and (handler := _HANDLERS.get(etype)) is not None
                and type(seq) is int
                and 0 <= seq <= MAX_SAFE_INT
                and (time is None or (type(time) is int and 0 <= time <= MAX_SAFE_INT))
            ):
                new_seqs.append(seq)
                if time is not None and (st.last_time is None or time > st.last_time):
                    st.last_time = time
                try:
                    if handler is _user_message and _is_replace(surface_op):
                        # A summary rewriting earlier messages: never a new prompt.
                        _put(st.kept["injected"], seq, "summary")
                    elif handler is not _ignore:
                        handler(st, seq, time, data)
                except Exception:  # untrusted input: one bad event never breaks the fold
                    st.malformed_events += 1
                continue
        try:
            _fold_one(st, event)
        except Exception:  # untrusted input: one bad event never breaks the fold
            st.malformed_events += 1
    if not st.usage_pruned:
        _prune_messages(st)
    return LaneFold(
        events_seen=st.events_seen + seen,
        seq_ranges=_merge_ranges(base.seq_ranges, st.new_seqs),
        last_time=st.last_time,
        unknown_events=st.unknown_events,
        malformed_events=st.malformed_events,
        **_kept_fields(st),
    )


def _safe(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INT


def _fold_run(st: _State, run: EventRun) -> int:
    """Fold a run as the ``size`` seq/time-only events it stands for; returns ``size``.

    Raises (the caller counts one malformed event) when the run does not hold what
    a reader puts in one: a size equal to its number of safe integer seqs, a safe
    time, and (type, seq) marks.
    """
    size, seqs, last_time, marks, usage = run
    if type(size) is not int or size != len(seqs):
        raise ValueError("a run's size is its number of seqs")
    if seqs and not (set(map(type, seqs)) == {int} and _safe(min(seqs)) and _safe(max(seqs))):
        raise ValueError("a run's seqs are safe integers")
    if last_time is not None and not _safe(last_time):
        raise ValueError("a run's time is a safe integer")
    checked = [(name, seq) for name, seq in marks if type(name) is str and _safe(seq)]
    if len(checked) != len(marks):
        raise ValueError("a run's marks are (type, seq) pairs")
    st.new_seqs.extend(seqs)
    if last_time is not None and (st.last_time is None or last_time > st.last_time):
        st.last_time = last_time
    for name, seq in checked:
        marker = _STEP_MARKERS.get(name)
        if marker is not None:
            marker(st, seq, None, None)
    if usage:
        _fold_usage_rows(st, usage)
    return size


def _fold_usage_rows(st: _State, batches: tuple[tuple[Any, ...], ...]) -> None:
    """A run's token-use batches, as their events would fold (see ``EventRun.usage``).

    A chunk batch in bulk where it is what a reader makes of DSH's own lines (safe
    integers, usage objects of integers only): a big team has tens of thousands.
    Anything else row by row."""
    for kind, seqs, times, turns, steps, usages, sources in batches:
        if kind == "assistant/chunk" and _bulk_chunks(st, seqs, times, turns, steps, usages):
            continue
        if kind == "assistant/message" and _bulk_messages(
            st, seqs, times, turns, steps, usages, sources
        ):
            continue
        handler = _assistant_chunk if kind == "assistant/chunk" else _assistant_message
        if type(usages) is UsageColumns:  # the row's usage: the object of its counts
            usages = tuple(map(_usage_object, *usages))
        for n, seq in enumerate(seqs):
            data: dict[str, Any] = {"turn": turns[n], "step": steps[n]}
            if handler is _assistant_chunk:
                data["chunk"] = {"type": "usage", "usage": usages[n]}
            else:
                data["usage"] = usages[n]
                data["message"] = {"source": sources[n] if sources else None}
            handler(st, seq, times[n], data)


def _usage_object(*counts: Any) -> dict[str, Any]:
    return dict(zip(USAGE_KEYS, counts, strict=True))


def _bulk_chunks(
    st: _State,
    seqs: tuple[Any, ...],
    times: tuple[Any, ...],
    turns: tuple[Any, ...],
    steps: tuple[Any, ...],
    usages: tuple[Any, ...],
) -> bool:
    """Fold a chunk batch at once; False (nothing done) when it is not the usual case.

    Each check is one C-level pass over all the batch's numbers at once (a pass per
    column and per check cost more than the rest of the chunks' fold)."""
    size = len(seqs)
    chunks = st.kept["usage_chunks"]
    rows = len(usages.input) if type(usages) is UsageColumns else len(usages)
    if not (size == len(times) == len(turns) == len(steps) == rows):
        return False
    if not size:
        return True
    columns = _usage_columns(usages)
    if columns is None or not all(len(column) == size for column in columns):
        return False
    # Count columns are a reader's, every value of the batch a safe integer (see
    # ``UsageColumns``): checked where they were matched, not again per value.
    if type(usages) is not UsageColumns and not _safe_integers(
        chain(seqs, times, turns, steps, *columns)
    ):
        return False
    if len(set(seqs)) != size or not chunks.keys().isdisjoint(seqs):
        return False
    turn_ids, step_ids = _step_ids(turns, steps)
    keys = list(zip(turn_ids, step_ids, strict=True))
    latest = st.kept["usage_chunk_steps"]
    if not latest.keys().isdisjoint(keys):
        return False
    numbers = map(PACK_ROW, times, *columns, repeat(0, size))
    recs = map(joined_rec, map(add, numbers, _spelled_ids(turn_ids, step_ids)))
    chunks.update(zip(seqs, recs, strict=True))
    if len(set(keys)) == size:
        latest.update(zip(keys, seqs, strict=True))
    else:  # a step with two chunks: its latest seq (in seq order, last wins)
        latest.update((k, s) for s, k in sorted(zip(seqs, keys, strict=True)))
    st.usage_pruned = False
    return True


def _bulk_messages(
    st: _State,
    seqs: tuple[Any, ...],
    times: tuple[Any, ...],
    turns: tuple[Any, ...],
    steps: tuple[Any, ...],
    usages: tuple[Any, ...],
    sources: tuple[Any, ...] | None,
) -> bool:
    """Fold a message batch at once where each message's usage is absent or an object
    of safe integers (the messages of steps whose chunk counts are passed over); False
    (nothing done) otherwise."""
    size = len(seqs)
    messages = st.kept["usage_messages"]
    if type(usages) is UsageColumns:  # not what a reader makes of messages: row by row
        return False
    if not (size == len(times) == len(turns) == len(steps) == len(usages)) or (
        sources is not None and len(sources) != size
    ):
        return False
    if not size:
        return True
    whole = (seqs, times, turns, steps, usages, sources)
    alone: list[int] = []  # messages without usage (steps of no count): one by one
    if None in usages and set(map(type, usages)) == {dict, type(None)}:
        with_usage = [u is not None for u in usages]
        alone = list(compress(range(size), map(not_, with_usage)))
        seqs, times, turns, steps, usages = (
            tuple(compress(c, with_usage)) for c in (seqs, times, turns, steps, usages)
        )
        if sources is not None:
            sources = tuple(compress(sources, with_usage))
        size = len(seqs)
    columns = _usage_columns(usages)
    if columns is None or not _safe_integers(chain(seqs, times, turns, steps, *columns)):
        return False
    every = whole[0]
    if len(set(every)) != len(every) or not messages.keys().isdisjoint(every):
        return False
    if alone and not _bulk_no_usage(st, whole, alone):
        for n in alone:
            source = {"source": whole[5][n]} if whole[5] is not None else {}
            data = {"turn": whole[2][n], "step": whole[3][n], "usage": None, "message": source}
            _assistant_message(st, whole[0][n], whole[1][n], data)
    if whole[5] is not None:  # only the latest names the model: looked at latest first
        # Every row's source, with or without usage (the latest wins whatever the order).
        named = compress(zip(whole[0], whole[5], strict=True), whole[5])
        for seq, source in sorted(named, key=_SEQ_OF, reverse=True):  # stable: ties in order
            held = st.kept["usage_source"]
            if held is not None and held[0] > seq:
                break  # no earlier seq outranks what is held (see _source_rank)
            _note_source(st, seq, source)
    turn_ids, step_ids = _step_ids(turns, steps)
    # A step whose chunk counts: its message is not kept (the chunk wins, never both).
    keys = zip(turn_ids, step_ids, strict=True)
    fresh = map(not_, map(st.kept["usage_chunk_steps"].__contains__, keys))
    numbers = map(PACK_ROW, times, *columns, repeat(0, size))
    recs = map(joined_rec, map(add, numbers, _spelled_ids(turn_ids, step_ids)))
    rows = zip(seqs, recs, strict=True)
    messages.update(compress(rows, fresh))
    return True


def _bulk_no_usage(st: _State, whole: tuple[Any, ...], rows: list[int]) -> bool:
    """The batch's messages without usage (``rows``, at least one), as
    ``_assistant_message`` folds each but for its source (the caller notes the sources):
    a message whose step's chunk counts adds nothing, any other a record of no counts.
    False (nothing done) when their numbers are not all safe integers."""
    pick = itemgetter(*rows)
    columns = [pick(c) if len(rows) > 1 else (pick(c),) for c in whole[:4]]
    if not _safe_integers(chain.from_iterable(columns)):
        return False
    seqs, times, turns, steps = columns
    turn_ids, step_ids = _step_ids(turns, steps)
    counted = st.kept["usage_chunk_steps"]
    fresh = map(not_, map(counted.__contains__, zip(turn_ids, step_ids, strict=True)))
    recs = map(new_usage_rec, turn_ids, step_ids, times, repeat(None))
    rows_by_seq = zip(seqs, recs, strict=False)
    st.kept["usage_messages"].update(compress(rows_by_seq, fresh))
    return True


#: What JSON spells non-negative integers with: every other value (a bool, a float, a
#: string, ``null``, a negative number) writes some other byte.
_DIGITS = b"0123456789,"


def _safe_integers(numbers: Iterable[Any]) -> bool:
    """Every value is a non-negative safe integer: checked in C, the values written
    as one JSON array (far cheaper than a type check per value in Python's passes)."""
    values = list(numbers)
    try:
        spelled = orjson.dumps(values)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits, or no JSON value at all
        return False
    # Inside the array's brackets: digits and commas only (a nested array has brackets).
    return not spelled[1:-1].translate(None, _DIGITS) and (
        not values or max(values) <= MAX_SAFE_INT
    )


def _step_ids(turns: tuple[Any, ...], steps: tuple[Any, ...]) -> tuple[list[str], list[str]]:
    """Each row's turn and step as the fold keys them (safe integers here), one string
    per distinct id: a lead's thousands of steps share a few thousand turns and a few
    step numbers (interned as :func:`key` does: the same objects as the turns' own)."""
    names = {n: intern(str(n)) for n in {*turns, *steps}}
    return list(map(names.__getitem__, turns)), list(map(names.__getitem__, steps))


def _spelled_ids(turn_ids: list[str], step_ids: list[str]) -> Iterable[bytes]:
    """Each row's ids as a ``UsageRec`` ends (a batch's rows share a few pairs: each
    pair spelled once)."""
    pairs = list(zip(turn_ids, step_ids, strict=True))
    spelled = {pair: spelled_step_ids(*pair) for pair in set(pairs)}
    return map(spelled.__getitem__, pairs)


def _usage_columns(usages: Any) -> Sequence[Sequence[Any]] | None:
    """Each of ``USAGE_KEYS`` as a column (0 where absent) when every usage is a plain
    object (or the reader gave the columns), else ``None`` (read one by one, which skips
    and counts the odd values)."""
    if type(usages) is UsageColumns:
        return usages
    if set(map(type, usages)) != {dict}:
        return None
    return [list(map(dict.get, usages, repeat(name), repeat(0))) for name in USAGE_KEYS]


def _fold_one(st: _State, event: Any) -> None:
    etype, seq, time = event.type, event.seq, event.time
    # Fast path: a reader's LogEvent already holds a safe seq and time; anything else
    # (a look-alike, junk values) goes through the checks.
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INT:
        seq = as_int(seq)
        if seq is None or seq < 0:
            seq = as_int(event.position)
            if seq is None or seq < 0:
                st.malformed_events += 1
                return
    if time is not None and (type(time) is not int or not 0 <= time <= MAX_SAFE_INT):
        time = as_time(time)
    handler = _HANDLERS.get(etype) if type(etype) is str else None
    st.new_seqs.append(seq)
    if time is not None and (st.last_time is None or time > st.last_time):
        st.last_time = time
    if handler is None:
        st.unknown_events += 1
    elif handler is _user_message and _is_replace(getattr(event, "surface_op", None)):
        # A summary rewriting earlier messages: never a new prompt.
        _put(st.kept["injected"], seq, "summary")
    elif handler is not _ignore:
        handler(st, seq, time, event.data)


__all__ = [
    "BULK_TYPES",
    "EVENT_RULES",
    "LABEL_CAP",
    "RUN_MARKS",
    "UNREAD_DATA",
    "EventRule",
    "fold_lane",
]
