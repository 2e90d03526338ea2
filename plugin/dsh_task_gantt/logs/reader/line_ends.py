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
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import attrgetter, itemgetter, methodcaller, not_
from typing import Any, Final, cast

import orjson

#: The probe's value in a reader's ``skip_types`` (see ``skip_rules``).
LINE_ENDS: Final = "line-ends"
#: Lines up to this long are parsed whole.
SHORT_LINE = 4096
#: How far from the line's end ``usage`` is looked for (a usage object is ~150 bytes).
TAIL_BYTES = 384
#: How far from each end ``source`` is looked for.
_SOURCE_WINDOW = 512


class _Parse:
    """Returned when the line must be parsed in full."""


PARSE: Final = _Parse()

_SCALAR = rb'(?:-?\d{1,20}(?:\.\d{1,20})?|true|false|null|"[^"\\\n]{0,128}")'
_FLAT = rb"\{[^{}\n]{0,1024}\}"
#: ``"data":{`` and the leading fields: scalars, or ``usage`` as a flat object.
_HEAD = re.compile(
    rb'"data":\{((?:(?:"usage":' + _FLAT + rb'|"[A-Za-z_]\w{0,31}":' + _SCALAR + rb")[,}])*)"
)
_USAGE_AT = re.compile(rb'"usage"\s*:\s*\{')
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
    source = _source(text, start, min(end, start + _SOURCE_WINDOW))
    if source is None:
        source = _source(text, max(start, end - TAIL_BYTES - _SOURCE_WINDOW), end)
    if source is not None:
        data["message"] = {"source": source}
    return data


def _source(text: bytes, lo: int, hi: int) -> dict[str, Any] | None:
    """The last small ``source`` object between ``lo`` and ``hi`` naming a model."""
    found = None
    for match in _SOURCE.finditer(text, lo, hi):
        try:
            obj = orjson.loads(match.group(1))
        except orjson.JSONDecodeError:
            continue
        if type(obj) is dict and ("model" in obj or "provider" in obj):
            found = obj
    return found


# -- in bulk: the token-use lines as DSH's own writer spells them ------------------------
#
# A cold read meets one usage chunk and one assistant message per model step: tens of
# thousands in a big team. Read one by one (a Python probe, an event, a fold handler
# each) they doubled the cold read; classified one by one in the line loop they still
# cost a sixth more. So the runs mode matches them by the writer's prefix like any run
# line (``skip_rules``: ``bulk_prefix``), and afterwards picks a unit's token-use lines
# out of its matches and matches the rest of each in C (``map`` over the matches): each
# becomes a short JSON row, and a unit's rows decode with one ``orjson`` call per
# column. A line of any other shape goes the way above; a unit whose rows do not decode
# goes the same way line by line.

#: A JSON integer as the bulk rows decode it (no leading zero: orjson refuses one).
_N = rb"(?:0|[1-9]\d{0,14})"
CHUNK = "assistant/chunk"
MESSAGE = "assistant/message"
CHUNK_B = CHUNK.encode()
MESSAGE_B = MESSAGE.encode()
_STEP = rb'("turn":' + _N + rb',"step":' + _N + rb")"
#: A usage chunk's line after the writer's prefix (which ends with the ``,`` after the
#: time). Groups: ``"turn":T,"step":S`` (the step, byte for byte as a message line
#: spells it), the usage object.
_CHUNK_REST = re.compile(
    rb'"data":\{' + _STEP + rb',"chunk":\{"type":"usage","usage":(\{[^{}\n]{0,1024}\})\}\}\}'
    rb"[ \t\r]*$"
)
#: A message line with ``usage`` (if any) after its body (DSH's writer); the next field
#: is neither ``usage`` nor a ``message`` opening with its ``source``. Group: the step.
_LAST_REST = re.compile(rb'"data":\{' + _STEP + rb',(?!"usage"|"message":\{"source")')
#: A message line with ``usage`` first (other writers), maybe the message's ``source``
#: next. Groups: usage, the step, source.
_FIRST_REST = re.compile(
    rb'"data":\{"usage":(\{[^{}\n]{0,1024}\}),' + _STEP
    + rb'(?:,"message":\{"source":(\{[^{}\n]{0,512}\}))?'
)  # fmt: skip
#: One batch of ``EventRun.usage``: type, then columns of seq, time, turn, step,
#: usage and source (``None`` for a chunk batch).
Batch = tuple[str, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], tuple[Any, ...],
              tuple[Any, ...], tuple[Any, ...] | None]  # fmt: skip
