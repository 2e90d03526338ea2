"""Complete lines to the session header and events (bad lines counted, never raised).

The hot path of a cold read: a line whose type may be skipped is matched in place
(see ``skip_rules``) and never copied out or parsed.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from typing import Any

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
from dsh_task_gantt.logs.reader.skip_rules import (
    FIELD_KEYS,
    RunsPattern,
    SkipRule,
    has_marker,
    runs_pattern,
)

#: ``LogEvent(...)`` without the named tuple's generated ``__new__`` (a hot path).
_new_event: Callable[[tuple[str, int, int | None, Any, int, Any]], LogEvent] = functools.partial(
    tuple.__new__, LogEvent
)

#: ``Match.group`` unbound: mapped with the group's number (``methodcaller`` looks the
#: method up again for each match).
_GROUP = re.Match.group
#: A group of messages kept for :meth:`LineDecoder.take_run` (its batch comes there).
_PART: Any = ()

#: First bytes of a line that may be blank (``bytes.isspace`` whitespace).
_BLANK = frozenset(b" \t\n\r\x0b\x0c")
_LEADING_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*")
#: How DSH's writer starts an assistant chunk's or message's line, and where the two
#: differ (``c`` or ``m``).
_ASSISTANT = b'{"type":"assistant/'
_KIND_AT = len(_ASSISTANT)
_C, _M, _A = ord("c"), ord("m"), ord("a")
_TYPE_AT = len(b'{"type":"')
_MESSAGE_ONLY = frozenset({b"assistant/message"})
#: Per ``lastindex`` value: a ``bytes.translate`` table that makes it 1, any other 0.
_ONE_CODE = tuple(bytes(256)[:code] + b"\x01" + bytes(255 - code) for code in range(256))
#: A ``runs_pattern`` match's group of the run fields (its branch's; see ``RunsPattern``).
_LASTINDEX = operator.attrgetter("lastindex")


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
    return _new_event((etype, seq, time, obj.get("data"), position, obj.get("surfaceOp")))


def _decodes(raw: bytes) -> bool:
    """Whether a usage chunk's usage object is JSON (only another writer's spelling is
    looked at: DSH's own is matched digit by digit)."""
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


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
    #: Runs mode: the matched lines' run fields, a unit's joined at a time (``,N,T…``).
    run_rows: list[bytes] = field(default_factory=list)
    #: Runs mode, with ``marks``: each matched line's branch (``RunsPattern``), a unit's
    #: as bytes at a time, in the order of ``run_rows``.
    run_codes: list[bytes] = field(default_factory=list)
    #: Runs mode: the pattern for ``skip`` and ``marks`` (made at the first unit).
    runs: RunsPattern | None = None
    #: Runs mode: the token-use rows read in bulk (``line_ends.bulk_rows``).
    run_usage: list[line_ends.Batch] = field(default_factory=list)
    #: Runs mode: the steps (``"turn":T,"step":S``) whose usage chunk this read saw.
    chunk_steps: set[bytes] = field(default_factory=set)
    #: Runs mode: the usage chunks in DSH's spelling, a unit's rows at a time
    #: (``line_ends.counts_row_bytes``), decoded once by :meth:`take_run`.
    chunk_rows: list[bytes] = field(default_factory=list)
    #: Runs mode: the messages of counted steps, as ``seq,time`` rows
    #: (``line_ends.seq_time_bytes``), decoded once by :meth:`take_run`.
    counted_rows: list[bytes] = field(default_factory=list)
    #: Runs mode: each unit's message that names the lane's model though its step's
    #: chunk counts (``line_ends.named_row_bytes``), and its source.
    named_rows: list[bytes] = field(default_factory=list)
    named_sources: list[dict[str, Any]] = field(default_factory=list)
    #: Runs mode: the other messages read in bulk, a group of a unit's at a time, their
    #: usage decoded (``line_ends.last_part``, ``first_part``); :meth:`take_run` makes
    #: one batch of them (at ``message_at`` among ``run_usage``), and a message whose
    #: step's chunk came later in the read then stands for its seq and time only.
    message_parts: list[line_ends.MessagePart] = field(default_factory=list)
    message_at: int = 0

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
        runs = self.runs
        if runs is None:
            runs = self.runs = runs_pattern(skip, self.marks)
        # Its matches always hold a group (``lastindex`` is an int: not checked per line).
        match_runs: Callable[[bytes, int, int], Any] = runs.pattern.match
        plain_last = runs.plain_last
        needles = runs.needles
        match_ends = skip.ends_prefix.match if skip.ends_prefix is not None else None
        # Only an assistant message's line can match ``ends_prefix``: looked for only
        # where the line's first bytes say so (``kind``).
        ends_by_kind = skip.ends == _MESSAGE_ONLY
        bulk = match_ends is not None  # token-use lines in DSH's own spelling, in bulk
        match_chunk = line_ends.match_chunk
        match_counts = line_ends.match_chunk_counts
        match_last, match_first = line_ends.match_message_last, line_ends.match_message_first
        chunk_steps = self.chunk_steps
        counts: list[re.Match[bytes]] = []  # usage chunks in DSH's spelling: count columns
        # Messages in DSH's spelling: sorted once the unit's chunks are known (below).
        messages: list[re.Match[bytes]] = []
        chunks: list[re.Match[bytes]] = []  # other usage chunks: usage objects
        lasts: list[tuple[re.Match[bytes], bytes]] = []
        firsts: list[re.Match[bytes]] = []
        # Messages of steps whose chunk this read saw: the chunk counts, the message
        # only stands for its seq and time (the fold would drop its usage anyway).
        counted: list[re.Match[bytes]] = []
        sourced: re.Match[bytes] | None = None  # the last counted message with a source
        in_bulk = 0  # lines matched by the bulk token-use patterns (each match's
        # ``pos`` and ``endpos`` are its line, to read it on its own if need be)
        matched: list[re.Match[bytes]] = []
        keep = matched.append
        append = self.events.append
        find = text.find
        index = self.next_index  # of the next event, not counting matched lines
        others = 0  # non-blank lines that are not matched
        bad = 0
        pos, size = 0, len(text)
        # Where a line's kind byte is inside ``text`` (none without the bulk patterns).
        kind_at, type_at, assistant = _KIND_AT, _TYPE_AT, _A
        loads, JSONDecodeError = orjson.loads, orjson.JSONDecodeError
        kinds_before = size - kind_at if bulk else 0
        while pos < size:
            end = find(b"\n", pos)
            if end == -1:
                end = size
            # DSH's token-use lines: matched whole, in bulk (``line_ends``). Picked by
            # two bytes (an index is far cheaper than a call); each pattern says the rest
            # (the bytes of a line too short to hold them are the next line's: only a hint).
            kind = (
                text[pos + kind_at]
                if pos < kinds_before and text[pos + type_at] == assistant
                else 0
            )
            if kind:
                found = match_counts(text, pos, end) if kind == _C else None
                if found is not None:
                    counts.append(found)
                elif kind == _C:
                    found = match_chunk(text, pos, end)
                    if found is not None and _decodes(found.group(4)):
                        chunk_steps.add(found.group(3))
                        chunks.append(found)
                    else:
                        # No usage read from it: its step's message counts, as in a
                        # line-by-line read (the line is a run line of its own below).
                        found = None
                elif kind == _M:
                    found = match_last(text, pos, end)
                    if found is not None:
                        messages.append(found)
                    else:
                        found = match_first(text, pos, end)
                        if found is not None:
                            if found.group(4) not in chunk_steps:
                                firsts.append(found)
                            elif found.group(5) is None:
                                counted.append(found)
                            else:  # only the latest source names the lane's model
                                if sourced is not None:
                                    counted.append(sourced)
                                sourced = found
                if found is not None:
                    in_bulk += 1
                    pos = end + 1
                    continue
            match = match_runs(text, pos, end)
            if match is not None and (code := match.lastindex) > plain_last:  # with markers
                for needle, marked in needles[match.group(code - 1)]:  # no call per line
                    if find(needle, pos, end) != -1 and has_marker(find, marked, pos, end):
                        match = None
                        break
            if match is not None:
                keep(match)
            elif pos != end and not (text[pos] in _BLANK and text[pos:end].isspace()):
                others += 1
                position = index + len(matched) + in_bulk
                event = None
                if match_ends is not None and (kind == _M or not ends_by_kind):
                    found = match_ends(text, pos, end)
                    if found is not None:
                        event = _probed(text, found, end, position)
                if event is None:  # parsed in full: ``parse_event_line``, its usual case inline
                    try:
                        obj = loads(text[pos:end])
                    except JSONDecodeError:
                        obj = None
                    if (
                        type(obj) is dict
                        and type(etype := obj.get("type")) is str
                        and type(seq := obj.get("seq")) is int
                        and 0 <= seq <= MAX_SAFE_INT
                        and type(etime := obj.get("time")) is int
                        and 0 <= etime <= MAX_SAFE_INT
                    ):
                        event = _new_event(
                            (etype, seq, etime, obj.get("data"), position, obj.get("surfaceOp"))
                        )
                    else:
                        event = event_from_object(obj, position)
                if event is None:
                    bad += 1  # bad lines take no index
                else:
                    append(event)
                    index += 1
            pos = end + 1
        if sourced is not None:
            firsts.append(sourced)
        rows: list[tuple[bytes, ...]] = []
        if counts:  # their groups once: the steps now, the rows' bytes below
            rows = line_ends.count_rows(counts)
            chunk_steps.update(map(line_ends.STEP_OF_ROW, rows))
        # The DSH-spelled messages of steps whose chunk this read saw (so far, or later
        # in this unit) stand for their seqs and times; the others' usage is read. In
        # C-level passes, not a set lookup and a call per line.
        counted_last: list[re.Match[bytes]] = []
        if messages:
            seen = list(map(chunk_steps.__contains__, map(_GROUP, messages, repeat(3))))
            if all(seen):  # the usual unit: every step's chunk came first
                counted_last = messages
            else:
                counted_last = list(compress(messages, seen))
                for found in compress(messages, map(operator.not_, seen)):
                    tail = line_ends.message_tail(text, found.end(), found.endpos)
                    lasts.append((found, tail))
        # The latest message in DSH's own spelling whose step a chunk counts still names
        # the lane's model: it goes as a message of no usage (the fold keeps its source
        # and counts the chunk).
        named_last: tuple[re.Match[bytes], dict[str, Any]] | None = None
        if counted_last and not (counted and counted[-1].pos > counted_last[-1].pos):
            source = line_ends.tail_source(counted_last[-1])
            if source is not None:
                named_last = (counted_last.pop(), source)
        counted += counted_last
        if lasts and not chunks and not firsts:
            # The usual unit with messages to read: only its DSH-spelled ones, one part.
            part = line_ends.last_part(lasts, line_ends.tail_source(lasts[-1][0]))
            if part is not None:
                if not self.message_parts and not self.named_rows:
                    self.message_at = len(self.run_usage)
                self.message_parts.append(part)
                index += len(lasts)
                self.lines_seen += len(lasts)
                lasts = []
        if chunks or lasts or firsts:
            # Each group decoded here as far as its line must be read on its own when it
            # does not decode (below, in this order: a line's index depends on it); the
            # messages' digits wait for :meth:`take_run` (``message_parts``).
            groups: list[tuple[list[re.Match[bytes]], line_ends.Batch | None]] = []
            parts: list[line_ends.MessagePart | None] = []
            if chunks:
                groups.append((chunks, line_ends.chunk_batch(chunks)))
            if lasts:
                source = line_ends.tail_source(lasts[-1][0])
                part = line_ends.last_part(lasts, source)
                groups.append(([m for m, _ in lasts], None if part is None else _PART))
                parts.append(part)
            if firsts:
                part = line_ends.first_part(firsts)
                groups.append((firsts, None if part is None else _PART))
                parts.append(part)
            for group, batch in groups:
                if batch is None:  # a batch that does not decode: each line on its own
                    for found in group:
                        start, stop = found.pos, found.endpos
                        ends = match_ends(text, start, stop) if match_ends is not None else None
                        event = _probed(text, ends, stop, index) if ends is not None else None
                        if event is None:
                            event = parse_event_line(text[start:stop], index)
                        if event is None:
                            bad += 1
                        else:
                            append(event)
                            index += 1
                    others += len(group)
                    continue
                if batch is not _PART:
                    self.run_usage.append(batch)
                    self.run_seqs += batch[1]
                    self.run_time = max(self.run_time, max(batch[2]))
                index += len(group)
                self.lines_seen += len(group)
            for part in parts:
                if part is not None:
                    if not self.message_parts and not self.named_rows:
                        self.message_at = len(self.run_usage)
                    self.message_parts.append(part)
        # The rows whose numbers always decode (digits matched by the patterns) wait for
        # :meth:`take_run`, a read's rows in one decode: usage chunks in DSH's spelling,
        # the messages of counted steps (seq and time only) and the one that names the
        # model (as a message of no usage).
        if counts:
            self.chunk_rows.append(line_ends.rows_bytes(rows))
        if counted:
            self.counted_rows.append(line_ends.seq_time_bytes(counted))
        if named_last is not None:
            match, source = named_last
            if not self.message_parts and not self.named_rows:
                self.message_at = len(self.run_usage)
            self.named_rows.append(line_ends.named_row_bytes(match))
            self.named_sources.append(source)
        counted_rows = len(counts) + len(counted) + (named_last is not None)
        index += counted_rows
        self.lines_seen += counted_rows
        if matched:
            # Each line's ``,"seq":N,"time":T`` (one group, no type), decoded a read's at
            # once in :meth:`take_run`: their keys' bytes deleted, the digits the pattern
            # matched always decode. The marks are told by each match's branch.
            codes = list(map(_LASTINDEX, matched))
            self.run_rows.append(b"".join(map(_GROUP, matched, codes)).translate(None, FIELD_KEYS))
            if any(runs.mark_codes):
                self.run_codes.append(bytes(codes))
        self.next_index = index + len(matched)
        self.lines_seen += len(matched) + others
        self.bad_lines += bad

    def take_run(self) -> EventRun | None:
        """The lines matched by :meth:`feed_runs` as one run (``None`` when none):
        their seqs, latest time and the latest seq of each type in ``marks``."""
        if not (
            self.run_seqs
            or self.chunk_rows
            or self.counted_rows
            or self.named_rows
            or self.message_parts
            or self.run_rows
        ):
            return None
        if self.run_rows:
            self._decode_run_rows()
        # The run's seqs and times, joined once at the end (not a tuple copied per part).
        seq_parts: list[Sequence[Any]] = [self.run_seqs]
        time_parts: list[Sequence[Any]] = []
        latest = tuple(
            (mark.decode(), self.run_latest[mark]) for mark in self.marks if mark in self.run_latest
        )
        batches = list(self.run_usage)
        if self.message_parts or self.named_rows:
            batch, counted = line_ends.message_batch(
                self.message_parts, self.chunk_steps, self.named_rows, self.named_sources
            )
            if batch[1]:
                batches.insert(self.message_at, batch)
            seq_parts += (batch[1], counted[0])
            time_parts += (batch[2], counted[1])
        usage = line_ends.merged(batches)
        if self.counted_rows:  # seqs and times only
            counted_seqs, counted_times = line_ends.seq_time_columns(self.counted_rows)
            seq_parts.append(counted_seqs)
            time_parts.append(counted_times)
        if self.chunk_rows:  # the DSH-spelled usage chunks: their seqs and times are here
            chunks = line_ends.counted_chunks(self.chunk_rows)
            usage = (*usage, chunks)
            seq_parts.append(chunks[1])
            time_parts.append(chunks[2])
        seqs = tuple(chain.from_iterable(seq_parts))
        run_time = max(self.run_time, max(map(max, filter(None, time_parts)), default=-1))
        return EventRun(len(seqs), seqs, run_time, latest, usage)

    def _decode_run_rows(self) -> None:
        """The matched lines' seqs, latest time and marks, from their run fields: one
        JSON array of seq, time, ... (C makes the ints, where a group call per value,
        or an int() per line, cost as much again as matching the line); a line's mark
        is its branch (``run_codes``)."""
        # A leading 0: each unit's fields start with a comma.
        fields = orjson.loads(b"[0" + b"".join(self.run_rows) + b"]")
        self.run_rows = []
        seqs = fields[1::2]
        self.run_seqs += seqs
        self.run_time = max(self.run_time, max(fields[2::2]))
        if self.run_codes and self.runs is not None:
            codes = b"".join(self.run_codes)
            self.run_codes = []
            latest = self.run_latest
            for mark, code in zip(self.marks, self.runs.mark_codes, strict=True):
                if not code or code not in codes:
                    continue
                # The rows of this branch as a bytes of 1s and 0s: ``compress`` reads it
                # without a call per row.
                seq = max(compress(seqs, codes.translate(_ONE_CODE[code])))
                if seq > latest.get(mark, -1):
                    latest[mark] = seq

    def _header_line(self, line: bytes) -> bool:
        header = header_from_line(line)
        if header is None:
            return False
        self.header = header
        return True
