"""What the standalone viewer's start page costs on a sessions root after months of use.

Generates (once, into ``--root``; reused when it is already there) a root like a real
``~/.dsh/sessions`` after a few months: ``--teams`` medium "full" teams (a lead and its
teammates, ~2 MB of zstd each) and ``--singles`` single sessions, spread over
``--workspaces`` workspaces. Then, on a freshly built standalone host each run, prints:

- first answer: ``GET /`` until its whole body is in (headers read cold: a new host);
- all cards filled: the first answer plus every card's summary fetched one after the
  other from the URL the page names for it (``data-card-url``), as the page's script
  does; "never" when the page leaves cards without such a URL;
- team cards filled: the same, until the last team's card (the single sessions come
  after the teams, in a section the page keeps collapsed until it is opened);
- placeholders left: cards still without a summary after that;
- live poll: the page's live URL (``data-live-url``), which the page asks every few
  seconds, once every card is in: when nothing changed (median of several); after one
  team's lead log changed (its modification time moved: that team is asked again); and
  after a new single session's folder with a log appeared in a workspace (the root is
  listed again; the folder is removed afterwards). Wall time, and this process's CPU
  time (steadier on a shared machine; the test client's own work included);
- peak memory: the process's peak RSS, every card's timeline in the service's caches.

Medians of ``--runs`` runs. Figures only: nothing here asserts a time. The requests
go through Starlette's in-process test client (no socket), so the figures are the
server's own work.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from html import unescape
from pathlib import Path

from starlette.testclient import TestClient

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import DEFAULT_START_MS, generate_team

DAY_MS = 86_400_000
CARD_URL = re.compile(r'<li class="team[^>]*?data-card-url="([^"]+)"')
LIVE_URL = re.compile(r'data-live-url="([^"]+)"')
PENDING = re.compile(r'aria-busy="true"')
LEAD = re.compile(r'<li class="team[^>]*?data-lead="([^"]+)"')


def generate_root(root: Path, *, teams: int, singles: int, workspaces: int) -> None:
    """Teams and single sessions over ~months, round-robin over the workspaces."""
    marker = root / ".generated"
    wanted = f"{teams} {singles} {workspaces}"
    if marker.is_file() and marker.read_text() == wanted:
        return
    root.mkdir(parents=True, exist_ok=True)
    for index in range(teams):
        generate_team(
            root,
            seed=1000 + index,
            scale="medium",
            shape="full",
            name=f"team{index}",
            cwd=f"/home/dev/project-{index % workspaces}",
            start_ms=DEFAULT_START_MS - index * 2 * DAY_MS,
        )
    for index in range(singles):
        generate_team(
            root,
            seed=5000 + index,
            shape="lone",
            name=f"single{index}",
            cwd=f"/home/dev/project-{index % workspaces}",
            start_ms=DEFAULT_START_MS - index * DAY_MS // 2 - 3_600_000,
        )
    marker.write_text(wanted)


def size_of(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*.zstd"))


@dataclass(frozen=True)
class Poll:
    """One live poll's (or a median's) wall time and this process's CPU time, in s."""

    wall: float
    cpu: float


@dataclass(frozen=True)
class Run:
    first: float
    filled: float | None
    teams_filled: float | None
    cards: int
    left: int
    poll: Poll | None
    poll_touched: Poll | None = None
    poll_new_session: Poll | None = None


