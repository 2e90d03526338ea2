"""The compact records a lane fold keeps, and the fold itself (:class:`LaneFold`).

Every record is keyed by the ``seq`` of the event it came from, because the cut of a
forked log's inherited prefix is only known after folding (the last
``session/end-seed``); :mod:`dsh_task_gantt.timeline` applies the cut.
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from struct import Struct
from sys import intern
from typing import Any, NamedTuple


class TurnMark(NamedTuple):
    """A ``turn/start`` (``reason`` is None) or a ``turn/end`` (a named tuple: a lead's
    log has thousands, and each is built once per cold read)."""

    turn_id: str | None
    time: int | None
    reason: str | None = None


#: A step's numbers as :class:`UsageRec` holds them: time, the five counts, the
#: skipped values (-1 stands for ``None``: a time or a count is never negative).
_NUMBERS = Struct("<7q")
#: Then the byte lengths of its turn and step ids (-1: ``None``), then their bytes.
_IDS = Struct("<ii")
#: The numbers and the lengths: what one call reads of a record (see :func:`heads`).
_HEAD_STRUCT = Struct("<7qii")
_HEAD = _HEAD_STRUCT.size
#: Where a :class:`UsageRec`'s :func:`step_ids` start: one spelling per (turn, step).
USAGE_IDS_AT = _NUMBERS.size
_pack = _NUMBERS.pack
_pack_head = _HEAD_STRUCT.pack
_unpack_numbers = _NUMBERS.unpack_from
_unpack_ids = _IDS.unpack_from
#: A record's head in one call: ``(time, input, cache read, cache write, output,
#: reasoning, skipped, turn id's length, step id's length)``, ``-1`` for ``None``.
unpack_head = _HEAD_STRUCT.unpack_from
#: A row's numbers as :class:`UsageRec` holds them, from seven non-negative safe
#: integers (time, the five counts, skipped): what the bulk fold packs.
PACK_ROW = _pack
_FIELDS = ("turn_id", "step_id", "time", "counts", "skipped", "provider", "model")
_new_bytes = bytes.__new__
_slice_bytes = bytes.__getitem__


class UsageRec(bytes):
    """One step's token use as one event reported it: a ``usage`` chunk of
    ``assistant/chunk``, or an ``assistant/message`` (``counts`` is ``None`` when that
    message carried no usable usage).

    A fold keeps one per model step for a day (tens of thousands in a lead's log,
    ~2.5 an append), so it is one bytes object: its seven numbers packed, then its
    turn and step ids. One allocated block a step instead of a named tuple, its counts
    tuple and the six integers they held. The fields read as they always did (an id
    as the interned string the fold keys it by: the turn's own object). A pass over
    many records reads each once (:meth:`fields`, :func:`heads`), not field by field."""

    __slots__ = ()

    def __new__(
        cls,
        turn_id: str | None,
        step_id: str | None,
        time: int | None,
        counts: tuple[int, int, int, int, int] | None,
        skipped: int = 0,
        provider: str | None = None,
        model: str | None = None,
    ) -> UsageRec:
        return new_usage_rec(turn_id, step_id, time, counts, skipped)

    @property
    def turn_id(self) -> str | None:
        n = _unpack_ids(self, _NUMBERS.size)[0]
        return None if n < 0 else _id(self[_HEAD : _HEAD + n])

    @property
    def step_id(self) -> str | None:
        n, m = _unpack_ids(self, _NUMBERS.size)
        at = _HEAD + max(n, 0)
        return None if m < 0 else _id(self[at : at + m])

    @property
    def time(self) -> int | None:
        t: int = _unpack_numbers(self)[0]
        return None if t < 0 else t

    @property
    def counts(self) -> tuple[int, int, int, int, int] | None:
        _t, i, cr, cw, o, r, _s = _unpack_numbers(self)
        return None if i < 0 else (i, cr, cw, o, r)

    @property
    def skipped(self) -> int:
        skipped: int = _unpack_numbers(self)[6]
        return skipped

    #: Kept for the record's shape: a step's model is the lane's ``usage_source``.
    provider: None = None
    model: None = None

    def fields(self) -> tuple[Any, ...]:
        """The record's seven fields, as the named tuple it was had them (read at once:
        one unpack, not one a field)."""
        t, i, cr, cw, o, r, skipped, n, m = unpack_head(self)
        at = _HEAD + n if n > 0 else _HEAD
        return (
            None if n < 0 else _id(self[_HEAD:at]),
            None if m < 0 else _id(self[at : at + m]),
            None if t < 0 else t,
            None if i < 0 else (i, cr, cw, o, r),
            skipped,
            None,
            None,
        )

    def __repr__(self) -> str:
        # As the named tuple's: a collision on one seq keeps the smallest repr.
        inner = ", ".join(f"{k}={v!r}" for k, v in zip(_FIELDS, self.fields(), strict=True))
        return f"UsageRec({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (UsageRec, self.fields())


def _id(spelled: bytes) -> str:
    # surrogatepass: an id is any string the fold kept (a lone surrogate included).
    return intern(spelled.decode("utf-8", "surrogatepass"))


def _spelled(value: str | None) -> bytes:
    return b"" if value is None else value.encode("utf-8", "surrogatepass")


def new_usage_rec(
    turn_id: str | None,
    step_id: str | None,
    time: int | None,
    counts: tuple[int, int, int, int, int] | None,
    skipped: int = 0,
) -> UsageRec:
    """A :class:`UsageRec` (as ``UsageRec(...)``, one pack and one join: the fold's
    event by event path makes one an event)."""
    t = -1 if time is None else time
    if turn_id is None:
        turn, n = b"", -1
    else:
        turn = turn_id.encode("utf-8", "surrogatepass")
        n = len(turn)
    if step_id is None:
        step, m = b"", -1
    else:
        step = step_id.encode("utf-8", "surrogatepass")
        m = len(step)
    if counts is None:
        head = _pack_head(t, -1, 0, 0, 0, 0, skipped, n, m)
    else:
        i, cr, cw, o, r = counts
        head = _pack_head(t, i, cr, cw, o, r, skipped, n, m)
    rec: UsageRec = _new_bytes(UsageRec, head + turn + step)
    return rec


def step_ids(turn_id: str | None, step_id: str | None) -> bytes:
    """What follows a :class:`UsageRec`'s numbers: its ids' lengths and bytes."""
    turn, step = _spelled(turn_id), _spelled(step_id)
    lengths = _IDS.pack(-1 if turn_id is None else len(turn), -1 if step_id is None else len(step))
    return lengths + turn + step


def joined_rec(numbers_and_ids: bytes) -> UsageRec:
    """A :class:`UsageRec` from its numbers and :func:`step_ids` joined (a batch's rows
    share a few ids: the bulk fold spells each pair once)."""
    rec: UsageRec = _new_bytes(UsageRec, numbers_and_ids)
    return rec


#: A record's head (:data:`unpack_head`'s bytes), sliced in C.
_HEAD_OF = itemgetter(slice(0, _HEAD))
_LITTLE = sys.byteorder == "little"


def head_columns(recs: Iterable[UsageRec]) -> list[array[int]]:
    """The records' heads as nine columns (as :data:`unpack_head` reads one record:
    time, the five counts, skipped, the turn and step ids' lengths; ``-1`` for
    ``None``), read in C: the heads joined, then read as arrays and sliced, with no
    tuple or integer object made a record."""
    joined = b"".join(map(_HEAD_OF, recs))
    wide, narrow = array("q"), array("i")
    wide.frombytes(joined)
    narrow.frombytes(joined)
    if not _LITTLE:  # packed little-endian ("<"), read natively
        wide.byteswap()
        narrow.byteswap()
    per, every = _HEAD // wide.itemsize, _HEAD // narrow.itemsize
    ids_at = _NUMBERS.size // narrow.itemsize
    numbers = [wide[k::per] for k in range(_NUMBERS.size // wide.itemsize)]
    return [*numbers, narrow[ids_at::every], narrow[ids_at + 1 :: every]]


def spelled_turns(recs: Iterable[UsageRec], turn_lengths: Iterable[int]) -> list[bytes]:
    """Each record's turn id as spelled (UTF-8, surrogatepass), sliced in C; the
    lengths are the records' own (:func:`head_columns`' eighth), none negative. UTF-8
    bytes sort as their strings do (by code point), so these group and order records
    by turn as the decoded ids would."""
    ends = map(_HEAD.__add__, turn_lengths)
    return list(map(_slice_bytes, recs, map(slice, repeat(_HEAD), ends)))


#: A record's five counts as they are packed (little-endian, 8 bytes each).
_COUNTS_OF = itemgetter(slice(8, 48))
_COUNTS_STRUCT = Struct("<5Q")
_COUNTS_BYTES = _COUNTS_STRUCT.size
#: Sums of counts read as one integer each (see :func:`packed_counts`) stay exact
#: while every count's sum is below this.
PACKED_SUM_BOUND = 1 << 64


def packed_counts(recs: Iterable[UsageRec]) -> Iterable[int]:
    """Each record's five counts as one integer (count ``k`` at bit ``64 k``), read
    in C: sums of these are the sums of each count, read back by
    :func:`unpacked_counts` while each sum is below :data:`PACKED_SUM_BOUND` (one
    addition a record, not five). Records with counts only."""
    # (The byte order passed positionally, in C: typeshed types it as a Literal.)
    return map(int.from_bytes, map(_COUNTS_OF, recs), repeat("little"))  # type: ignore[arg-type]


def unpacked_counts(sums: Iterable[int]) -> Iterable[tuple[int, ...]]:
    """Sums of :func:`packed_counts` as the five counts' sums."""
    spelled = map(int.to_bytes, sums, repeat(_COUNTS_BYTES), repeat("little"))  # type: ignore[arg-type]
    return map(_COUNTS_STRUCT.unpack, spelled)


