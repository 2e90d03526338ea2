"""One cache entry's bytes: a magic line, a JSON header line, then a pickle.

The header says which format and which log the entry is for, and carries a digest
of the pickle, so a truncated or corrupted file is refused before anything is
unpickled. The pickle is loaded by an unpickler that builds only this package's
record classes and plain containers: a tampered file can make nothing else, so it
cannot run code. Whatever the bytes, :func:`decode` returns ``None`` rather than
raising.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import io
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from .. import __version__

#: Bumped whenever an entry's layout changes; part of every entry's format key.
FORMAT = 4  # 3: a usage record packs its numbers; 4: a long message body is held packed
MAGIC = b"dsh-task-gantt lane cache\n"
#: A header line is a few hundred bytes; anything longer is not ours.
_MAX_META_BYTES = 64 * 1024

#: The classes an entry may contain, by module: the fold's records, the header, the
#: reader's resume state and the service's lane. Nothing else is ever built.
_ALLOWED: Mapping[str, frozenset[str]] = {
    "dsh_task_gantt.fold.records": frozenset(
        {
            "TurnMark",
            "UsageRec",
            "PromptRec",
            "RelayRec",
            "SpawnRec",
            "DescriptorRec",
            "TaskCallRec",
            "MemberRec",
            "CatalogRec",
            "TaskRec",
            "QueuedRec",
            "DeliveredRec",
            "LaneFold",
        }
    ),
    # A fold's record maps (plain maps to the pickle: see ``SeqMap.__reduce__``).
    "dsh_task_gantt.fold.appends": frozenset({"SeqMap"}),
    "dsh_task_gantt.events": frozenset({"SessionHeader"}),
    "dsh_task_gantt.logs.reader.log_reader": frozenset({"ReaderState", "Checkpoint"}),
    "dsh_task_gantt.timeline.inputs": frozenset({"LaneSource"}),
    "dsh_task_gantt.service": frozenset({"_LaneCache"}),
}


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if name in _ALLOWED.get(module, ()):
            return getattr(importlib.import_module(module), name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache entry")


def _digest(payload: bytes | memoryview) -> str:
    return hashlib.blake2b(payload, digest_size=16).hexdigest()


def encode(meta: Mapping[str, str], value: object) -> bytes:
    """The bytes of an entry: ``meta`` (strings only) and ``value`` pickled."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    head = orjson.dumps({**meta, "digest": _digest(payload), "bytes": len(payload)})
    return MAGIC + head + b"\n" + payload


def read_meta(head: bytes) -> dict[str, Any] | None:
    """The header of an entry from its first bytes, or ``None`` when it is not one."""
    if not head.startswith(MAGIC):
        return None
    end = head.find(b"\n", len(MAGIC), len(MAGIC) + _MAX_META_BYTES)
    if end < 0:
        return None
    try:
        meta = orjson.loads(head[len(MAGIC) : end])
    except orjson.JSONDecodeError:
        return None
    return meta if isinstance(meta, dict) else None


def decode(data: bytes, expect: Mapping[str, str]) -> tuple[dict[str, Any], object] | None:
    """``(meta, value)`` when ``data`` is a whole entry whose header has every
    ``expect`` item, else ``None`` (truncated, corrupt, foreign, another format)."""
    meta = read_meta(data)
    if meta is None or any(meta.get(k) != v for k, v in expect.items()):
        return None
    start = data.find(b"\n", len(MAGIC)) + 1
    payload = memoryview(data)[start:]
    if meta.get("bytes") != len(payload) or meta.get("digest") != _digest(payload):
        return None
    try:
        return meta, _RestrictedUnpickler(io.BytesIO(payload)).load()
    except Exception:  # UnpicklingError, EOFError, TypeError from a forged state, …
        return None


#: The code an entry's contents depend on: the reader, the fold, and the records and
#: lane the service keeps. A change to any of them (even without a new version, in a
#: source checkout) makes older entries foreign.
_SOURCES = ("fold", "logs", "events.py", "service.py", "timeline/inputs.py")


@functools.cache
def _code_digest() -> str:
    package = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=16)
    for name in _SOURCES:
        path = package / name
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            h.update(file.relative_to(package).as_posix().encode() + b"\0")
            with contextlib.suppress(OSError):
                h.update(file.read_bytes())
    return h.hexdigest()


def format_key(*parts: str) -> str:
    """What an entry's validity depends on besides its log: this package's version,
    :data:`FORMAT`, its code, and the caller's ``parts`` (e.g. which lines a reader
    leaves unparsed)."""
    h = hashlib.blake2b(digest_size=16)
    for part in (__version__, str(FORMAT), _code_digest(), *parts):
        h.update(part.encode() + b"\0")
    return h.hexdigest()
