"""The C allocator's policy in the server's own process (``serve``): large blocks are
mapped apart and given back when freed, and the heap's free pages are given back now
and then.

glibc maps a block of at least its mmap threshold (128 KB to start) apart from the
heap and unmaps it when it is freed, but each time such a block is freed it raises the
threshold to that block's size. A server that answers a full ``/api/timeline`` (a few
megabytes after an hour, 46 MB after a day) then takes each next body from the heap,
where freed bodies leave holes a larger one does not fit, and the RSS climbs with the
history, not with what is alive: in process, 200 MB more after 900 appends with two
clients asking for the full body, the same objects alive (benchmarks/bench_mem_growth.py).
Setting the threshold once fixes it where it starts.

The smaller blocks a poll frees (a few hundred bytes to a hundred kilobytes) leave free
pages inside the heap that glibc keeps until the heap's top is free; ``malloc_trim``
gives them back. In process, once a minute's worth of appends: the RSS 166 against 258
MB after 300 appends of the soak's load, the same growth after (the data).

Only the process we own is tuned; elsewhere (another C library, a host that mounts the
plugin) nothing changes.
"""

from __future__ import annotations

import ctypes
import sys
import threading

#: glibc's ``mallopt`` parameter for the size from which a block is mapped apart
#: (``M_MMAP_THRESHOLD`` in malloc.h).
_M_MMAP_THRESHOLD = -3
#: Blocks of this size and up are mapped apart and unmapped when freed (glibc's own
#: starting value, held there instead of rising with each large block freed).
MMAP_THRESHOLD = 128 * 1024
#: How often the heap's free pages are given back (``malloc_trim`` walks the heap's free
#: blocks: a few milliseconds, off the event loop's thread, its arena locked meanwhile).
GIVE_BACK_EVERY_S = 60.0


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def map_large_blocks() -> bool:
    """Hold glibc's mmap threshold at :data:`MMAP_THRESHOLD`. Returns whether it was
    set (``False``: not Linux, no ``mallopt``, or the C library refused)."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def give_back_free_pages() -> bool:
    """Give the heap's free pages back to the system now (glibc's ``malloc_trim(0)``).
    Returns whether the C library has it."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is None:
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)  # ctypes lets go of the GIL for the call
    return True


def give_back_now_and_then(every_s: float = GIVE_BACK_EVERY_S) -> threading.Event | None:
    """Give the heap's free pages back every ``every_s`` on a daemon thread, until the
    returned event is set (``None``: the C library has no ``malloc_trim``)."""
    if not give_back_free_pages():
        return None
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            give_back_free_pages()

    threading.Thread(target=loop, name="dsh-task-gantt give back", daemon=True).start()
    return stop