def spelled_ids(spelled: Iterable[bytes]) -> Iterable[str]:
    """Ids as :func:`step_ids` spelled them, as the interned strings (decoded in C)."""
    return map(intern, map(bytes.decode, spelled, repeat("utf-8"), repeat("surrogatepass")))


def without_counts(recs: Iterable[UsageRec]) -> bool:
    """Whether any record has no counts or no step id (read in C, one call a record)."""
    return min(map(min, map(_COUNT_AND_STEP, recs)), default=0) < 0


#: A record's input count and its step id's length (``-1``: ``None``), in one call.
_COUNT_AND_STEP = Struct("<8xq44xi").unpack_from


def step_of(rec: UsageRec) -> tuple[str, str] | None:
    """The record's ``(turn_id, step_id)``, ``None`` when either is ``None`` (one
    unpack)."""
    n, m = _unpack_ids(rec, USAGE_IDS_AT)
    if n < 0 or m < 0:
        return None
    at = _HEAD + n
    return (_id(rec[_HEAD:at]), _id(rec[at : at + m]))


def counts_and_skipped(rec: UsageRec) -> tuple[tuple[int, int, int, int, int] | None, int]:
    """The record's ``counts`` and ``skipped`` (one unpack)."""
    _t, i, cr, cw, o, r, skipped = _unpack_numbers(rec)
    return (None if i < 0 else (i, cr, cw, o, r)), skipped


