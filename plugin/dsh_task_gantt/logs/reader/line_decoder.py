"""Complete lines to the session header and events (bad lines counted, never raised).

The hot path of a cold read: a line whose type may be skipped is matched in place
(see ``skip_rules``) and never copied out or parsed.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import not_
from typing import Any, cast

import orjson

from dsh_task_gantt.events import (
    MAX_SAFE_INT,
    EventRun,
    LogEvent,
    SessionHeader,
    as_int,
    as_time,
    header_from_line,
)
from dsh_task_gantt.logs.reader import line_ends
from dsh_task_gantt.logs.reader.line_ends import PARSE, probe
from dsh_task_gantt.logs.reader.skip_rules import SkipRule, has_marker

#: ``LogEvent(...)`` without the named tuple's generated ``__new__`` (a hot path).
_new_event: Callable[[tuple[str, int, int | None, Any, int, None]], LogEvent] = functools.partial(
    tuple.__new__, LogEvent
)

_NAME = operator.methodcaller("group", 1)
_SEQ = operator.methodcaller("group", 2)
_TIME = operator.methodcaller("group", 3)
#: A bulk match's step (``"turn":T,"step":S``), and where a match's line is.
_STEP_BYTES = operator.methodcaller("group", 3)
_POS = operator.attrgetter("pos")
_ENDPOS = operator.attrgetter("endpos")
_POSITION = operator.attrgetter("position")
_CHUNK_NAME = line_ends.CHUNK.encode()
_MESSAGE_NAME = line_ends.MESSAGE.encode()

#: First bytes of a line that may be blank (``bytes.isspace`` whitespace).
_BLANK = frozenset(b" \t\n\r\x0b\x0c")
_LEADING_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*")
#: How DSH's writer starts an assistant chunk's or message's line, and where the two
#: differ (``c`` or ``m``).
_ASSISTANT = b'{"type":"assistant/'
_KIND_AT = len(_ASSISTANT)
_C, _M, _A = ord("c"), ord("m"), ord("a")
_TYPE_AT = len(b'{"type":"')


def event_from_object(obj: Any, position: int) -> LogEvent | None:
    """``events.parse_line`` after ``orjson.loads``, with exact-type fast paths.

    Same result as ``coerce_event`` for a parsed line (tested), at a fraction of
    the cost: it runs once per line of a 19,000-line log.
    """
    if type(obj) is not dict:
        return None
    etype = obj.get("type")
    if type(etype) is not str:
        return None
    seq = obj.get("seq")
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INT:
        seq = as_int(seq)
        if seq is None or seq < 0:
            seq = position
    time = obj.get("time")
    if type(time) is not int or not 0 <= time <= MAX_SAFE_INT:
        time = as_time(time)
    return LogEvent(etype, seq, time, obj.get("data"), position, obj.get("surfaceOp"))


def _probed(text: bytes, match: re.Match[bytes], end: int, position: int) -> LogEvent | None:
    """A line of a ``line_ends`` type as an event with its small fields for data
    (``None`` when it must be parsed in full)."""
    data = probe(text, match.end(), end)
    if data is PARSE:
        return None
    name, seq, time = match.groups()
    return _new_event((name.decode(), int(seq), int(time), data, position, None))


def parse_event_line(line: bytes, position: int) -> LogEvent | None:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return event_from_object(obj, position)


@dataclass(slots=True)
class LineDecoder:
    """Turns complete lines into the header and events (bad lines counted)."""

    skip: SkipRule | None
    lines_seen: int
    next_index: int
    header: SessionHeader | None = None
    bad_lines: int = 0
    events: list[LogEvent] = field(default_factory=list)
    #: Runs mode (:meth:`feed_runs`): type, seq and time of each matched line, as bytes.
    #: Runs mode: the types whose latest seq a run carries (``run_marks``).
    marks: tuple[bytes, ...] = ()
    #: Runs mode (:meth:`feed_runs`): seqs and latest time of the matched lines, and
    #: the latest seq of each type in ``marks``.
    run_seqs: list[int] = field(default_factory=list)
    run_time: int = -1
    run_latest: dict[bytes, int] = field(default_factory=dict)
    #: Runs mode: the token-use rows read in bulk (``line_ends.bulk_rows``).
    run_usage: list[line_ends.Batch] = field(default_factory=list)
    #: Runs mode: the steps (``"turn":T,"step":S``) whose usage chunk this read saw.
    chunk_steps: set[bytes] = field(default_factory=set)
    #: Runs mode: the usage chunks in DSH's spelling, a unit's rows at a time
    #: (``line_ends.counts_row_bytes``), decoded once by :meth:`take_run`.
    chunk_rows: list[bytes] = field(default_factory=list)

    def feed(self, text: bytes, keep_from: int = 0, keep_to: int | None = None) -> None:
        """Decode the ``\n``-separated lines of ``text``; keep only events with index in
        ``[keep_from, keep_to)``. Lines that may skip parsing are matched in place."""
        skip = self.skip
        match_prefix = skip.prefix.match if skip is not None else None
        markers = dict(skip.markers) if skip is not None else {}
        ends = skip.ends if skip is not None else frozenset()
        names: dict[bytes, str] = {}  # decoded type names, once per name
        append = self.events.append
        find = text.find
        index = self.next_index
        lines_seen = self.lines_seen
        pos, size = 0, len(text)
        while pos < size:
            end = find(b"\n", pos)
            if end == -1:
                end = size
            start, pos = pos, end + 1
            if start == end or (text[start] in _BLANK and text[start:end].isspace()):
                continue
            if lines_seen == 0:
                lines_seen = 1
                if self._header_line(text[start:end]):
                    continue
            else:
                lines_seen += 1
            if keep_to is not None and index >= keep_to:
                break
            event: LogEvent | None = None
            if match_prefix is not None:
                match = match_prefix(text, start, end)
                if match is not None:
                    raw_name, raw_seq, raw_time = match.groups()
                    marker = markers.get(raw_name)
                    seq, time = int(raw_seq), int(raw_time)
                    if (marker is None or not has_marker(find, marker, start, end)) and (
                        seq <= MAX_SAFE_INT and time <= MAX_SAFE_INT
                    ):
                        name = names.get(raw_name)
                        if name is None:
                            name = names[raw_name] = raw_name.decode()
                        data = probe(text, match.end(), end) if raw_name in ends else None
                        if data is not PARSE:
                            event = _new_event((name, seq, time, data, index, None))
            if event is None:
                event = parse_event_line(text[start:end], index)
            if event is None:
                self.bad_lines += index >= keep_from  # bad lines take no index
                continue
            if index >= keep_from:
                append(event)
            index += 1
        self.next_index = index
        self.lines_seen = lines_seen

    def feed_runs(self, text: bytes) -> None:
        """Like :meth:`feed`, but the lines :meth:`feed` would return with ``data=None``
        are only matched here; :meth:`take_run` summarises them, for the whole read,
        as one :class:`EventRun`. Same indices, counts and bad lines as :meth:`feed`
        (which reads the lines up to the header).

        One pass, one ``find`` and one ``match`` per line: measured against a C-level
        ``map`` of the matches and a ``findall`` over the unit, this was the fastest.
        The token-use lines match the same prefix and are read after the loop, in
        C-level passes over them (:meth:`_read_tokens`).
        """
        skip = self.skip
        if skip is None:
            self.feed(text)
            return
        if self.lines_seen == 0:
            # Up to and with the first line that is not blank (the header, or not).
            leading = _LEADING_BLANK.match(text)
            cut = text.find(b"\n", leading.end() if leading else 0) + 1 or len(text)
            self.feed(text[:cut])
            text = text[cut:]
        bulk = skip.bulk_prefix is not None
        match_prefix = (skip.bulk_prefix or skip.run_prefix).match
        match_marked = skip.marked_prefix.match if skip.marked_prefix is not None else None
        needles = dict(skip.needles)
        # With the bulk, an ends line that matches its prefix matched the loop's first:
        # none is left for the ends prefix (the bulk hands back those it cannot read).
        match_ends = skip.ends_prefix.match if skip.ends_prefix is not None and not bulk else None
        matched: list[re.Match[bytes]] = []
        keep = matched.append
        first_event = len(self.events)
        append = self.events.append
        find = text.find
        index = self.next_index  # of the next event, not counting matched lines
        others = 0  # non-blank lines that are not matched
        bad = 0
        pos, size = 0, len(text)
        while pos < size:
            end = find(b"\n", pos)
            if end == -1:
                end = size
            match = match_prefix(text, pos, end)
            if match is None and match_marked is not None:
                match = match_marked(text, pos, end)
                if match is not None:
                    for needle, marked in needles[match.group(1)]:  # no call per line
                        if find(needle, pos, end) != -1 and has_marker(find, marked, pos, end):
                            match = None
                            break
            if match is not None:
                keep(match)
            elif pos != end and not (text[pos] in _BLANK and text[pos:end].isspace()):
                others += 1
                position = index + len(matched)
                event = None
                if match_ends is not None:
                    found = match_ends(text, pos, end)
                    if found is not None:
                        event = _probed(text, found, end, position)
                if event is None:
                    event = parse_event_line(text[pos:end], position)
                if event is None:
                    bad += 1  # bad lines take no index
                else:
                    append(event)
                    index += 1
            pos = end + 1
        if matched:
            names = list(map(_NAME, matched))
            if bulk:
                promoted = self._read_tokens(text, matched, names)
                if promoted:
                    # Lines the bulk could not read: read alone, as the loop would have.
                    index, bad_promoted = self._promote(text, matched, promoted, first_event)
                    bad += bad_promoted
                    others += len(promoted)
                    kept = [True] * len(matched)
                    for k in promoted:
                        kept[k] = False
                    matched = list(compress(matched, kept))
                    names = list(compress(names, kept))
        if matched:
            # The digits go to orjson as one JSON array: C makes the ints, where an
            # int() per line cost as much again as matching the line.
            seqs = orjson.loads(b"[" + b",".join(map(_SEQ, matched)) + b"]")
            self.run_seqs += seqs
            self.run_time = max(
                self.run_time, max(orjson.loads(b"[" + b",".join(map(_TIME, matched)) + b"]"))
            )
            if self.marks:
                latest = self.run_latest
                for mark in self.marks:
                    seq = max(compress(seqs, map(mark.__eq__, names)), default=-1)
                    if seq > latest.get(mark, -1):
                        latest[mark] = seq
        self.next_index = index + len(matched)
        self.lines_seen += len(matched) + others
        self.bad_lines += bad

    def _read_tokens(
        self, text: bytes, matched: list[re.Match[bytes]], names: list[bytes]
    ) -> list[int]:
        """Read the token-use lines among ``matched`` (this unit's prefix matches, their
        type names ``names``) in bulk; they stay in ``matched`` for their seq and time.
        Returns the indices in ``matched`` of those to read alone instead (a shape the
        bulk does not know: :meth:`_promote`), in order."""
        promoted: list[int] = []
        at_chunk = list(compress(range(len(names)), map(_CHUNK_NAME.__eq__, names)))
        at_message = list(compress(range(len(names)), map(_MESSAGE_NAME.__eq__, names)))
        chunk_steps = self.chunk_steps
        if at_chunk:
            lines = list(map(matched.__getitem__, at_chunk))
            found = list(
                map(
                    line_ends.match_chunk_counts,
                    repeat(text),
                    map(_POS, lines),
                    map(_ENDPOS, lines),
                )
            )
            rows = cast("list[re.Match[bytes]]", found)
            if None in found:  # other spellings: one by one
                odd = [k for k, f in zip(at_chunk, found, strict=True) if f is None]
                rows = [f for f in found if f is not None]
                promoted += self._odd_chunks(text, matched, odd)
            if rows:
                chunk_steps.update(map(_STEP_BYTES, rows))
                self.chunk_rows.append(line_ends.counts_row_bytes(rows))
        if at_message:
            promoted += self._messages(text, matched, at_message)
        promoted.sort()
        return promoted

    def _odd_chunks(self, text: bytes, matched: list[re.Match[bytes]], at: list[int]) -> list[int]:
        """Chunk lines not in the counts' spelling: usage objects decoded as such, or
        (a chunk of any other kind) no usage at all; those with a marker but neither
        shape are read alone (returned)."""
        promoted: list[int] = []
        rows: list[re.Match[bytes]] = []
        markers = dict(self.skip.bulk_markers).get(_CHUNK_NAME, ()) if self.skip else ()
        find = text.find
        for k in at:
            line = matched[k]
            found = line_ends.match_chunk(text, line.pos, line.endpos)
            if found is not None:
                rows.append(found)
            elif has_marker(find, markers, line.pos, line.endpos):
                promoted.append(k)
        if rows:
            batch = line_ends.chunk_batch(rows)
            if batch is None:  # does not decode: each line on its own
                promoted += _indices_of(matched, at, rows)
            else:
                self.chunk_steps.update(map(_STEP_BYTES, rows))
                self.run_usage.append(batch)
        return promoted

    def _messages(self, text: bytes, matched: list[re.Match[bytes]], at: list[int]) -> list[int]:
        """The assistant messages among ``matched`` (at ``at``): the usage of those whose
        step no chunk of this read counts, and the latest source."""
        chunk_steps = self.chunk_steps
        lines = list(map(matched.__getitem__, at))
        lasts = list(
            map(line_ends.match_message_last, repeat(text), map(_POS, lines), map(_ENDPOS, lines))
        )
        promoted: list[int] = []
        uncounted: list[re.Match[bytes]] = []
        firsts: list[re.Match[bytes]] = []
        # Messages of steps whose chunk this read saw: the chunk counts, the message
        # only stands for its seq and time (the fold would drop its usage anyway).
        counted: list[re.Match[bytes]] = []
        if None not in lasts:  # DSH's own writer: C-level passes
            every = cast("list[re.Match[bytes]]", lasts)
            chunked = list(map(chunk_steps.__contains__, map(_STEP_BYTES, every)))
            uncounted = list(compress(every, map(not_, chunked)))
            if True in chunked:  # only the last counts (its source)
                counted = [every[len(chunked) - 1 - chunked[::-1].index(True)]]
        else:
            sourced: re.Match[bytes] | None = None  # the last counted message with a source
            for k, found in zip(at, lasts, strict=True):
                if found is not None:
                    if found.group(3) in chunk_steps:
                        counted.append(found)
                    else:
                        uncounted.append(found)
                    continue
                line = matched[k]
                found = line_ends.match_message_first(text, line.pos, line.endpos)
                if found is None:
                    promoted.append(k)
                elif found.group(4) not in chunk_steps:
                    firsts.append(found)
                elif found.group(5) is None:
                    counted.append(found)
                else:  # only the latest source names the lane's model
                    if sourced is not None:
                        counted.append(sourced)
                    sourced = found
            if sourced is not None:
                firsts.append(sourced)
        # The latest message in DSH's own spelling whose step a chunk counts still names
        # the lane's model: it goes as a message of no usage (the fold keeps its source
        # and counts the chunk).
        if counted and counted[-1].re is line_ends.MESSAGE_LAST:
            source = line_ends.tail_source(counted[-1])
            if source is not None:
                batch = line_ends.last_batch([(counted[-1], b"null")], None, source)
                if batch is not None:
                    self.run_usage.append(batch)
        if uncounted:
            tails = [line_ends.message_tail(text, m.end(), m.endpos) for m in uncounted]
            source = line_ends.tail_source(uncounted[-1])
            batch = line_ends.last_batch(list(zip(uncounted, tails, strict=True)), None, source)
            if batch is None:
                promoted += _indices_of(matched, at, uncounted)
            else:
                self.run_usage.append(batch)
        if firsts:
            batch = line_ends.first_batch(firsts)
            if batch is None:
                promoted += _indices_of(matched, at, firsts)
            else:
                self.run_usage.append(batch)
        return promoted

    def _promote(
        self, text: bytes, matched: list[re.Match[bytes]], promoted: list[int], first_event: int
    ) -> tuple[int, int]:
        """Read the lines ``matched[k]`` for ``k`` in ``promoted`` (in order) alone, as
        the loop reads a line it did not match, at their places among this unit's
        events (the events keep the order and indices of :meth:`feed`). Returns the
        next event index not counting the matched lines left, and the bad lines."""
        match_ends = self.skip.ends_prefix.match if self.skip and self.skip.ends_prefix else None
        loop_events = self.events[first_event:]
        base = self.next_index
        # Matched lines before each of the loop's events (its index is base + j + that).
        before = [e.position - base - j for j, e in enumerate(loop_events)]
        out: list[LogEvent] = []
        bad = 0
        for k in promoted:
            line = matched[k]
            start, stop = line.pos, line.endpos
            # Its index: the matched and the loop's lines before it, less the bad ones.
            position = base + k + bisect.bisect_right(before, k) - bad
            event = None
            if match_ends is not None:
                ends = match_ends(text, start, stop)
                if ends is not None:
                    event = _probed(text, ends, stop, position)
            if event is None:
                event = parse_event_line(text[start:stop], position)
            if event is None:
                bad += 1
                before_bad = k
                # The later loop events' indices move down by one.
                loop_events = [
                    e._replace(position=e.position - 1) if before[j] > before_bad else e
                    for j, e in enumerate(loop_events)
                ]
                continue
            out.append(event)
        self.events[first_event:] = sorted(loop_events + out, key=_POSITION)
        return base + len(loop_events) + len(out), bad

    def take_run(self) -> EventRun | None:
        """The lines matched by :meth:`feed_runs` as one run (``None`` when none):
        their seqs, latest time and the latest seq of each type in ``marks``."""
        if not self.run_seqs:
            return None
        seqs = tuple(self.run_seqs)
        latest = tuple(
            (mark.decode(), self.run_latest[mark]) for mark in self.marks if mark in self.run_latest
        )
        usage = line_ends.merged(self.run_usage)
        if self.chunk_rows:
            usage = (*usage, line_ends.counted_chunks(self.chunk_rows))
        return EventRun(len(seqs), seqs, self.run_time, latest, usage)

    def _header_line(self, line: bytes) -> bool:
        header = header_from_line(line)
        if header is None:
            return False
        self.header = header
        return True


def _indices_of(
    matched: list[re.Match[bytes]], at: list[int], found: list[re.Match[bytes]]
) -> list[int]:
    """The indices among ``at`` of the lines ``found`` matched (by where they start)."""
    starts = {f.pos for f in found}
    return [k for k in at if matched[k].pos in starts]
