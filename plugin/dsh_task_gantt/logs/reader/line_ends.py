"""A long line's few small fields, found at its two ends without parsing its body.

An ``assistant/message`` line is mostly its message (thousands of characters); what
the token count needs is ``data.usage`` and the step's ``turn``/``step``. DSH's own
writer puts ``usage`` after the message (at the line's end), other writers put it
first (at its start): both ends are looked at, the middle never.

- The start: after the writer's prefix, ``"data":{`` then a run of scalar fields
  (``"turn":3,"step":1,``) and possibly ``"usage":{…}`` among them.
- The end: the last ``"usage"`` in the line's last :data:`TAIL_BYTES` is data's own
  key exactly when ``{"data":{`` + the rest of the line parses as one JSON object
  (a ``usage`` nested deeper, or at the envelope's level, closes a different number
  of objects and does not parse). The fields after it (``interrupted``) come along.
- The message's ``source`` (provider and model) where it is a small object at
  either end.

A short line is parsed whole (cheap, and no guessing); a line whose start holds a
``usage`` that is not a flat object (junk) is parsed whole too (:data:`PARSE`).
"""

from __future__ import annotations

import re
from itertools import chain, compress, repeat
from operator import itemgetter, not_
from typing import Any, Final

import orjson

from dsh_task_gantt.events import UsageColumns

#: The probe's value in a reader's ``skip_types`` (see ``skip_rules``).
LINE_ENDS: Final = "line-ends"
#: Lines up to this long are parsed whole.
SHORT_LINE = 4096
#: How far from the line's end ``usage`` is looked for (a usage object is ~150 bytes).
TAIL_BYTES = 384
#: How far from each end ``source`` is looked for.
SOURCE_WINDOW = 512


class _Parse:
    """Returned when the line must be parsed in full."""


PARSE: Final = _Parse()

_SCALAR = rb'(?:-?\d{1,20}(?:\.\d{1,20})?|true|false|null|"[^"\\\n]{0,128}")'
_FLAT = rb"\{[^{}\n]{0,1024}\}"
#: ``"data":{`` and the leading fields: scalars, or ``usage`` as a flat object.
_HEAD = re.compile(
    rb'"data":\{((?:(?:"usage":' + _FLAT + rb'|"[A-Za-z_]\w{0,31}":' + _SCALAR + rb")[,}])*)"
)
#: Any value: one that is no object is still data's usage (skipped and counted), as
#: the bulk (``message_tail``) and a whole parse read it.
_USAGE_AT = re.compile(rb'"usage"\s*:')
_SOURCE_KEY = b'"source":{'
_SOURCE = re.compile(rb'"source":(' + _FLAT + rb")")


def probe(text: bytes, start: int, end: int) -> dict[str, Any] | _Parse:
    """The small fields of the line ``text[start:end]`` whose writer prefix ends
    at ``start`` (after its ``,``): a partial ``data`` dict, or :data:`PARSE`."""
    if end - start <= SHORT_LINE:
        return PARSE
    data: dict[str, Any] = {}
    head = _HEAD.match(text, start, min(end, start + SHORT_LINE))
    if head is not None:
        if text.startswith(b'"usage"', head.end()):
            return PARSE  # a usage at the start that is not a flat object: junk, read it all
        if head.group(1):
            try:
                data.update(orjson.loads(b"{" + head.group(1)[:-1] + b"}"))
            except orjson.JSONDecodeError:
                return PARSE
    lo = max(start, end - TAIL_BYTES)
    at = text.rfind(b'"usage"', lo, end)
    if at != -1 and _USAGE_AT.match(text, at, end):
        try:
            tail = orjson.loads(b'{"data":{' + text[at:end])
        except orjson.JSONDecodeError:
            tail = None
        if type(tail) is dict and type(tail.get("data")) is dict:
            data.update(tail["data"])
    source = _source(text, start, min(end, start + SOURCE_WINDOW))
    if source is None:
        source = _source(text, max(start, end - TAIL_BYTES - SOURCE_WINDOW), end)
    if source is not None:
        data["message"] = {"source": source}
    return data