@dataclass(frozen=True, slots=True)
class PromptRec:
    """A human ``user/message`` (``source.kind == "user"``), or the prompt an
    ``agent/inbox/spliced`` carries."""

    id: str | None
    time: int | None
    body: str
    length: int
    #: The id named by a closing "Your parent agent id is <id>": in a subagent child's
    #: log such a ``kind: "user"`` message is its parent agent's brief, not the human.
    brief_from: str | None = None


@dataclass(frozen=True, slots=True)
class RelayRec:
    """A ``user/message`` relayed between a parent and a child agent (source kind
    ``coordinator``, ``subagent-report`` or ``subagent-settled``, with
    ``senderSessionId``); the recipient is the session whose log holds it."""

    id: str | None
    kind: str
    sender_session: str
    time: int | None
    body: str
    length: int


@dataclass(frozen=True, slots=True)
class SpawnRec:
    """A tool call that starts a child with a brief: ``spawn_teammate`` (``name`` set)
    or a subagent tool (``subagent``, ``subagent_fork``, …: ``name`` None), with its
    ``description`` and its ``prompt`` (capped like a message body). The child's log
    holds that brief as a ``kind: "user"`` message: the parent's words, not the human's."""

    tool: str
    name: str | None
    description: str | None
    body: str
    length: int
    time: int | None


