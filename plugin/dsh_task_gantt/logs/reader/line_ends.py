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
from typing import Any, Final

import orjson

#: The probe's value in a reader's ``skip_types`` (see ``skip_rules``).
LINE_ENDS: Final = "line-ends"
#: Lines up to this long are parsed whole.
SHORT_LINE = 4096
#: How far from the line's end ``usage`` is looked for (a usage object is ~150 bytes).
TAIL_BYTES = 1024
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