def _source(text: bytes, lo: int, hi: int) -> dict[str, Any] | None:
    """The last small ``source`` object between ``lo`` and ``hi`` naming a model.

    Looked for from ``hi`` back, one ``rfind`` per ``"source":{`` (most windows hold
    none): a match is one of them, and none starts inside another's object (which
    holds no ``{``), so the first that names a model from the end is the last one."""
    at = text.rfind(_SOURCE_KEY, lo, hi)
    while at != -1:
        match = _SOURCE.match(text, at, hi)
        if match is not None:
            try:
                obj = orjson.loads(match.group(1))
            except orjson.JSONDecodeError:
                obj = None
            if type(obj) is dict and ("model" in obj or "provider" in obj):
                return obj
        at = text.rfind(_SOURCE_KEY, lo, at)
    return None


# -- in bulk: the token-use lines as DSH's own writer spells them ------------------------
#
# A cold read meets one usage chunk and one assistant message per model step: tens of
# thousands in a big team. Read one by one (a Python probe, an event, a fold handler
# each) they doubled the cold read, so the runs mode matches them whole in C (one regex
# per line), makes each a short JSON row, and decodes a unit's rows with one ``orjson``
# call. A line of any other shape goes the way above; a unit whose rows do not decode
# goes the same way line by line.

#: A JSON integer as the bulk rows decode it (no leading zero: orjson refuses one); a
#: lookahead, not ``0|[1-9]…``: a branch per number was a quarter of a chunk's match.
_N = rb"(?!0\d)\d{1,15}"
CHUNK = "assistant/chunk"
MESSAGE = "assistant/message"
#: Groups: seq, time, ``"turn":T,"step":S`` (the step, byte for byte as a message
#: line spells it), the usage object: up to its first ``}`` (one byte looked for, a
#: quarter of a chunk's matching cost against a class of three), so a nested object
#: fails here, or fails to decode with its unit's rows.
_CHUNK_LINE = re.compile(
    rb'\{"type":"assistant/chunk","seq":(' + _N + rb'),"time":(' + _N + rb"),"
    rb'"data":\{("turn":' + _N + rb',"step":' + _N + rb"),"
    rb'"chunk":\{"type":"usage","usage":(\{[^}]{0,1024}\})\}\}\}[ \t\r]*$'
)
#: A message line with ``usage`` (if any) after its body (DSH's writer); the next field
#: is neither ``usage`` nor a ``message`` opening with its ``source``. Groups: seq,
#: time, the step.
_MESSAGE_LAST = re.compile(
    rb'\{"type":"assistant/message","seq":(' + _N + rb'),"time":(' + _N + rb"),"
    rb'"data":\{("turn":' + _N + rb',"step":' + _N + rb'),(?!"usage"|"message":\{"source")'
)
#: A message line with ``usage`` first (other writers), maybe the message's ``source``
#: next. Groups: seq, time, usage, the step, source.
_MESSAGE_FIRST = re.compile(
    rb'\{"type":"assistant/message","seq":(' + _N + rb'),"time":(' + _N + rb"),"
    rb'"data":\{"usage":(\{[^{}\n]{0,1024}\}),("turn":' + _N + rb',"step":' + _N + rb")"
    rb'(?:,"message":\{"source":(\{[^{}\n]{0,512}\}))?'
)
#: A usage chunk as DSH's writer spells it, its usage's keys in ``TokenUsage``'s order
#: (HOST §8; an optional key may be absent): every count a group of digits, so a unit's
#: rows become one flat JSON array of integers (no object per row). Groups: seq, time,
#: the step (as ``_CHUNK_LINE``), input, output, cache read, cache write, reasoning.
_CHUNK_COUNTS = re.compile(
    rb'\{"type":"assistant/chunk","seq":(' + _N + rb'),"time":(' + _N + rb"),"
    rb'"data":\{("turn":' + _N + rb',"step":' + _N + rb"),"
    rb'"chunk":\{"type":"usage","usage":\{"inputTokens":('
    + _N
    + rb'),"outputTokens":('
    + _N
    # An optional key as a branch with an empty side: ``(?:…)?`` around a group
    # costs a repeat context per key (a sixth of the match).
    + rb')(?:,"cacheReadTokens":('
    + _N
    + rb')|)(?:,"cacheWriteTokens":('
    + _N
    + rb')|)(?:,"reasoningTokens":('
    + _N
    + rb")|)\}\}\}\}[ \t\r]*$"
)
match_chunk_counts = _CHUNK_COUNTS.match
match_chunk = _CHUNK_LINE.match
MESSAGE_LAST = _MESSAGE_LAST
match_message_last = _MESSAGE_LAST.match
match_message_first = _MESSAGE_FIRST.match
#: One batch of ``EventRun.usage``: type, then columns of seq, time, turn, step,
#: usage and source (``None`` for a chunk batch).
Batch = tuple[str, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], tuple[Any, ...],
              tuple[Any, ...], tuple[Any, ...] | None]  # fmt: skip


