"""The server's memory accounts, written from inside ``dsh-task-gantt serve`` for
``bench_soak.py --accounts`` (benchmark only: put on the server's ``PYTHONPATH`` by the
bench, never by the product).

Every ``DSH_GANTT_ACCOUNTS_EVERY`` seconds one JSON line to ``DSH_GANTT_ACCOUNTS``: the
RSS; pymalloc's arenas and the bytes in its allocated and free blocks (objects up to
512 B); the C heap's bytes in use, free and mapped apart (glibc's ``mallinfo2``: larger
blocks, and what C libraries allocate themselves); and the objects the collector
tracks, counted by type (the 60 most common, and every type of the plugin's own), and
the tracked tuples and dicts by shape (:func:`_shape`).
Which of these grows tells where an RSS slope comes from: live small objects, live
large blocks, or free memory the allocators keep. Counting every
object takes the GIL for a few hundred milliseconds on a day's history, so a line costs
a slow poll or two; the accounts are for finding a slope, not for timing one.

With ``DSH_GANTT_PROFILE`` (``bench_soak.py --profile-from S --profile-out PATH``) it
also profiles the server's event loop from ``S`` seconds after start to its exit (say,
the end of a compressed day and the lone probes after it) and writes cProfile's stats.
"""

from __future__ import annotations

import collections
import faulthandler
import gc
import json
import os
import sys
import threading
import time

# benchmarks/ last on the path: its process_memory is import-light, and nothing there
# may shadow what the server imports.
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from process_memory import c_heap, pymalloc, rss_kib

_OUT = os.environ.get("DSH_GANTT_ACCOUNTS")


def _shape(obj: object) -> str | None:
    """A tuple's length and first items' types, a dict's first keys: which of the many
    tuples and dicts grew (their holders are told apart by shape).

    This runs in its own thread while the event loop runs, and ``gc.get_objects()``
    also lists a tuple still being filled (``tuple(iterable)`` allocates it, tracked,
    with empty slots, then runs the iterator's Python code): slicing or iterating it
    reads an empty slot, and the server crashed (SIGSEGV) in a compressed day's
    saturated minutes. Its items are read with ``gc.get_referents``, which skips empty
    slots (and visits a tuple's last first); a dict resized meanwhile is "changing"."""
    if type(obj) is tuple:
        size = str(len(obj)) if len(obj) <= 8 else "9+"
        firsts = gc.get_referents(obj)[:-4:-1]  # visited last item first
        return f"tuple{size}(" + ",".join(type(x).__name__ for x in firsts) + ")"
    if type(obj) is dict:
        try:
            keys = [k if type(k) is str and len(k) <= 16 else f"<{type(k).__name__}>" for k in obj]
        except RuntimeError:  # changed size while read
            return "dict{changing}"
        return "dict{" + ",".join(sorted(set(keys))[:5]) + "}" if keys else "dict{}"
    return None


def _line(started: float) -> dict[str, object]:
    objects = gc.get_objects()
    by_type = collections.Counter(map(type, objects))
    types = collections.Counter({t.__qualname__: n for t, n in by_type.most_common(60)})
    for t, n in by_type.items():  # every type of the plugin's own, however few
        if t.__module__.startswith("dsh_task_gantt"):
            types[t.__qualname__] += 0 if t.__qualname__ in types else n
    shapes = collections.Counter(filter(None, map(_shape, objects)))
    del objects
    return {
        "t_s": round(time.monotonic() - started, 1),
        "rss": rss_kib() * 1024,
        **pymalloc(),
        **c_heap(),
        "tracked": sum(by_type.values()),
        "types": dict(types.most_common()),
        "shapes": dict(shapes.most_common(80)),
    }


def _write_every(path: str, every: float) -> None:
    started = time.monotonic()
    while True:
        time.sleep(every)
        line = json.dumps(_line(started))
        with open(path, "a") as out:
            out.write(line + "\n")


if (_OUT or os.environ.get("DSH_GANTT_PROFILE")) and "serve" in sys.argv:
    # A crash of the server under the bench prints every thread's stack (to its stderr).
    faulthandler.enable()

if _OUT and "serve" in sys.argv:
    every_s = float(os.environ.get("DSH_GANTT_ACCOUNTS_EVERY", "60"))
    threading.Thread(
        target=_write_every, args=(_OUT, every_s), name="bench accounts", daemon=True
    ).start()


# -- a profile of the server's event loop (``bench_soak.py --profile-from S``) ----------

_PROFILE = os.environ.get("DSH_GANTT_PROFILE")


def _profile_from(path: str, from_s: float | None) -> None:
    """cProfile the main thread (the event loop: every request's work) from ``from_s``
    seconds after start (``None``: when the bench sends SIGUSR2, say as its lone probes
    begin) until the process exits, then write the stats to ``path``, and the garbage
    collector's passes while profiling (count, total and longest pause per generation,
    and the seconds profiled: a run with no pass says so, not an empty file) to ``path``
    + ``.gc.json``. A profiler is enabled for the thread it is enabled in, so
    a signal (handled in the main thread) switches it on."""
    import atexit
    import cProfile
    import signal

    profile = cProfile.Profile()
    passes: dict[int, list[float]] = {}
    began: list[float] = []
    switched_on: list[float] = []

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[:] = [time.perf_counter()]
        elif began:
            pause = time.perf_counter() - began[0]
            gen = passes.setdefault(info["generation"], [0, 0.0, 0.0])
            gen[0] += 1
            gen[1] += pause
            gen[2] = max(gen[2], pause)

    def switch_on(_signum: int, _frame: object) -> None:
        if timed not in gc.callbacks:  # a second signal counts no pass twice
            gc.callbacks.append(timed)
            switched_on.append(time.perf_counter())
        profile.enable()

    signal.signal(signal.SIGUSR2, switch_on)

    def write() -> None:
        profile.disable()
        profile.dump_stats(path)
        with open(path + ".gc.json", "w") as out:
            profiled = time.perf_counter() - switched_on[0] if switched_on else 0.0
            generations = {
                str(g): {"passes": n, "total_ms": round(t * 1e3), "max_ms": round(m * 1e3)}
                for g, (n, t, m) in sorted(passes.items())
            }
            json.dump({"profiled_s": round(profiled, 3), "generations": generations}, out)

    atexit.register(write)
    if from_s is None:
        return

    def wake() -> None:
        time.sleep(from_s)
        os.kill(os.getpid(), signal.SIGUSR2)

    threading.Thread(target=wake, name="bench profile", daemon=True).start()


if _PROFILE and "serve" in sys.argv:
    _from = os.environ.get("DSH_GANTT_PROFILE_FROM", "0")
    _profile_from(_PROFILE, None if _from == "probes" else float(_from))
