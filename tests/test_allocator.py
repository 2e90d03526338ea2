"""The allocator's policy in the server's process: a large block freed does not raise
the size from which blocks are mapped apart, so the next large body is mapped (and
given back when freed) instead of taken from the heap."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

#: In a fresh process (the policy is process-wide): free a 4 MB block, then make a
#: 1 MB one, and say how many bytes are in blocks mapped apart (glibc's mallinfo2).
_PROBE = textwrap.dedent(
    """
    import ctypes, sys
    from dsh_task_gantt.allocator import map_large_blocks

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    if sys.argv[1] == "set":
        assert map_large_blocks()
    big = bytearray(4 << 20)
    del big
    before = libc.mallinfo2().hblkhd
    body = bytearray(1 << 20)
    print(libc.mallinfo2().hblkhd - before)
    """
)


def _mapped_after_a_large_free(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


def _glibc_with_mallinfo2() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    return hasattr(ctypes.CDLL(None), "mallinfo2")


@pytest.mark.skipif(not _glibc_with_mallinfo2(), reason="needs glibc 2.33+ (mallinfo2)")
def test_a_large_body_after_a_larger_one_freed_is_mapped_apart_only_with_the_policy() -> None:
    assert _mapped_after_a_large_free("default") < 1 << 20  # from the heap: it stays
    assert _mapped_after_a_large_free("set") >= 1 << 20  # mapped: unmapped when freed


def test_serve_sets_the_policy_before_its_server_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``run_server`` holds the threshold (with the collector's pace) before uvicorn
    starts; a server that did not start returns 1, as always."""
    from dsh_task_gantt import serve

    calls: list[str] = []

    class NoServer:
        started, stopped_by = False, None

        def __init__(self, config: object) -> None:
            calls.append("server")

        def run(self) -> None:
            calls.append("run")

        def stop(self, signum: int, frame: object) -> None:  # a stop signal's handler
            pass

    stop = threading.Event()

    def give_back() -> threading.Event:
        calls.append("give back")
        return stop

    monkeypatch.setattr(serve, "map_large_blocks", lambda: calls.append("policy") or True)
    monkeypatch.setattr(serve, "give_back_now_and_then", give_back)
    monkeypatch.setattr(serve, "pace_for_serving", lambda: calls.append("pace") or (700, 10, 10))
    monkeypatch.setattr(serve, "_Server", NoServer)
    code = serve.run_server(
        sessions_root=tmp_path,
        host="127.0.0.1",
        port=0,
        demo=False,
        token=None,
        warm_up=False,
        use_cache=False,
    )
    assert code == 1
    assert calls == ["pace", "policy", "give back", "server", "run"]
    assert stop.is_set()  # the giving back stops with the server


#: In a fresh process: 60 MB of 1,000-byte blocks (malloc's, not Python's small-object
#: arenas), every tenth kept so the heap cannot shrink from its top; the RSS after
#: freeing the rest, then after giving the free pages back (in MB).
_FRAGMENTED = textwrap.dedent(
    """
    import sys
    from dsh_task_gantt.allocator import give_back_free_pages, map_large_blocks

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 1e6

    map_large_blocks()
    blocks = [bytes(1000) for _ in range(60_000)]
    kept = blocks[::10]
    del blocks
    freed = rss_mb()
    assert give_back_free_pages()
    print(freed, rss_mb())
    """
)


@pytest.mark.skipif(not _glibc_with_mallinfo2(), reason="malloc_trim is glibc's")
def test_giving_back_returns_the_free_pages_a_fragmented_heap_kept() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _FRAGMENTED], capture_output=True, text=True, check=True
    )
    freed, given_back = map(float, out.stdout.split())
    assert freed - given_back > 20  # of the ~54 MB freed inside the heap (32 here)


def test_the_giving_back_thread_stops_when_asked() -> None:
    from dsh_task_gantt.allocator import give_back_now_and_then

    before = {t.name for t in threading.enumerate()}
    stop = give_back_now_and_then(every_s=0.01)
    if stop is None:
        pytest.skip("no malloc_trim in this C library")
    stop.set()
    for thread in threading.enumerate():
        if thread.name == "dsh-task-gantt give back" and thread.name not in before:
            thread.join(timeout=5)
            assert not thread.is_alive()