def message_tail(text: bytes, head_end: int, end: int) -> bytes:
    """A message line's data from the last ``"usage"`` near its end on, as
    ``{"data":{…`` (``null`` without one): data's own key exactly when it parses."""
    at = text.rfind(b'"usage"', max(head_end, end - TAIL_BYTES), end)
    return b'{"data":{' + text[at:end] if at != -1 else b"null"


#: ``Match.group`` and ``Match.groups`` unbound, mapped with their argument (a
#: ``methodcaller`` looks the method up again for each match: twice the cost).
_GROUP = re.Match.group
_GROUPS = re.Match.groups
#: Values per row of :func:`counts_row_bytes` once the step's names are gone: seq,
#: time, turn, step and the five counts.
_PER_ROW = 9


def counts_row_bytes(matches: list[re.Match[bytes]]) -> bytes:
    """Rows matched by ``match_chunk_counts`` (an absent count as 0) as the inside of
    one JSON array, the step's names dropped (C-level passes; :func:`counted_chunks`
    decodes a read's pieces at once)."""
    return rows_bytes(count_rows(matches))


def count_rows(matches: list[re.Match[bytes]]) -> list[tuple[bytes, ...]]:
    """The groups of rows matched by ``match_chunk_counts``, an absent count as 0 (the
    step is :data:`STEP_OF_ROW`)."""
    return list(map(_GROUPS, matches, repeat(b"0")))


#: A :func:`count_rows` row's step, ``"turn":T,"step":S`` (group 3).
STEP_OF_ROW = itemgetter(2)


def rows_bytes(rows: list[tuple[bytes, ...]]) -> bytes:
    """:func:`count_rows` as the inside of one JSON array (see :func:`counted_chunks`)."""
    return unnamed(b",".join(chain.from_iterable(rows)))


def unnamed(row: bytes) -> bytes:
    """``row`` without the step's names (``"turn":``, ``"step":``): digits and commas.

    The rows hold nothing but digits, commas and those two keys (the groups the bulk
    patterns match), so deleting the keys' bytes is dropping the keys: one pass of
    ``bytes.translate``, where each ``bytes.replace`` searched the row twice (it counts
    the occurrences first)."""
    return row.translate(None, _STEP_KEYS)


#: The bytes of ``"turn":`` and ``"step":``.
_STEP_KEYS = b'"turnsep:'


def counted_chunks(pieces: list[bytes]) -> Batch:
    """The chunk batch of a read's :func:`counts_row_bytes` pieces: one ``orjson`` call,
    the columns sliced from it. The pieces hold digits and commas, so they always
    decode."""
    flat = orjson.loads(b"[" + b",".join(pieces) + b"]")
    seqs, times, turns, steps, i, o, cr, cw, r = (tuple(flat[k::_PER_ROW]) for k in range(_PER_ROW))
    return (CHUNK, seqs, times, turns, steps, UsageColumns(i, cr, cw, o, r), None)


def seq_time_bytes(matches: list[re.Match[bytes]]) -> bytes:
    """Groups 1 and 2 (seq and time: digits) of these matches as the inside of one
    JSON array, ``seq,time,seq,time,…`` (:func:`seq_time_columns` decodes a read's)."""
    return b",".join(chain.from_iterable(map(_GROUP, matches, repeat(1), repeat(2))))


