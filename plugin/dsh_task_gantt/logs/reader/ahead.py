"""Run a job's work in a second thread, one job ahead of the consumer.

zstd releases the GIL while it decompresses, so the reader decompresses the next
batch of frames while it decodes the lines of this one.
"""

from __future__ import annotations

import queue
import threading
from _thread import LockType as _Lock
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

_J = TypeVar("_J")
_R = TypeVar("_R")


def run_ahead(jobs: Iterator[_J], work: Callable[[_J], _R]) -> Iterator[tuple[_J, _R]]:
    """``(job, work(job))`` in order, ``work`` running in a second thread one job ahead.

    zstd releases the GIL while it decompresses, so the next batch decompresses while
    this thread decodes lines. The hand-over matters more than the thread: a thread
    that merely waits for the GIL gets it only after the interpreter's switch interval
    (5 ms), which once made decompressing "ahead" slower than not. So each job is
    handed over with the GIL, until the worker is inside zstd; the result is taken
    when this thread has nothing else to do. Errors in ``work`` are raised here;
    a consumer that stops early stops the worker too (after its current job).
    """
    # Plain locks, not ``Semaphore`` and ``Event`` (each a ``Condition`` in Python, a few
    # µs per call, four calls per job): a lock taken by one thread and released by the
    # other signals once. ``entered`` is held but while the worker takes a job; a job's
    # ``done`` is held until its work is in its box.
    inbox: queue.SimpleQueue[tuple[_J, list[tuple[bool, Any]], _Lock] | None]
    inbox = queue.SimpleQueue()
    entered = threading.Lock()
    entered.acquire()

    def serve() -> None:
        while (item := inbox.get()) is not None:
            job, box, done = item
            entered.release()
            try:
                box.append((True, work(job)))
            except BaseException as exc:  # handed to the consumer, which raises it
                box.append((False, exc))
            done.release()

    def submit(job: _J) -> tuple[_J, list[tuple[bool, Any]], _Lock]:
        box: list[tuple[bool, Any]] = []
        done = threading.Lock()
        done.acquire()
        inbox.put((job, box, done))
        entered.acquire()  # the GIL goes to the worker now, not in 5 ms
        return job, box, done

    thread = threading.Thread(target=serve, name="dsh-gantt-zstd", daemon=True)
    thread.start()
    end = object()
    try:
        first = next(jobs, end)
        pending = submit(cast("_J", first)) if first is not end else None
        upcoming = next(jobs, end) if pending is not None else end
        while pending is not None:
            job, box, done = pending
            done.acquire()
            pending = submit(cast("_J", upcoming)) if upcoming is not end else None
            ok, value = box[0]
            if not ok:
                raise value
            yield job, value
            if pending is not None:
                upcoming = next(jobs, end)  # walked while the worker decompresses
    finally:
        inbox.put(None)
        thread.join()
