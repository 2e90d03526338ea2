"""The C allocator's policy in the server's own process (``serve``): large blocks are
mapped apart and given back when freed.

glibc maps a block of at least its mmap threshold (128 KB to start) apart from the
heap and unmaps it when it is freed, but each time such a block is freed it raises the
threshold to that block's size. A server that answers a full ``/api/timeline`` (a few
megabytes after an hour, 46 MB after a day) then takes each next body from the heap,
where freed bodies leave holes a larger one does not fit, and the RSS climbs with the
history, not with what is alive: in process, 200 MB more after 900 appends with two
clients asking for the full body, the same objects alive (benchmarks/bench_mem_growth.py).
Setting the threshold once fixes it where it starts. Only the process we own is tuned;
elsewhere (another C library, a host that mounts the plugin) nothing changes.
"""

from __future__ import annotations

import ctypes
import sys

#: glibc's ``mallopt`` parameter for the size from which a block is mapped apart
#: (``M_MMAP_THRESHOLD`` in malloc.h).
_M_MMAP_THRESHOLD = -3
#: Blocks of this size and up are mapped apart and unmapped when freed (glibc's own
#: starting value, held there instead of rising with each large block freed).
MMAP_THRESHOLD = 128 * 1024


def map_large_blocks() -> bool:
    """Hold glibc's mmap threshold at :data:`MMAP_THRESHOLD`. Returns whether it was
    set (``False``: not Linux, no ``mallopt``, or the C library refused)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
