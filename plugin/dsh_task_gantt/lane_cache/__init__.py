"""A persistent cache of what reading each log produced, so a restarted server opens
a team it has read before warm and reads only the bytes appended since.

``location`` (where the folder is, and whether it is private enough to use),
``codec`` (one entry's bytes: a checked header and a restricted pickle), ``store``
(entries on disk: atomic, debounced writes off the request path, and a size budget).
What an entry holds and when it is valid is decided by its users: the persistence
(the reader's resume state, checked against the file) and the service (the lane fold).
"""

from __future__ import annotations

from .codec import FORMAT, decode, encode, format_key, read_meta
from .location import CACHE_DIR_ENV, default_cache_dir
from .store import DEFAULT_BUDGET_BYTES, DEFAULT_WRITE_EVERY_S, LaneCacheStore, open_store

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_BUDGET_BYTES",
    "DEFAULT_WRITE_EVERY_S",
    "FORMAT",
    "LaneCacheStore",
    "decode",
    "default_cache_dir",
    "encode",
    "format_key",
    "open_store",
    "read_meta",
]