def one_run(root: Path) -> Run:
    client = TestClient(
        EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)
    )
    started = time.perf_counter()
    page = client.get("/")
    first = time.perf_counter() - started
    assert page.status_code == 200, page.status_code
    urls = [unescape(u) for u in CARD_URL.findall(page.text)]
    cards = page.text.count('<li class="team')
    if not urls:  # everything the page will ever say is in it
        return Run(first, None, None, cards, page.text.count("Team of lead"), None)
    teams = len(CARD_URL.findall(page.text.split('<details class="singles"')[0]))
    left = 0
    teams_filled = None
    for done, url in enumerate(urls, 1):
        card = client.get(url)
        assert card.status_code == 200, (url, card.status_code)
        left += 1 if PENDING.search(card.text) else 0
        if done == teams:
            teams_filled = time.perf_counter() - started
    filled = time.perf_counter() - started
    live_url = unescape(LIVE_URL.findall(page.text)[0])

    def poll() -> Poll:
        wall, cpu = time.perf_counter(), time.process_time()
        assert client.get(live_url).status_code == 200
        return Poll(time.perf_counter() - wall, time.process_time() - cpu)

    poll()  # the first may still ask a team's timeline once
    polls = [poll() for _ in range(7)]
    unchanged = Poll(
        statistics.median(p.wall for p in polls), statistics.median(p.cpu for p in polls)
    )
    # A summarised team's lead log changes (its modification time): that team is asked
    # again. Then a new single session appears: a copy of a single session's log in a
    # folder of its own (no parent, so no team reads it); the root is listed again.
    team_lead = unescape(LEAD.findall(page.text)[0])
    single = unescape(LEAD.findall(page.text.split('<details class="singles"')[1])[0])
    lead_log = next(root.glob(f"*/{team_lead}/session.v4.jsonl.zstd"))
    now_ns = time.time_ns()
    os.utime(lead_log, ns=(now_ns, now_ns))
    touched = poll()
    single_log = next(root.glob(f"*/{single}/session.v4.jsonl.zstd"))
    folder = single_log.parent.parent / "session-bench-new"
    folder.mkdir()
    try:
        shutil.copyfile(single_log, folder / single_log.name)
        new_session = poll()
    finally:
        shutil.rmtree(folder)
    poll()
    return Run(first, filled, teams_filled, cards, left, unchanged, touched, new_session)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=None, help="where to generate (kept)")
    parser.add_argument("--teams", type=int, default=40)
    parser.add_argument("--singles", type=int, default=160)
    parser.add_argument("--workspaces", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    root = args.root or Path(tempfile.gettempdir()) / (
        f"dsh-bench-start-{args.teams}-{args.singles}-{args.workspaces}"
    )
    started = time.perf_counter()
    generate_root(root, teams=args.teams, singles=args.singles, workspaces=args.workspaces)
    print(
        f"root {root}: {args.teams} teams, {args.singles} single sessions, "
        f"{args.workspaces} workspaces, {size_of(root) / 1e6:.0f} MB of zstd "
        f"(ready in {time.perf_counter() - started:.1f} s)"
    )
    runs = [one_run(root) for _ in range(args.runs)]
    firsts = [r.first for r in runs]
    filled = [r.filled for r in runs if r.filled is not None]
    teams_filled = [r.teams_filled for r in runs if r.teams_filled is not None]
    print(f"cards on the first answer: {runs[-1].cards}")
    print(f"first answer: median {statistics.median(firsts) * 1000:,.0f} ms "
          f"(runs: {', '.join(f'{f * 1000:,.0f}' for f in firsts)})")  # fmt: skip
    if teams_filled:
        print(f"team cards filled: median {statistics.median(teams_filled):,.2f} s")
    if filled:
        print(f"all cards filled: median {statistics.median(filled):,.2f} s "
              f"(runs: {', '.join(f'{f:,.2f}' for f in filled)})")  # fmt: skip
    else:
        print("all cards filled: never (the page names no way to fill its cards)")
    print(f"placeholders left: {runs[-1].left}")
    for label, polls in (
        ("nothing changed", [r.poll for r in runs]),
        ("one log changed", [r.poll_touched for r in runs]),
        ("a new session appeared", [r.poll_new_session for r in runs]),
    ):
        taken = [p for p in polls if p is not None]
        if taken:
            walls = [p.wall * 1000 for p in taken]
            print(f"live poll, {label}: median {statistics.median(walls):,.1f} ms "
                  f"(runs: {', '.join(f'{t:,.1f}' for t in walls)}; CPU of this process: "
                  f"{', '.join(f'{p.cpu * 1000:,.1f}' for p in taken)} ms)")  # fmt: skip
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak memory of this process (every card's timeline cached): {peak:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
