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
from operator import not_, sub
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
from dsh_task_gantt.logs.reader.skip_rules import SkipRule, has_marker

#: ``LogEvent(...)`` without the named tuple's generated ``__new__`` (a hot path).
_new_event: Callable[[tuple[str, int, int | None, Any, int, None]], LogEvent] = functools.partial(
    tuple.__new__, LogEvent
)

_NAME = operator.methodcaller("group", 1)
_SEQ = operator.methodcaller("group", 2)
_TIME = operator.methodcaller("group", 3)
#: The groups of ``line_ends.bulk_prefix``: seq, time, a chunk's or a message's step.
_BULK_SEQ = operator.methodcaller("group", line_ends.BULK_SEQ)
_BULK_TIME = operator.methodcaller("group", line_ends.BULK_TIME)
_CHUNK_STEP = operator.methodcaller("group", line_ends.CHUNK_STEP)
_LAST_STEP = operator.methodcaller("group", line_ends.LAST_STEP)
_END = operator.methodcaller("end")
_ENDPOS = operator.attrgetter("endpos")
_FIRST = operator.itemgetter(0)
#: Where a bulk match's chunk group starts: -1 (``_UNSET``) when not one.
_CHUNK_SET = operator.methodcaller("start", 2)
_UNSET = -1
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
        The token-use lines in DSH's spelling match the same prefix, whole or their
        head (``line_ends.bulk_prefix``), and are read after the loop in C-level
        passes (:meth:`_read_tokens`).
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
        match_ends = skip.ends_prefix.match if skip.ends_prefix is not None else None
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
            if match is not None:
                keep(match)
            elif match_marked is not None and (match := match_marked(text, pos, end)):
                for needle, markers in needles[match.group(1)]:  # no call per line
                    if find(needle, pos, end) != -1 and has_marker(find, markers, pos, end):
                        match = None
                        break
                else:
                    keep(match)
            if (
                match is None
                and pos != end
                and not (text[pos] in _BLANK and text[pos:end].isspace())
            ):
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
        names = list(map(_NAME, matched)) if bulk or self.marks else []
        if bulk and matched:
            promoted = self._read_tokens(text, matched, names)
            if promoted:
                # Lines the bulk could not read after all: read alone, as the loop would.
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
            get_seq, get_time = (_BULK_SEQ, _BULK_TIME) if bulk else (_SEQ, _TIME)
            seqs = orjson.loads(b"[" + b",".join(map(get_seq, matched)) + b"]")
            self.run_seqs += seqs
            self.run_time = max(
                self.run_time, max(orjson.loads(b"[" + b",".join(map(get_time, matched)) + b"]"))
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
        """Read the token-use lines among ``matched`` (this unit's bulk prefix matches,
        their type names ``names``); they stay in ``matched`` for their seq and time.
        Returns the indices in ``matched`` of those to read alone after all (their
        batch does not decode: :meth:`_promote`), in order."""
        if _CHUNK_NAME in names:  # a usage chunk, or (marked) a chunk of another kind
            chunks = list(compress(matched, map(_CHUNK_NAME.__eq__, names)))
            if _UNSET in map(_CHUNK_SET, chunks):
                chunks = list(compress(chunks, map(_UNSET.__ne__, map(_CHUNK_SET, chunks))))
            if chunks:
                self.chunk_steps.update(map(_CHUNK_STEP, chunks))
                self.chunk_rows.append(line_ends.counts_row_bytes(chunks))
        if _MESSAGE_NAME not in names:
            return []
        # Every message matched is one in bulk (a message is no marked type).
        at = list(compress(range(len(names)), map(_MESSAGE_NAME.__eq__, names)))
        return self._messages(text, matched, at)

    def _messages(self, text: bytes, matched: list[re.Match[bytes]], at: list[int]) -> list[int]:
        """The assistant messages among ``matched`` (at ``at``): the usage of those whose
        step no chunk of this read counts, and the latest source."""
        chunk_steps = self.chunk_steps
        found = list(map(matched.__getitem__, at))
        last_steps = list(map(_LAST_STEP, found))
        lasts: list[re.Match[bytes]] = []  # DSH's spelling, no chunk counts the step
        firsts: list[re.Match[bytes]] = []  # usage first, no chunk counts the step
        # Messages of steps whose chunk this read saw: the chunk counts, the message
        # only stands for its seq and time (the fold would drop its usage anyway), and
        # maybe for the lane's model.
        counted: list[re.Match[bytes]] = []  # usage first, naming a source
        spelled_last = found
        if None not in last_steps:  # DSH's own writer: C-level passes
            lasts = list(compress(found, map(not_, map(chunk_steps.__contains__, last_steps))))
        else:
            spelled_last = []
            for message, step in zip(found, last_steps, strict=True):
                if step is not None:
                    spelled_last.append(message)
                    if step not in chunk_steps:
                        lasts.append(message)
                elif message.group(line_ends.BULK_FIRST.step) not in chunk_steps:
                    firsts.append(message)
                elif message.group(line_ends.BULK_FIRST.source) is not None:
                    counted.append(message)
        named = self._latest_sources(text, spelled_last, counted)
        promoted: list[int] = []
        if lasts:
            tails = [line_ends.message_tail(text, m.end(), m.endpos) for m in lasts]
            sources = tuple(named.pop(m.pos, (None,))[0] for m in lasts)
            batch = line_ends.last_batch(
                list(zip(lasts, tails, strict=True)), None, None, line_ends.BULK_LAST, sources
            )
            if batch is None:
                promoted += _indices_of(matched, at, lasts)
            else:
                self.run_usage.append(batch)
        # A counted message naming the lane's model goes as a message of no usage (the
        # fold keeps its source and counts the chunk).
        for source, message in named.values():
            if message.start(line_ends.LAST_STEP) != -1:
                batch = line_ends.last_batch(
                    [(message, b"null")], None, source, line_ends.BULK_LAST
                )
            else:
                batch = line_ends.first_batch([message], None, line_ends.BULK_FIRST)
            if batch is not None:
                self.run_usage.append(batch)
        if firsts:
            batch = line_ends.first_batch(firsts, None, line_ends.BULK_FIRST)
            if batch is None:
                promoted += _indices_of(matched, at, firsts)
            else:
                self.run_usage.append(batch)
        promoted.sort()
        return promoted

    @staticmethod
    def _latest_sources(
        text: bytes, spelled_last: list[re.Match[bytes]], first: list[re.Match[bytes]]
    ) -> dict[int, tuple[Any, re.Match[bytes]]]:
        """The sources naming a model of the unit's latest messages (by seq) that name
        one, by where their line starts: the fold keeps only the latest. ``first``:
        messages with usage first and a ``source`` (its group). Few calls: the
        messages' tails are looked at in C for a ``"source"`` first."""
        find = text.rfind
        window = line_ends.TAIL_BYTES + line_ends.SOURCE_WINDOW
        maybe = [
            m
            for m, hit in zip(
                spelled_last,
                map(
                    find,
                    repeat(b'"source":'),
                    map(
                        max,
                        map(_END, spelled_last),
                        map(sub, map(_ENDPOS, spelled_last), repeat(window)),
                    ),
                    map(_ENDPOS, spelled_last),
                ),
                strict=True,
            )
            if hit != -1
        ]
        maybe += first
        if not maybe:
            return {}
        try:
            seqs = orjson.loads(b"[" + b",".join(map(_BULK_SEQ, maybe)) + b"]")
        except orjson.JSONDecodeError:
            return {}
        named: dict[int, tuple[Any, re.Match[bytes]]] = {}
        at_seq = None
        for seq, message in sorted(zip(seqs, maybe, strict=True), key=_FIRST, reverse=True):
            if at_seq is not None and seq != at_seq:
                break  # the latest named are found (ties on one seq: all of them)
            if message.start(line_ends.LAST_STEP) != -1:
                source = line_ends.tail_source(message)
            else:
                try:
                    source = orjson.loads(message.group(line_ends.BULK_FIRST.source))
                except orjson.JSONDecodeError:
                    source = None
            if type(source) is dict and ("model" in source or "provider" in source):
                named[message.pos] = (source, message)
                at_seq = seq
        return named

    def _promote(
        self,
        text: bytes,
        matched: list[re.Match[bytes]],
        promoted: list[int],
        first_event: int,
    ) -> tuple[int, int]:
        """Read the lines ``matched[k]`` for ``k`` in ``promoted`` (in order) alone, as
        the loop reads a line it did not match, at their places among this unit's
        events (the events keep the order and indices of :meth:`feed`). Returns the
        next event index not counting the matched lines left, and the bad lines."""
        skip = self.skip
        match_ends = skip.ends_prefix.match if skip is not None and skip.ends_prefix else None
        loop_events = self.events[first_event:]
        base = self.next_index
        # Matched lines before each of the loop's events (its index is base + j + that).
        before = [e.position - base - j for j, e in enumerate(loop_events)]
        out: list[LogEvent] = []
        bad = 0
        for k in promoted:
            start, stop = matched[k].pos, matched[k].endpos
            lines_before = k  # matched lines before it
            # Its index: the matched and the loop's lines before it, less the bad ones.
            position = base + lines_before + bisect.bisect_right(before, lines_before) - bad
            event = None
            if match_ends is not None:
                ends = match_ends(text, start, stop)
                if ends is not None:
                    event = _probed(text, ends, stop, position)
            if event is None:
                event = parse_event_line(text[start:stop], position)
            if event is not None:
                out.append(event)
                continue
            bad += 1  # no index: the later loop events' move down by one
            loop_events = [
                e._replace(position=e.position - 1) if before[j] > lines_before else e
                for j, e in enumerate(loop_events)
            ]
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