def seq_time_columns(pieces: list[bytes]) -> Columns:
    """The seqs and times of a read's :func:`seq_time_bytes` pieces (one ``orjson``
    call: digits and commas always decode)."""
    flat = orjson.loads(b"[" + b",".join(pieces) + b"]")
    return tuple(flat[0::2]), tuple(flat[1::2])


def named_row_bytes(match: re.Match[bytes]) -> bytes:
    """A message matched by ``match_message_last`` as ``seq,time,turn,step``."""
    return unnamed(b",".join(match.group(1, 2, 3)))


def _column(matches: list[re.Match[bytes]], group: int) -> tuple[Any, ...]:
    return tuple(orjson.loads(b"[" + b",".join(map(_GROUP, matches, repeat(group))) + b"]"))


def _steps(matches: list[re.Match[bytes]], group: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    steps = orjson.loads(b"[{" + b"},{".join(map(_GROUP, matches, repeat(group))) + b"}]")
    return tuple(map(_TURN, steps)), tuple(map(_STEP, steps))


_TURN = itemgetter("turn")
_STEP = itemgetter("step")


def seqs_and_times(matches: list[re.Match[bytes]]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Groups 1 and 2 of these matches as integers (one ``orjson`` call each)."""
    return _column(matches, 1), _column(matches, 2)


Columns = tuple[tuple[Any, ...], tuple[Any, ...]]


def chunk_batch(matches: list[re.Match[bytes]], columns: Columns | None = None) -> Batch | None:
    """The usage chunks matched by ``match_chunk``, or ``None`` when they do not
    decode (each line is then read on its own). ``columns``: their seqs and times,
    when already decoded."""
    try:
        seqs, times = columns or seqs_and_times(matches)
        turns, steps = _steps(matches, 3)
        return (CHUNK, seqs, times, turns, steps, _column(matches, 4), None)
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None


def tail_source(found: re.Match[bytes]) -> dict[str, Any] | None:
    """The message's ``source`` of a line matched by ``match_message_last``: DSH's own
    writer puts it at the message's end, just before the closing message id and the
    ``usage`` (``…"source":{…},"id":"…"},"usage":{…}},"sourceEventSeqs":[…]…``)."""
    text, head_end, end = found.string, found.end(), found.endpos
    at = text.rfind(b'"usage"', max(head_end, end - TAIL_BYTES), end)
    hi = end if at == -1 else at
    return _source(text, max(head_end, hi - SOURCE_WINDOW), hi)


def last_batch(
    found: list[tuple[re.Match[bytes], bytes]],
    columns: Columns | None = None,
    last_source: dict[str, Any] | None = None,
) -> Batch | None:
    """Messages matched by ``match_message_last``, with their :func:`message_tail`;
    ``last_source`` is the last one's :func:`tail_source` (only the latest source
    names the lane's model, so the others are not looked for)."""
    matches = [m for m, _ in found]
    try:
        seqs, times = columns or seqs_and_times(matches)
        turns, steps = _steps(matches, 3)
        tails = orjson.loads(b"[" + b",".join(t for _, t in found) + b"]")
        usages = tuple(map(_tail_usage, tails))
        sources = (None,) * (len(matches) - 1) + (last_source,)
        return (MESSAGE, seqs, times, turns, steps, usages, sources)
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None


#: A group of a unit's messages read in bulk, kept for the read's one message batch
#: (:func:`message_batch`): each row's ``seq,time,turn,step``, its step as
#: the chunks name it (empty: never counted by a chunk later in the read), its usage
#: and its source.
MessagePart = tuple[list[bytes], list[bytes], tuple[Any, ...], tuple[Any, ...]]
#: ``b",".join``, mapped over each match's groups: one row's bytes.
_JOIN = b",".join


def _rows(matches: list[re.Match[bytes]], step: int) -> list[bytes]:
    """Each match's ``seq,time,turn,step`` (the step's names dropped in one pass)."""
    if not matches:
        return []
    rows = map(_JOIN, map(_GROUP, matches, repeat(1), repeat(2), repeat(step)))
    return unnamed(b" ".join(rows)).split(b" ")


