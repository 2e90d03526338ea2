"""Which lines the decoder may leave unparsed: ``skip_types`` compiled to one regex.

A skipped line is matched on the writer's own prefix (``{"type":"…","seq":N,
"time":T,``) and not validated beyond it; a type given with markers is parsed in
full when its line contains one of them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from dsh_task_gantt.logs.reader.line_ends import LINE_ENDS

#: Which lines may skip parsing: a type name, or a type name with markers — the
#: line is then parsed in full only when it contains one of the marker bytes (for
#: example ``{"tool/call": (b"team_task_update",)}``: only those calls need their data).
#: The value ``LINE_ENDS`` (``line_ends``): the line is not parsed, but the small fields
#: at its two ends are (``usage`` of an ``assistant/message``).
SkipTypes = Iterable[str] | Mapping[str, bytes | tuple[bytes, ...] | str | None]


@dataclass(frozen=True, slots=True)
class SkipRule:
    prefix: re.Pattern[bytes]
    markers: tuple[tuple[bytes, tuple[bytes, ...]], ...]
    #: ``prefix`` for runs mode, for the types without markers: numbers have at most
    #: 15 digits, so every match is a safe integer (a 16-digit one is parsed in full
    #: instead: the fold reads the same from it). Groups: the run fields (see
    #: :func:`_run_prefix`), the type.
    run_prefix: re.Pattern[bytes]
    #: Types read by ``line_ends.probe`` (as bytes); in runs mode their lines match
    #: ``ends_prefix`` (not ``run_prefix``) and come back as events.
    ends: frozenset[bytes] = frozenset()
    ends_prefix: re.Pattern[bytes] | None = None
    #: ``run_prefix`` for the types with markers (same groups): a match counts only on a line
    #: without its markers, looked for with ``bytes.find`` (a lookahead in the regex
    #: scanning each line for them cost more than the rest of a member's read).
    marked_prefix: re.Pattern[bytes] | None = None
    #: Per marker type (as bytes): its markers as ``(needle, markers)`` pairs, each
    #: needle inside each of its markers, fewer needles than markers (one ``find``
    #: each on most lines; the markers themselves only where a needle is found).
    needles: tuple[tuple[bytes, tuple[tuple[bytes, tuple[bytes, ...]], ...]], ...] = ()
    #: ``run_prefix`` and ``marked_prefix`` in one pattern (one call per line, where a
    #: line of neither took two): groups 1 and 2 as ``run_prefix``'s, or (a type with
    #: markers) 3 and 4 as ``marked_prefix``'s 1 and 2; ``lastindex`` says which.
    runs_prefix: re.Pattern[bytes] | None = None
    #: The types without markers (as bytes): ``run_prefix``'s.
    plain: frozenset[bytes] = frozenset()


def skip_rule(skip_types: SkipTypes) -> SkipRule | None:
    if isinstance(skip_types, Mapping):
        items = tuple(sorted((str(k), _markers(v)) for k, v in skip_types.items()))
    else:
        items = tuple(sorted((str(k), None) for k in skip_types))
    return _cached_skip_rule(items)


def _markers(
    value: bytes | tuple[bytes, ...] | str | None,
) -> tuple[bytes, ...] | str | None:
    if value == LINE_ENDS:
        return LINE_ENDS
    if isinstance(value, str):
        return None
    if isinstance(value, bytes):
        value = (value,)
    if not value:
        return None
    return tuple(m for m in value if m) or None


def has_marker(
    find: Callable[[bytes, int, int], int], markers: tuple[bytes, ...], start: int, end: int
) -> bool:
    return any(find(marker, start, end) != -1 for marker in markers)


#: The shortest shared prefix that makes two markers' cores one needle.
_NEEDLE_MIN = 6


def _needles(markers: tuple[bytes, ...]) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    """Markers grouped under needles: a marker's core (without the quotes and
    backslashes around it), or the long prefix several cores share."""
    groups: list[tuple[bytes, tuple[bytes, ...]]] = []
    for marker in sorted(markers, key=lambda m: m.strip(b'\\"') or m):
        core = marker.strip(b'\\"') or marker
        if groups:
            shared = _shared_prefix(groups[-1][0], core)
            if len(shared) >= _NEEDLE_MIN:
                groups[-1] = (shared, (*groups[-1][1], marker))
                continue
        groups.append((core, (marker,)))
    return tuple(groups)


def _shared_prefix(a: bytes, b: bytes) -> bytes:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _writer_prefix(names: list[str], digits: int) -> re.Pattern[bytes]:
    """``{"type":"<one of names>","seq":N,"time":T`` then ``,`` or ``}``; groups: the
    three values. It cannot match across a line end."""
    alternatives = b"|".join(re.escape(t.encode()) for t in names) or b"(?!)"
    return re.compile(
        rb'\{"type":"('
        + alternatives
        # JSON's integers: no leading zero (orjson, which decodes the digits, refuses
        # one), said by a lookahead (cheaper than a branch ``0|[1-9]…``)
        + rb')","seq":((?!0\d)\d{1,%d}),"time":((?!0\d)\d{1,%d})[,}]' % (digits, digits)
    )


def _run_prefix(names: list[str]) -> re.Pattern[bytes]:
    """``_writer_prefix(names, 15)`` with one group for what a run keeps of the line,
    ``"<type>","seq":N,"time":T`` (a second group: the type). A unit's groups joined
    become one JSON array once their two keys are dropped: one group per line, where a
    group each for type, seq and time cost as much again as matching the line."""
    return re.compile(_TYPE_KEY + _run_fields(names) + _FIELD_END)


def _runs_prefix(plain: list[str], marked: list[str]) -> re.Pattern[bytes]:
    """``_run_prefix(plain)`` or ``_run_prefix(marked)``, with the second one's groups
    numbered 3 and 4 (its match's ``lastindex`` is 3, a plain one's 1)."""
    branches = [_run_fields(plain), *([_run_fields(marked)] if marked else [])]
    return re.compile(_TYPE_KEY + b"(?:" + b"|".join(branches) + b")" + _FIELD_END)


_TYPE_KEY = rb'\{"type":'
_FIELD_END = rb"[,}]"


def _run_fields(names: list[str]) -> bytes:
    alternatives = b"|".join(re.escape(t.encode()) for t in names) or b"(?!)"
    return rb'("(' + alternatives + rb')","seq":(?!0\d)\d{1,15},"time":(?!0\d)\d{1,15})'


#: A runs-mode branch's one group: the run fields after the type, ``,"seq":N,"time":T``.
_FIELDS = rb'(,"seq":(?!0\d)\d{1,15},"time":(?!0\d)\d{1,15})'
#: The bytes of the run fields' two keys: deleted (``bytes.translate``), a unit's joined
#: fields are the inside of a JSON array of integers (``,N,T,N,T…``).
FIELD_KEYS = b'"seqtim:'


@dataclass(frozen=True, slots=True)
class RunsPattern:
    """``runs_prefix`` with each run mark's type in a branch of its own (runs mode).

    Each branch has one group of the run fields (:data:`_FIELDS`: the line's seq and
    time, no type); a branch of types with markers has its type's group just before
    it. A match's ``lastindex`` is its branch's fields group: at most ``plain_last`` for
    a type without markers, ``mark_codes[i]`` for ``marks[i]`` (0: not a type that
    runs keep), above ``plain_last`` a type with markers (its type is group
    ``lastindex - 1``). So a unit's fields are digits once :data:`FIELD_KEYS` are
    deleted, and the marks are told by ``lastindex`` alone, no type decoded per line.
    """

    pattern: re.Pattern[bytes]
    plain_last: int
    mark_codes: tuple[int, ...]
    #: ``rule.needles`` by type (looked up once per line of a type with markers).
    needles: Mapping[bytes, tuple[tuple[bytes, tuple[bytes, ...]], ...]]


@functools.cache
def runs_pattern(rule: SkipRule, marks: tuple[bytes, ...]) -> RunsPattern:
    """The runs-mode pattern of ``rule`` for a reader whose runs carry ``marks``."""
    plain = sorted(rule.plain)
    marked = sorted(t for t, _ in rule.needles)
    mark_names = [m for m in marks if m in plain or m in marked]
    plain_marks = [m for m in mark_names if m in plain]
    marked_marks = [m for m in mark_names if m in marked]
    others = [t for t in plain if t not in plain_marks]
    marked_others = [t for t in marked if t not in marked_marks]
    branches = [_alternatives(others) + b'"' + _FIELDS]
    branches += [re.escape(t) + b'"' + _FIELDS for t in plain_marks]
    codes = {t: 2 + n for n, t in enumerate(plain_marks)}
    plain_last = 1 + len(plain_marks)
    for n, t in enumerate(marked_marks):
        branches.append(b"(" + re.escape(t) + b')"' + _FIELDS)
        codes[t] = plain_last + 2 + 2 * n
    if marked_others:
        branches.append(b"(" + _alternatives(marked_others) + b')"' + _FIELDS)
    pattern = re.compile(_TYPE_KEY + b'"(?:' + b"|".join(branches) + b")" + _FIELD_END)
    if pattern.groups > 255:  # ``lastindex`` values are kept as bytes
        raise ValueError("too many run marks")
    mark_codes = tuple(codes.get(m, 0) for m in marks)
    return RunsPattern(pattern, plain_last, mark_codes, dict(rule.needles))


def _alternatives(names: list[bytes]) -> bytes:
    return b"(?:" + (b"|".join(map(re.escape, names)) or b"(?!)") + b")"


@functools.cache
def _cached_skip_rule(
    all_items: tuple[tuple[str, tuple[bytes, ...] | str | None], ...],
) -> SkipRule | None:
    """The writer's own line prefix for exactly these types (others fail at the type)."""
    if not all_items:
        return None
    ends = [t for t, m in all_items if m == LINE_ENDS]
    items = [(t, m) for t, m in all_items if not isinstance(m, str)]
    plain = [t for t, m in items if not m]
    marked = [t for t, m in items if m]
    return SkipRule(
        prefix=_writer_prefix([t for t, _ in items] + ends, 16),
        markers=tuple((t.encode(), m) for t, m in items if m),
        run_prefix=_run_prefix(plain),
        ends=frozenset(t.encode() for t in ends),
        ends_prefix=_writer_prefix(ends, 15) if ends else None,
        marked_prefix=_run_prefix(marked) if marked else None,
        needles=tuple((t.encode(), _needles(m)) for t, m in items if m),
        runs_prefix=_runs_prefix(plain, marked),
        plain=frozenset(t.encode() for t in plain),
    )
