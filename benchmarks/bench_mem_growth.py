"""Where the server's memory goes per append: tracemalloc over the soak's load, in process.

A team (``--team`` generated, or ``--resume DIR`` holding ``sessions/`` and
``spec-after.json``, copied to a temp dir first: the writer appends), the embedded host
through starlette's TestClient, and per tick: one ``LiveTeam`` append (in a child
process, as in the soak: the writer's own memory, every message it ever wrote and its
texts, is not the server's), then the four
soak poller kinds (bench_soak.KINDS) polling twice each (the delta and the unchanged
poll) and one conditional ``/api/timeline`` with ``since=``. tracemalloc runs from the
start; snapshots at ``--from`` and ``--to`` ticks are compared by traceback, and every
memo's entry count is printed at both (a memo that gains entries each tick is one that
holds versions no poll asks for again, until its bound). Nothing here asserts.

``--curve N`` traces nothing: it runs the same load to ``--to`` ticks and prints, every
``N`` ticks (after a full collection), the process's RSS, its allocated blocks
(``sys.getallocatedblocks``), the raw log bytes and every memo whose entries changed:
the slope of an hour's appends (1,800 ticks at the real rate) in a few minutes, with
no tracer's bias (a traced run counts an entry that replaced an untraced one as growth).

``--floor`` traces nothing either: at ``--from`` and ``--to`` ticks it counts the
allocated blocks, the heap's bytes in use (``process_memory.heap_in_use``: pymalloc's
and the C heap's, so a dict table or a long string counts by its size) and the RSS
(after a full collection and giving the heap's free pages back, as ``serve`` does once
a minute) with every cache as it is, then empties every memo and lru_cache and polls
once more: what is left is the data's floor (the folds,
the timeline, the current board and wire parts), and the difference the caches' fill.
It prints both per tick, the floor's growth by type (objects the collector tracks, and
the strings, bytes and numbers they hold, each counted once) and, at ``--to``, the
blocks each cache held alone (emptied one after another, largest first).

``--shapes`` traces nothing and empties nothing: at ``--from`` and ``--to`` ticks it
counts what the process holds by shape, with every cache as it is: the objects the
collector tracks by type (a dict by its ``kind`` when it is a span, else by its size
class; a tuple by its length class and its first items' types) and the strings and
bytes by what holds them (a record's field, a span's key): what one more tick of
history costs, item by item, and so what a compact history would have to hold. At the
end, how many containers hold one turn's or message's span, bar and mark (each whole
sequence of a lane kept per view or per memo holds it once more).

Run: ``python benchmarks/bench_mem_growth.py [--team big | --resume /work/tmp/day1h]
[--from 40] [--to 240] [--frames 12] [--top 25] [--curve 300 | --floor | --shapes]``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import multiprocessing as mp
import shutil
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_soak import _INPUT, KINDS, PREFIX, PollerKind, board_params, raw_log_bytes, unescape
from process_memory import heap_in_use, rss_kib
from starlette.testclient import TestClient
from teams import TEAMS, generate_recent_team

from dsh_task_gantt import collector
from dsh_task_gantt import memo as memo_mod
from dsh_task_gantt.allocator import give_back_free_pages, map_large_blocks
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec


def memo_sizes() -> dict[str, int]:
    """Every memo and lru_cache of the process, by where it was made."""
    out: dict[str, int] = {}
    for m in list(memo_mod._ALL):
        name = _memo_name(m)
        out[name] = out.get(name, 0) + len(m)
    for mod in list(sys.modules.values()):
        if not getattr(mod, "__name__", "").startswith("dsh_task_gantt"):
            continue
        for attr, obj in list(vars(mod).items()):
            if isinstance(obj, functools._lru_cache_wrapper) and obj.__module__ == mod.__name__:
                out[f"{mod.__name__}.{attr}()"] = obj.cache_info().currsize
    return out


def _memo_name(m: Any) -> str:
    """The module global or the attribute of a plugin object that holds ``m``."""
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("dsh_task_gantt"):
            for attr, obj in list(vars(mod).items()):
                if obj is m:
                    return f"{mod.__name__}.{attr}"
    for owner in gc.get_referrers(m):
        if isinstance(owner, dict):
            holders = [o for o in gc.get_referrers(owner) if getattr(o, "__dict__", None) is owner]
            if holders:
                for attr, obj in owner.items():
                    if obj is m:
                        return f"{type(holders[0]).__name__}.{attr}"
        # An instance whose attributes live inline (no dict object to refer to it).
        for attr, obj in (vars(owner) if hasattr(owner, "__dict__") else {}).items():
            if obj is m:
                return f"{type(owner).__name__}.{attr}"
        for klass in type(owner).__mro__:
            for attr in getattr(klass, "__slots__", ()):
                if getattr(owner, attr, None) is m:
                    return f"{type(owner).__name__}.{attr}"
    return f"memo@{id(m):x}"


def _write(root: str, spec_path: str, conn: Any) -> None:
    """The writer's child process: a ``LiveTeam`` tick for each time received."""
    live = LiveTeam(Path(root), TeamSpec.load(Path(spec_path), root=root))
    while (now := conn.recv()) is not None:
        conn.send(sum(live.tick(now).appended.values()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--team", default="big", choices=sorted(TEAMS))
    ap.add_argument("--resume", type=Path, help="a dir with sessions/ and spec-after.json")
    ap.add_argument("--from", dest="first", type=int, default=40)
    ap.add_argument("--to", dest="last", type=int, default=240)
    ap.add_argument("--frames", type=int, default=12)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--no-api", action="store_true")
    ap.add_argument(
        "--trace-at",
        type=int,
        default=0,
        help="start tracemalloc at this tick (0: from the start; the cold read traced "
        "costs minutes)",
    )
    mode = ap.add_mutually_exclusive_group()  # none of them: tracemalloc
    mode.add_argument("--curve", type=int, default=0, help="no tracing: RSS every N ticks")
    mode.add_argument("--floor", action="store_true", help="no tracing: data against caches")
    mode.add_argument("--shapes", action="store_true", help="no tracing: growth by shape")
    args = ap.parse_args()

    if args.trace_at == 0 and not args.curve and not args.floor and not args.shapes:
        tracemalloc.start(args.frames)
    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-mem-"))
    root = work / "sessions"
    if args.resume:
        shutil.copytree(args.resume / "sessions", root)
        spec_path = args.resume / "spec-after.json"
    else:
        spec = generate_recent_team(root, TEAMS[args.team], ends_ms=int(time.time() * 1000))
        spec_path = work / "spec.json"
        spec.dump(spec_path)
    spec = TeamSpec.load(spec_path, root=str(root))
    ctx = mp.get_context("spawn")
    to_writer, writer_end = ctx.Pipe()
    # A daemon: a run that fails ends with its traceback, not waiting on its writer.
    writer = ctx.Process(target=_write, args=(str(root), str(spec_path), writer_end), daemon=True)
    writer.start()
    if args.curve or args.floor or args.shapes:
        collector.pace_for_serving()  # as ``serve`` does
        map_large_blocks()
    client = TestClient(
        EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 1)
    )
    at_ms = (spec.start_ms + spec.last_event_time) // 2
    held = [{"version": "", "drawn": "", "token": ""} for _ in KINDS]
    etag = ""
    appended = 0

    def poll(n: int, kind: PollerKind) -> None:
        params = board_params(spec.lead_id, kind, at_ms, held[n])
        r = client.get(PREFIX + "/panel/board", params=params, headers={"HX-Request": "true"})
        if r.status_code in (200, 286):
            held[n].update({k: unescape(v) for k, v in _INPUT.findall(r.text)})
        elif r.status_code != 204:
            raise SystemExit(f"board {r.status_code}: {r.text[:300]}")

    for n, kind in enumerate(KINDS):
        page = {"session": spec.lead_id, **({"list": "1"} if kind.list_open else {})}
        r = client.get(PREFIX + "/panel", params=page)
        held[n].update({k: unescape(v) for k, v in _INPUT.findall(r.text)})
    now = max(int(time.time() * 1000), spec.last_event_time + 2000)
    snaps: dict[int, tracemalloc.Snapshot] = {}
    sizes: dict[int, dict[str, int]] = {}
    raws: dict[int, int] = {}
    t0 = time.monotonic()
    curve: list[tuple[int, float, int]] = []
    last_sizes: dict[str, int] = {}
    floors: dict[int, Floor] = {}
    shapes: dict[int, tuple[int, Shapes]] = {}

    def polls() -> None:
        nonlocal etag
        for n, kind in enumerate(KINDS):
            poll(n, kind)
            poll(n, kind)
        if not args.no_api:
            params = {"session": spec.lead_id, **({"since": etag} if etag else {})}
            headers = {"If-None-Match": etag} if etag else {}
            r = client.get(PREFIX + "/api/timeline", params=params, headers=headers)
            if r.status_code == 200:
                etag = r.headers.get("etag", etag)

    for tick in range(1, args.last + 1):
        if tick == args.trace_at and not args.curve:
            tracemalloc.start(args.frames)
        now += 2000
        to_writer.send(now)
        appended += to_writer.recv()
        polls()
        if args.shapes:
            if tick in (args.first, args.last):
                shapes[tick] = (_settled()[2], shapes_held())
                print(f"tick {tick} ({time.monotonic() - t0:.0f} s): counted", flush=True)
            continue
        if args.floor:
            if tick in (args.first, args.last):
                floors[tick] = measure_floor(polls)
                print(f"tick {tick} ({time.monotonic() - t0:.0f} s): {floors[tick].line()}")
            continue
        if args.curve:
            if tick % args.curve == 0:
                gc.collect()
                sizes_now = memo_sizes()
                curve.append((tick, rss_mb(), sys.getallocatedblocks()))
                changed = {k: v for k, v in sizes_now.items() if last_sizes.get(k) != v}
                last_sizes = sizes_now
                print(
                    f"tick {tick} ({time.monotonic() - t0:.0f} s): RSS {curve[-1][1]:.1f} MB, "
                    f"{curve[-1][2]:,} blocks, raw logs {raw_log_bytes(root) / 1e6:.1f} MB",
                    flush=True,
                )
                print(
                    "    memo entries now: "
                    + ", ".join(f"{k.rsplit('.', 1)[-1]} {v}" for k, v in sorted(changed.items())),
                    flush=True,
                )
            continue
        if tick in (args.first, args.last):
            gc.collect()
            snaps[tick] = tracemalloc.take_snapshot()
            sizes[tick] = memo_sizes()
            raws[tick] = raw_log_bytes(root)
            cur, _peak = tracemalloc.get_traced_memory()
            print(
                f"tick {tick}: traced {cur / 1e6:.1f} MB ({time.monotonic() - t0:.0f} s)",
                flush=True,
            )
        elif tick % 20 == 0 and tracemalloc.is_tracing():
            cur, _peak = tracemalloc.get_traced_memory()
            print(f"tick {tick}: traced {cur / 1e6:.1f} MB", flush=True)
    if args.shapes or args.floor:
        if args.shapes:
            report_shapes(shapes[args.first], shapes[args.last], args.last - args.first, args.top)
            holders_per_item()
        else:
            report_floor(floors[args.first], floors[args.last], args.last - args.first)
        to_writer.send(None)
        writer.join(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
        return
    if args.curve:
        after = [(t, r, b) for t, r, b in curve if t >= args.first]
        if len(after) >= 2:
            (t0_, r0, b0), (t1, r1, b1) = after[0], after[-1]
            print(
                f"\nfrom tick {t0_} to {t1}: RSS {r0:.1f} -> {r1:.1f} MB "
                f"({(r1 - r0) * 1024 / (t1 - t0_):.1f} KB a tick), blocks {b0:,} -> {b1:,} "
                f"({(b1 - b0) / (t1 - t0_):.0f} a tick)"
            )
        to_writer.send(None)
        writer.join(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
        return
    to_writer.send(None)
    writer.join(timeout=30)
    span = args.last - args.first
    a, b = snaps[args.first], snaps[args.last]
    filters = [tracemalloc.Filter(False, tracemalloc.__file__)]
    a, b = a.filter_traces(filters), b.filter_traces(filters)
    total = sum(s.size_diff for s in b.compare_to(a, "filename"))
    print(f"\ngrowth {total / 1e6:.2f} MB over {span} ticks = {total / span / 1024:.1f} KB/tick")
    print("\ntop lines (KB/tick):")
    for stat in b.compare_to(a, "lineno")[: args.top]:
        fr = stat.traceback[0]
        print(
            f"  {stat.size_diff / span / 1024:7.2f}  {stat.count_diff / span:7.1f} obj  "
            f"{_short(fr.filename)}:{fr.lineno}"
        )
    print("\ntop tracebacks (KB/tick):")
    for stat in b.compare_to(a, "traceback")[: args.top]:
        print(f"  {stat.size_diff / span / 1024:7.2f} KB/tick, {stat.count_diff / span:.1f} obj")
        for fr in list(stat.traceback)[-args.frames :]:
            if "dsh_task_gantt" in fr.filename or "markupsafe" in fr.filename:
                print(f"        {_short(fr.filename)}:{fr.lineno}")
    print("\nmemo entries (growing):")
    for name in sorted(sizes[args.last]):
        before, after = sizes[args.first].get(name, 0), sizes[args.last][name]
        if after != before:
            print(f"  {name}: {before} -> {after}")
    raw = raws[args.last] - raws[args.first]
    print(
        f"\nappended {appended} events over {args.last} ticks; raw logs "
        f"{raws[args.first] / 1e6:.1f} -> {raws[args.last] / 1e6:.1f} MB: "
        f"{raw / span / 1024:.1f} KB of raw log a tick"
    )
    shutil.rmtree(work, ignore_errors=True)


def rss_mb() -> float:
    """This process's resident set, from /proc (0 where there is none)."""
    return rss_kib() / 1024


@dataclass(frozen=True)
class Floor:
    """The process at one tick: with every cache as it is, and after emptying them all
    and polling once (the data's floor); the floor's objects by type (count, bytes);
    the blocks each cache held alone (at the last tick only)."""

    blocks: int
    rss_mb: float
    #: Bytes in use (``process_memory.heap_in_use``): what the objects hold, blocks of
    #: any size (a dict table is one block however long), free memory left out.
    heap: int
    floor_blocks: int
    floor_rss_mb: float
    floor_heap: int
    census: dict[str, tuple[int, int]]
    #: Each cache alone: heap bytes, blocks and entries it held, and its name.
    alone: list[tuple[int, int, int, str]]

    def line(self) -> str:
        return (
            f"{self.blocks:,} blocks, heap {self.heap / 1e6:.1f} MB, RSS {self.rss_mb:.1f} MB "
            f"with the caches; {self.floor_blocks:,} blocks, heap {self.floor_heap / 1e6:.1f} MB, "
            f"RSS {self.floor_rss_mb:.1f} MB at the floor"
        )


def _settled() -> tuple[int, float, int]:
    gc.collect()
    give_back_free_pages()
    return sys.getallocatedblocks(), rss_mb(), heap_in_use()


def _lru_caches() -> list[Any]:
    return [
        obj
        for mod in list(sys.modules.values())
        if getattr(mod, "__name__", "").startswith("dsh_task_gantt")
        for obj in list(vars(mod).values())
        if isinstance(obj, functools._lru_cache_wrapper)
    ]


def _census() -> dict[str, tuple[int, int]]:
    """Tracked objects by type, and the strings, bytes and numbers they hold (once)."""
    out: dict[str, tuple[int, int]] = {}
    seen: set[int] = set()
    leaves = (str, bytes, int, float)
    for obj in gc.get_objects():
        name = type(obj).__name__
        count, size = out.get(name, (0, 0))
        out[name] = (count + 1, size + sys.getsizeof(obj))
        for held in gc.get_referents(obj):
            if type(held) in leaves and id(held) not in seen:
                seen.add(id(held))
                name = type(held).__name__
                count, size = out.get(name, (0, 0))
                out[name] = (count + 1, size + sys.getsizeof(held))
    return out


def measure_floor(polls: Any) -> Floor:
    blocks, rss, heap = _settled()
    held: list[tuple[int, int, int, str]] = []
    # Each cache emptied after the other, the largest first: what each held alone.
    for m in sorted(memo_mod._ALL, key=len, reverse=True):
        entries, before, heap_before = len(m), sys.getallocatedblocks(), heap_in_use()
        name = _memo_name(m)
        m.clear()
        gc.collect()
        freed = before - sys.getallocatedblocks()
        held.append((heap_before - heap_in_use(), freed, entries, name))
    for cache in _lru_caches():
        entries, before = cache.cache_info().currsize, sys.getallocatedblocks()
        heap_before = heap_in_use()
        cache.cache_clear()
        gc.collect()
        freed = before - sys.getallocatedblocks()
        held.append((heap_before - heap_in_use(), freed, entries, f"{cache.__qualname__}()"))
    memo_mod.clear_memos()
    for cache in _lru_caches():
        cache.cache_clear()
    polls()  # every cache empty: the board and timeline made again from the folds
    floor_blocks, floor_rss, floor_heap = _settled()
    return Floor(
        blocks,
        rss,
        heap,
        floor_blocks,
        floor_rss,
        floor_heap,
        _census(),
        sorted(held, reverse=True),
    )


def report_floor(a: Floor, b: Floor, ticks: int) -> None:
    def per_tick(x: float) -> str:
        return f"{x / ticks:.1f}"

    print(
        f"\nper tick over {ticks} ticks: with the caches {per_tick(b.blocks - a.blocks)} blocks, "
        f"heap in use {per_tick((b.heap - a.heap) / 1024)} KB, "
        f"RSS {per_tick((b.rss_mb - a.rss_mb) * 1024)} KB; the floor (data) "
        f"{per_tick(b.floor_blocks - a.floor_blocks)} blocks, "
        f"heap in use {per_tick((b.floor_heap - a.floor_heap) / 1024)} KB, "
        f"RSS {per_tick((b.floor_rss_mb - a.floor_rss_mb) * 1024)} KB (RSS is the noisier)"
    )
    print("\nthe floor's growth by type, per tick (bytes, objects):")
    rows = sorted(
        (
            (size - a.census.get(name, (0, 0))[1], count - a.census.get(name, (0, 0))[0], name)
            for name, (count, size) in b.census.items()
        ),
        reverse=True,
    )
    for size, count, name in rows[:20]:
        print(f"  {size / ticks:8.0f} B {count / ticks:7.2f}  {name}")
    print("\nheap bytes and blocks each cache held alone at the last tick (entries):")
    for size, blocks, entries, name in b.alone[:25]:
        print(f"  {size / 1e6:7.2f} MB {blocks:9,} blocks {entries:8,} entries  {name}")
    print(
        "\neach cache's growth between the ticks, per tick (heap bytes, blocks; "
        "entries first -> last):"
    )
    first, last = _by_cache(a.alone), _by_cache(b.alone)
    none = (0, 0, 0)
    growth = sorted(
        (
            (
                last.get(n, none)[0] - first.get(n, none)[0],
                last.get(n, none)[1] - first.get(n, none)[1],
                n,
            )
            for n in set(first) | set(last)
        ),
        reverse=True,
    )
    for size, blocks, name in growth[:25]:
        (_, b0, e0), (_, b1, e1) = first.get(name, none), last.get(name, none)
        print(
            f"  {size / ticks:7.0f} B {blocks / ticks:5.1f} blocks/tick  {b0:9,} -> {b1:9,} "
            f"blocks {e0:7,} -> {e1:7,} entries  {name}"
        )
    print(
        f"  in all: {sum(g for g, _, _ in growth) / ticks:.0f} B, "
        f"{sum(g for _, g, _ in growth) / ticks:.1f} blocks/tick"
    )


@dataclass(frozen=True)
class Shapes:
    """What the process holds by shape: bytes and objects by shape, and the strings
    and bytes (each counted once) by what holds them."""

    size: dict[str, int]
    count: dict[str, int]
    text_size: dict[str, int]
    text_count: dict[str, int]


def _shape(obj: Any) -> str:
    kind = type(obj)
    if kind is dict:
        span_kind = obj.get("kind")
        if isinstance(span_kind, str) and "id" in obj:
            return f"dict[{span_kind}]"
        return f"dict of <{1 << max(len(obj), 1).bit_length()}"
    if kind is tuple:
        # Its items as the collector visits them (last first), never by index: a tuple
        # still being filled (``tuple(iterable)``) is listed too, with empty slots.
        firsts = ",".join(type(x).__name__ for x in gc.get_referents(obj)[:-4:-1])
        return f"tuple of <{1 << max(len(obj), 1).bit_length()} ({firsts})"
    return kind.__name__


def _held_by(obj: Any) -> list[tuple[str, Any]]:
    """``obj``'s references with what holds each: a field, a span's key, a map's keys
    or values."""
    name = type(obj).__name__
    if type(obj) is dict and isinstance(obj.get("kind"), str) and "id" in obj:
        return [(f"dict[{obj['kind']}].{k}", v) for k, v in obj.items()]
    if isinstance(obj, dict):
        return [*((f"{name} key", k) for k in obj), *((f"{name} value", v) for v in obj.values())]
    fields = getattr(obj, "_fields", None)
    if isinstance(obj, tuple) and fields is not None:
        items = gc.get_referents(obj)[::-1]
        return [(f"{name}.{f}", v) for f, v in zip(fields, items, strict=False)]
    slots = [a for c in type(obj).__mro__ for a in getattr(c, "__slots__", ())]
    if slots and not isinstance(obj, (tuple, list, set, frozenset)):
        return [(f"{name}.{a}", getattr(obj, a, None)) for a in slots if isinstance(a, str)]
    return [(name, held) for held in gc.get_referents(obj)]


def shapes_held() -> Shapes:
    gc.collect()
    size: dict[str, int] = {}
    count: dict[str, int] = {}
    text_size: dict[str, int] = {}
    text_count: dict[str, int] = {}
    seen: set[int] = set()
    for obj in gc.get_objects():
        shape = _shape(obj)
        size[shape] = size.get(shape, 0) + sys.getsizeof(obj)
        count[shape] = count.get(shape, 0) + 1
        for holder, held in _held_by(obj):
            if type(held) in (str, bytes) and id(held) not in seen:
                seen.add(id(held))
                text_size[holder] = text_size.get(holder, 0) + sys.getsizeof(held)
                text_count[holder] = text_count.get(holder, 0) + 1
    return Shapes(size, count, text_size, text_count)


#: History items whose holders ``holders_per_item`` counts: a turn's span and bar, a
#: message's span and mark (by type name, a span dict by its kind).
HISTORY_ITEMS = ("dict[turn]", "dict[message]", "TurnBar", "Mark", "TurnSpan", "TurnMark")


def holders_per_item(sample: int = 24) -> None:
    """How many containers point at one history item, and which (a whole lane's
    sequence copied per view or per memo costs 8 bytes an item each time)."""
    gc.collect()
    items: dict[str, list[Any]] = {}
    for obj in gc.get_objects():
        shape = _shape(obj)
        if shape in HISTORY_ITEMS:
            items.setdefault(shape, []).append(obj)
    print("\ncontainers holding one history item (a sample of each kind):")
    for shape in HISTORY_ITEMS:
        alive = items.get(shape, [])
        if not alive:
            continue
        picked = alive[:: max(len(alive) // sample, 1)][:sample]
        holders: dict[str, int] = {}
        for obj in picked:
            for holder in gc.get_referrers(obj):
                if holder is alive or holder is picked:
                    continue
                # A sequence or map by its size; an object holding it in a field by type.
                sized = hasattr(holder, "__len__")
                name = type(holder).__name__ + (
                    f" of <{1 << max(len(holder), 1).bit_length()}" if sized else ""
                )
                holders[name] = holders.get(name, 0) + 1
        total = sum(holders.values()) / len(picked)
        top = sorted(holders.items(), key=lambda kv: kv[1], reverse=True)[:6]
        shown = ", ".join(f"{name} x{n / len(picked):.1f}" for name, n in top)
        print(f"  {shape}: {len(alive):,} alive, {total:.1f} holders each: {shown}")
    del items


def report_shapes(a: tuple[int, Shapes], b: tuple[int, Shapes], ticks: int, top: int) -> None:
    (heap_a, sa), (heap_b, sb) = a, b

    def grown(x: dict[str, int], y: dict[str, int]) -> dict[str, int]:
        return {k: y.get(k, 0) - x.get(k, 0) for k in set(x) | set(y)}

    size, count = grown(sa.size, sb.size), grown(sa.count, sb.count)
    text_size, text_count = grown(sa.text_size, sb.text_size), grown(sa.text_count, sb.text_count)
    counted = sum(size.values()) + sum(text_size.values())
    print(
        f"\nper tick over {ticks} ticks, caches as they are: heap in use "
        f"{(heap_b - heap_a) / ticks / 1024:.1f} KB, of which counted by shape "
        f"{counted / ticks / 1024:.1f} KB (the rest: objects the collector does not track, "
        "such as tuples of strings and numbers, and the allocators' rounding)"
    )
    print("\nby shape, per tick (bytes, objects; a table that grew counts its growth):")
    for shape in sorted(size, key=size.__getitem__, reverse=True)[:top]:
        print(f"  {size[shape] / ticks:7.0f} B {count[shape] / ticks:7.2f}  {shape}")
    print("\nstrings and bytes by what holds them, per tick (bytes, objects):")
    for holder in sorted(text_size, key=text_size.__getitem__, reverse=True)[:top]:
        print(f"  {text_size[holder] / ticks:7.0f} B {text_count[holder] / ticks:7.2f}  {holder}")


def _by_cache(alone: list[tuple[int, int, int, str]]) -> dict[str, tuple[int, int, int]]:
    """Heap bytes, blocks and entries by cache name (caches made alike, say a
    ``Carried`` per kind, summed)."""
    out: dict[str, tuple[int, int, int]] = {}
    for size, blocks, entries, name in alone:
        s, b, e = out.get(name, (0, 0, 0))
        out[name] = (s + size, b + blocks, e + entries)
    return out


def _short(path: str) -> str:
    for mark in ("dsh_task_gantt/", "site-packages/", "lib/python"):
        if mark in path:
            return path.split(mark, 1)[1]
    return path


if __name__ == "__main__":
    main()