def last_part(
    found: list[tuple[re.Match[bytes], bytes]], last_source: dict[str, Any] | None = None
) -> MessagePart | None:
    """Messages matched by ``match_message_last``, with their :func:`message_tail`, or
    ``None`` when the tails do not decode (each line is then read on its own);
    ``last_source`` is the last one's :func:`tail_source` (only the latest source names
    the lane's model, so the others are not looked for)."""
    matches = [m for m, _ in found]
    try:
        tails = orjson.loads(b"[" + b",".join(t for _, t in found) + b"]")
    except orjson.JSONDecodeError:
        return None
    sources = (None,) * (len(matches) - 1) + (last_source,)
    steps = list(map(_GROUP, matches, repeat(3)))
    return _rows(matches, 3), steps, tuple(map(_tail_usage, tails)), sources


def first_part(matches: list[re.Match[bytes]]) -> MessagePart | None:
    """Messages matched by ``match_message_first``, or ``None`` when their usages or
    sources do not decode."""
    try:
        usages = _column(matches, 3)
        sources = orjson.loads(b"[" + b",".join(m.group(5) or b"null" for m in matches) + b"]")
    except orjson.JSONDecodeError:
        return None
    return _rows(matches, 4), [b""] * len(matches), usages, tuple(sources)


def message_batch(
    parts: list[MessagePart],
    chunk_steps: set[bytes],
    named_rows: list[bytes],
    named_sources: list[dict[str, Any]],
) -> tuple[Batch, Columns]:
    """A read's one message batch: its parts' rows, then the rows that name the model
    (``named_rows``: of no usage), and the seqs and times of the parts' messages whose
    step's chunk this read saw after them (as if counted where they were read; one that
    named the model stays a row of no usage, for its source). One ``orjson`` call."""
    rows = list(chain.from_iterable(p[0] for p in parts))
    usages = tuple(chain.from_iterable(p[2] for p in parts))
    sources = tuple(chain.from_iterable(p[3] for p in parts))
    late = list(map(chunk_steps.__contains__, chain.from_iterable(p[1] for p in parts)))
    counted: list[bytes] = []
    if any(late):
        keep = list(map(not_, late))
        gone = list(compress(zip(rows, sources, strict=True), late))
        rows = list(compress(rows, keep))
        usages = tuple(compress(usages, keep))
        sources = tuple(compress(sources, keep))
        named_rows = named_rows + [r for r, s in gone if s is not None]
        named_sources = named_sources + [s for _, s in gone if s is not None]
        counted = [r for r, s in gone if s is None]
    flat = orjson.loads(b"[" + b",".join(rows + named_rows + counted) + b"]")
    seqs, times, turns, steps = (flat[k::4] for k in range(4))
    n = len(rows) + len(named_rows)
    usages += (None,) * len(named_rows)
    sources += tuple(named_sources)
    batch = (MESSAGE, tuple(seqs[:n]), tuple(times[:n]), tuple(turns[:n]), tuple(steps[:n]),
             usages, sources)  # fmt: skip
    return batch, (tuple(seqs[n:]), tuple(times[n:]))


def _tail_usage(tail: Any) -> Any:
    if tail is None:
        return None
    data = tail.get("data") if type(tail) is dict else None
    return data.get("usage") if type(data) is dict else None


def merged(batches: list[Batch]) -> tuple[Batch, ...]:
    """One batch per type and kind of source (the units' batches end to end): the fold
    then takes a whole read's chunks at once."""
    by_kind: dict[tuple[str, bool], list[Batch]] = {}
    out_columns: list[Batch] = []
    for batch in batches:
        if type(batch[5]) is UsageColumns:  # already a whole read's: kept apart
            out_columns.append(batch)
            continue
        by_kind.setdefault((batch[0], batch[6] is None), []).append(batch)
    out: list[Batch] = []
    for (kind, no_sources), group in by_kind.items():
        seqs, times, turns, steps, usages = (
            tuple(chain.from_iterable(column)) for column in list(zip(*group, strict=True))[1:6]
        )
        sources = None if no_sources else tuple(chain.from_iterable(b[6] or () for b in group))
        out.append((kind, seqs, times, turns, steps, usages, sources))
    return (*out, *out_columns)