Match = re.Match[bytes]

_END = methodcaller("end")
_ENDPOS = attrgetter("endpos")
_G = {g: methodcaller("group", g) for g in (1, 2, 3)}


def _rests(pattern: re.Pattern[bytes], text: bytes, heads: list[Match]) -> list[Match | None]:
    """``pattern`` matched on each line after its writer prefix (``heads``), in C."""
    return list(map(pattern.match, repeat(text), map(_END, heads), map(_ENDPOS, heads)))


def _column(matches: list[Match], group: int) -> tuple[Any, ...]:
    return tuple(orjson.loads(b"[" + b",".join(map(_G[group], matches)) + b"]"))


def _steps(matches: list[Match], group: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    steps = orjson.loads(b"[{" + b"},{".join(map(_G[group], matches)) + b"}]")
    return tuple(map(_TURN, steps)), tuple(map(_STEP_OF, steps))


_TURN = itemgetter("turn")
_STEP_OF = itemgetter("step")


def seqs_and_times(heads: list[Match]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The seqs and times of these writer-prefix matches (one ``orjson`` call each)."""
    return _column(heads, 2), _column(heads, 3)


@dataclass(slots=True)
class TokenRows:
    """A unit's token-use lines among its run lines: the batches, the steps whose chunk
    was seen, and the lines that must be read on their own (``alone``: of another
    shape, or in a batch that does not decode)."""

    batches: list[Batch]
    alone: list[Match]


def token_rows(
    text: bytes,
    chunks: list[Match],
    messages: list[Match],
    chunk_steps: set[bytes],
    chunk_markers: tuple[bytes, ...],
) -> TokenRows:
    """The rows of a unit's ``assistant/chunk`` and ``assistant/message`` lines
    (``chunks``, ``messages``: their writer-prefix matches, whose ``pos`` and
    ``endpos`` are the line). A chunk of another shape stays a plain run line unless
    it holds one of ``chunk_markers``; a message whose step's chunk was seen (in
    ``chunk_steps``, which this adds the unit's to) stays one too: the chunk counts,
    and only the latest message names the lane's model."""
    out = TokenRows([], [])
    if chunks:
        rests = _rests(_CHUNK_REST, text, chunks)
        if None in rests:  # text chunks, or a usage chunk spelled otherwise
            kept = [(h, r) for h, r in zip(chunks, rests, strict=True) if r is not None]
            find = text.find
            out.alone += [
                h
                for h, r in zip(chunks, rests, strict=True)
                if r is None and any(find(m, h.pos, h.endpos) != -1 for m in chunk_markers)
            ]
            chunks, rests = [h for h, _ in kept], [r for _, r in kept]
        if chunks:
            chunk_steps.update(map(_G[1], rests))
            out.batches.append(_chunk_batch(chunks, rests, out))
    if messages:
        _message_rows(text, messages, chunk_steps, out)
    out.batches = [b for b in out.batches if b is not None]
    return out


def _chunk_batch(heads: list[Match], rests: list[Any], out: TokenRows) -> Any:
    try:
        seqs, times = seqs_and_times(heads)
        turns, steps = _steps(rests, 1)
        return (CHUNK, seqs, times, turns, steps, _column(rests, 2), None)
    except (orjson.JSONDecodeError, KeyError, TypeError):
        out.alone += heads
        return None


def _message_rows(
    text: bytes, heads: list[Match], chunk_steps: set[bytes], out: TokenRows
) -> None:
    got = _rests(_LAST_REST, text, heads)
    rests = cast("list[Match]", got)
    firsts: list[tuple[Match, Match]] = []
    if None in got:  # usage first (other writers), or another shape
        lasts = []
        for head, rest in zip(heads, got, strict=True):
            if rest is not None:
                lasts.append((head, rest))
                continue
            first = _FIRST_REST.match(text, head.end(), head.endpos)
            if first is None:
                out.alone.append(head)
            else:
                firsts.append((head, first))
        heads, rests = [h for h, _ in lasts], [r for _, r in lasts]
    if heads:
        # The last message names the lane's model (DSH's writer puts its ``source``
        # at the message's end); the others count only where no chunk did.
        last, last_rest = heads[-1], rests[-1]
        source = tail_source(text, last_rest.end(), last.endpos)
        counted = list(map(chunk_steps.__contains__, map(_G[1], rests)))
        pairs = list(compress(zip(heads, rests, strict=True), map(not_, counted)))
        if counted[-1] and source is not None:
            pairs.append((last, last_rest))
        if pairs:
            named = source if pairs[-1][0] is last else None
            out.batches.append(_last_batch(text, pairs, named, out))
    if firsts:
        out.batches.append(_first_batch(firsts, out))


def message_tail(text: bytes, head_end: int, end: int) -> bytes:
    """A message line's data from the last ``"usage"`` near its end on, as
    ``{"data":{…`` (``null`` without one): data's own key exactly when it parses."""
    at = text.rfind(b'"usage"', max(head_end, end - TAIL_BYTES), end)
    return b'{"data":{' + text[at:end] if at != -1 else b"null"


def tail_source(text: bytes, head_end: int, end: int) -> dict[str, Any] | None:
    """The message's ``source`` of a line in DSH's spelling: its writer puts it at the
    message's end, just before the closing message id and the ``usage``
    (``…"source":{…},"id":"…"},"usage":{…}},"sourceEventSeqs":[…]…``)."""
    at = text.rfind(b'"usage"', max(head_end, end - TAIL_BYTES), end)
    hi = end if at == -1 else at
    return _source(text, max(head_end, hi - _SOURCE_WINDOW), hi)


def _last_batch(
    text: bytes, pairs: list[tuple[Match, Match]], last_source: dict[str, Any] | None,
    out: TokenRows,
) -> Any:  # fmt: skip
    """Messages in DSH's spelling; ``last_source`` is the last one's (only the latest
    source names the lane's model, so the others are not looked for)."""
    heads = [h for h, _ in pairs]
    try:
        seqs, times = seqs_and_times(heads)
        turns, steps = _steps([r for _, r in pairs], 1)
        tails = orjson.loads(
            b"[" + b",".join([message_tail(text, r.end(), h.endpos) for h, r in pairs]) + b"]"
        )
        usages = tuple(map(_tail_usage, tails))
        sources = (None,) * (len(heads) - 1) + (last_source,)
        return (MESSAGE, seqs, times, turns, steps, usages, sources)
    except (orjson.JSONDecodeError, KeyError, TypeError):
        out.alone += heads
        return None


def _first_batch(pairs: list[tuple[Match, Match]], out: TokenRows) -> Any:
    """Messages with ``usage`` first."""
    heads, rests = [h for h, _ in pairs], [r for _, r in pairs]
    try:
        seqs, times = seqs_and_times(heads)
        turns, steps = _steps(rests, 2)
        sources = orjson.loads(b"[" + b",".join(r.group(3) or b"null" for r in rests) + b"]")
        return (MESSAGE, seqs, times, turns, steps, _column(rests, 1), tuple(sources))
    except (orjson.JSONDecodeError, KeyError, TypeError):
        out.alone += heads
        return None


def _tail_usage(tail: Any) -> Any:
    if tail is None:
        return None
    data = tail.get("data") if type(tail) is dict else None
    return data.get("usage") if type(data) is dict else None


def merged(batches: list[Batch]) -> tuple[Batch, ...]:
    """One batch per type and kind of source (the units' batches end to end): the fold
    then takes a whole read's chunks at once."""
    by_kind: dict[tuple[str, bool], list[Batch]] = {}
    for batch in batches:
        by_kind.setdefault((batch[0], batch[6] is None), []).append(batch)
    out: list[Batch] = []
    for (kind, no_sources), group in by_kind.items():
        seqs, times, turns, steps, usages = (
            tuple(chain.from_iterable(column)) for column in list(zip(*group, strict=True))[1:6]
        )
        sources = None if no_sources else tuple(chain.from_iterable(b[6] or () for b in group))
        out.append((kind, seqs, times, turns, steps, usages, sources))
    return tuple(out)