@dataclass(frozen=True, slots=True)
class DescriptorRec:
    """A ``subagent/descriptor`` (a child's first event)."""

    inherited_count: int | None
    label: str | None


@dataclass(frozen=True, slots=True)
class TaskCallRec:
    """A ``team_task_update`` (``action`` set) or ``team_task_create`` tool call."""

    tool: str  # "update" | "create"
    task_id: str | None
    expected_revision: int | None
    subject: str | None
    action: str | None
    time: int | None


@dataclass(frozen=True, slots=True)
class MemberRec:
    """A ``team/member`` snapshot."""

    team_id: str | None
    id: str
    name: str | None
    phase: str | None
    error: str | None
    description: str | None
    context: str | None
    time: int | None


@dataclass(frozen=True, slots=True)
class CatalogRec:
    """A ``subagent/catalog`` entry."""

    child_id: str
    created_at: int | None
    label: str | None
    time: int | None


@dataclass(frozen=True, slots=True)
class TaskRec:
    """A ``team/task`` snapshot (full state, no action)."""

    id: str
    revision: int | None
    subject: str | None
    description: str | None
    status: str | None
    blocked_by: tuple[str, ...]
    write_scopes: tuple[str, ...]
    owner_id: str | None
    time: int | None
    #: ``teamId`` of the record (``None`` when it carries none).
    team_id: str | None = None


#: A message body at least this long is held compressed (zlib, UTF-8): a team's
#: messages are its history's biggest texts (a few kB each in a busy team, kept for a
#: day for the detail view), and a body is read back only when its message is drawn
#: (once, for its preview) or opened.
PACKED_BODY_FROM = 512


def pack_body(body: str) -> str | bytes:
    """``body`` as a record holds it: itself when short or when compressing does not
    make it smaller, else its UTF-8 compressed (see :func:`unpack_body`)."""
    if len(body) < PACKED_BODY_FROM:
        return body
    raw = body.encode("utf-8", "surrogatepass")  # a log's text may hold lone surrogates
    packed = zlib.compress(raw, 6)
    return packed if len(packed) < len(raw) else body


def unpack_body(packed: str | bytes) -> str:
    """The body :func:`pack_body` packed."""
    if isinstance(packed, str):
        return packed
    return zlib.decompress(packed).decode("utf-8", "surrogatepass")


@dataclass(frozen=True, slots=True, init=False)
class QueuedRec:
    """A ``team/message/queued`` record (body capped, held packed: see ``body``)."""

    id: str
    sender_id: str | None
    sender_name: str | None
    target_id: str | None
    #: The body as :func:`pack_body` holds it (read it as ``body``).
    packed_body: str | bytes
    length: int
    time: int | None
    #: ``teamId`` of the record (``None`` when it carries none).
    team_id: str | None = None

    def __init__(
        self,
        id: str,
        sender_id: str | None,
        sender_name: str | None,
        target_id: str | None,
        body: str,
        length: int,
        time: int | None,
        team_id: str | None = None,
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "id", id)
        setattr_(self, "sender_id", sender_id)
        setattr_(self, "sender_name", sender_name)
        setattr_(self, "target_id", target_id)
        setattr_(self, "packed_body", pack_body(body))
        setattr_(self, "length", length)
        setattr_(self, "time", time)
        setattr_(self, "team_id", team_id)

    @property
    def body(self) -> str:
        """The body (capped), unpacked at each read."""
        return unpack_body(self.packed_body)


