"""Total text helpers for untrusted log payloads (pure, never raise)."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Mapping
from typing import Any

from ..events import as_int

#: A message body is kept up to this many characters (the panel says when it was cut).
MESSAGE_BODY_CAP = 16_384
#: A preview is one line of at most this many characters.
PREVIEW_CAP = 140
#: Short labels (kinds, names, statuses) are cut here so a hostile log cannot bloat state.
LABEL_CAP = 256

_WHITESPACE = re.compile(r"\s+")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: One object per distinct identifier or label: each event is parsed into new strings,
#: and a turn's id, say, is held by its start, its end, each step's usage and the maps
#: keyed by them; after hours those copies were a good part of the growth. Interned
#: strings are freed with their last holder (CPython's interning is not immortal).
_intern = sys.intern


def clean(value: str) -> str:
    """``value`` made safe for JSON encoders: lone surrogates become U+FFFD."""
    if value.isascii():
        return value
    try:  # refused exactly for a surrogate, as UTF-8 is, at a third of its cost
        value.encode("utf-32-le")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", value)
    return value


def text(value: Any, cap: int = LABEL_CAP) -> str | None:
    """A string field, cleaned and capped; ``None`` for anything that is not a string.
    A label (``cap`` is LABEL_CAP) is interned, see :func:`key`."""
    if type(value) is str and value.isascii():  # most: no call to clean
        return _intern(value[:cap]) if cap == LABEL_CAP else value[:cap]
    if not isinstance(value, str):
        return None
    cut = clean(value[:cap])
    return _intern(cut) if cap == LABEL_CAP else cut


def key(value: Any) -> str | None:
    """An identifier: a non-empty string, or a safe integer spelled as a string."""
    if type(value) is str and value.isascii():  # most: ids, no call to clean
        return _intern(value[:LABEL_CAP]) if value else None
    if isinstance(value, str):
        return _intern(clean(value[:LABEL_CAP])) if value else None
    number = as_int(value)
    return None if number is None else _intern(str(number))


def content_text(content: Any) -> str:
    """The text of a message ``content``: a string, or the ``text`` parts of a list."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "text":
            body = part.get("text")
            if isinstance(body, str):
                parts.append(body)
        elif isinstance(part, str):
            parts.append(part)
    return "\n".join(parts)


def capped_body(raw: str) -> tuple[str, int]:
    """``(body cut at MESSAGE_BODY_CAP, original length)``; line breaks are kept."""
    return clean(raw[:MESSAGE_BODY_CAP]), len(raw)


#: The characters of a body a preview is made from (it is cut far shorter anyway).
PREVIEW_SOURCE = 512
#: Previews kept: the relays and prompts a build draws again (the paired messages are
#: carried on from the last build, so a day's messages are not previewed again at each
#: poll): a larger cache only kept a copy of each message's first PREVIEW_SOURCE
#: characters (~0.8 KB an entry: 8,192 of them were ~7 MB, filled over the hours of a
#: busy team's day).
PREVIEWS_KEPT = 1024


def preview(raw: str) -> str:
    """One line, whitespace collapsed, at most PREVIEW_CAP characters (… when cut)."""
    return _preview(raw[:PREVIEW_SOURCE])  # a short body is its own slice: no copy


def label_preview(raw: str) -> str:
    """``preview`` without the cache, for a text made once per record (a turn's label:
    the turn's span is memoised upstream, so the cache only held a copy per turn)."""
    return _one_line(raw[:PREVIEW_SOURCE])


def _one_line(head: str) -> str:
    line = _WHITESPACE.sub(" ", head).strip()
    if len(line) <= PREVIEW_CAP:
        return line
    return line[: PREVIEW_CAP - 1].rstrip() + "…"


_preview = functools.lru_cache(maxsize=PREVIEWS_KEPT)(_one_line)