@dataclass(frozen=True, slots=True)
class DeliveredRec:
    """A ``team/message/delivered`` record."""

    id: str
    target_id: str | None
    time: int | None
    #: ``teamId`` of the record (``None`` when it carries none).
    team_id: str | None = None


@dataclass(frozen=True, slots=True)
class LaneFold:
    """Compact, order-independent state of one session log.

    Equal multisets of events give equal folds (dict equality ignores insertion
    order; collisions on one ``seq`` keep the record with the smallest ``repr``).
    """

    #: How many events were folded in (the shell's next read offset).
    events_seen: int = 0
    #: Distinct seqs seen, as sorted disjoint inclusive ranges.
    seq_ranges: tuple[tuple[int, int], ...] = ()
    #: Latest time of any event, bulk included (the frozen right edge).
    last_time: int | None = None
    #: Events of types this plugin does not know (skipped).
    unknown_events: int = 0
    #: Events that could not be read at all (not a LogEvent, no usable seq, ...).
    malformed_events: int = 0
    #: seq of the last ``session/end-seed`` with ``data.inherited is True``.
    seed_end_seq: int | None = None
    turn_starts: Mapping[int, TurnMark] = field(default_factory=dict)
    turn_ends: Mapping[int, TurnMark] = field(default_factory=dict)
    #: (latest ``step/start`` seq, latest ``step/end`` seq); -1 when none. Steps of one
    #: session run one after another, so the latest step event says whether one is open
    #: — and the fold needs no step data (a reader may skip parsing those lines).
    step_marks: tuple[int, int] = (-1, -1)
    prompts: Mapping[int, PromptRec] = field(default_factory=dict)
    #: seq -> source kind of a runtime-injected ``user/message``.
    injected: Mapping[int, str] = field(default_factory=dict)
    task_calls: Mapping[int, TaskCallRec] = field(default_factory=dict)
    members: Mapping[int, MemberRec] = field(default_factory=dict)
    catalog: Mapping[int, CatalogRec] = field(default_factory=dict)
    tasks: Mapping[int, TaskRec] = field(default_factory=dict)
    queued: Mapping[int, QueuedRec] = field(default_factory=dict)
    delivered: Mapping[int, DeliveredRec] = field(default_factory=dict)
    relays: Mapping[int, RelayRec] = field(default_factory=dict)
    #: seq -> a call made in this log that started a child with a brief.
    spawns: Mapping[int, SpawnRec] = field(default_factory=dict)
    descriptors: Mapping[int, DescriptorRec] = field(default_factory=dict)
    #: seq -> time of every ``session/end-seed`` (inherited or not): in a log that
    #: inherited nothing it marks a reload, which ended any turn still open before it.
    end_seeds: Mapping[int, int | None] = field(default_factory=dict)
    #: seq -> a ``usage`` chunk's step and counts (``fold.usage``).
    usage_chunks: Mapping[int, UsageRec] = field(default_factory=dict)
    #: seq -> an ``assistant/message``'s step and ``usage``, for the steps that have no
    #: usage chunk (the fallback: never both). Kept canonical, whatever the order the
    #: events came in: a chunk's step drops its messages here.
    usage_messages: Mapping[int, UsageRec] = field(default_factory=dict)
    #: (turn, step) of every usage chunk -> its latest seq.
    usage_chunk_steps: Mapping[tuple[str, str], int] = field(default_factory=dict)
    #: (seq, provider, model) of the latest assistant message whose ``source`` names
    #: them (the lane's model; only the latest is kept, so a reader may pass the
    #: others over).
    usage_source: tuple[int, str | None, str | None] | None = None


EMPTY_FOLD = LaneFold()


def seqs_below(fold: LaneFold, cut: int) -> int:
    """How many distinct seqs below ``cut`` the fold has seen."""
    total = 0
    for lo, hi in fold.seq_ranges:
        if lo >= cut:
            break
        total += min(hi, cut - 1) - lo + 1
    return total


def last_event_time(fold: LaneFold) -> int | None:
    """The latest time of any event folded in (``None`` when no event had a time)."""
    return fold.last_time
