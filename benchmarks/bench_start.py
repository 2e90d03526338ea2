"""What the standalone viewer's start page costs on a sessions root after months of use.

Generates (once, into ``--root``; reused when it is already there) a root like a real
``~/.dsh/sessions`` after a few months: ``--teams`` medium "full" teams (a lead and its
teammates, ~2 MB of zstd each) and ``--singles`` single sessions, spread over
``--workspaces`` workspaces. Then, on a freshly built standalone host each run, prints:

- first answer: ``GET /`` until its whole body is in (headers read cold: a new host);
- all cards filled: the first answer plus every card's summary fetched one after the
  other from the URL the page names for it (``data-card-url``), as the page's script
  does; "never" when the page leaves cards without such a URL;
- placeholders left: cards still without a summary after that;
- live poll: ``GET /start/live`` once every card is in and nothing changed (what the
  page asks every few seconds to keep the live badges current).

Medians of ``--runs`` runs. Figures only: nothing here asserts a time. The requests
go through Starlette's in-process test client (no socket), so the figures are the
server's own work.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from html import unescape
from pathlib import Path

from starlette.testclient import TestClient

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import DEFAULT_START_MS, generate_team

DAY_MS = 86_400_000
CARD_URL = re.compile(r'data-card-url="([^"]+)"')
PENDING = re.compile(r'aria-busy="true"')


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


def one_run(root: Path) -> tuple[float, float | None, int, int, float | None]:
    """(first answer s, all cards filled s or None, cards, placeholders left,
    unchanged live poll s or None)."""
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
        return first, None, cards, page.text.count("Team of lead"), None
    left = 0
    for url in urls:
        card = client.get(url)
        assert card.status_code == 200, (url, card.status_code)
        left += 1 if PENDING.search(card.text) else 0
    filled = time.perf_counter() - started
    polls = []
    for _ in range(3):  # the first may still ask a team's timeline once
        polled = time.perf_counter()
        assert client.get("/start/live").status_code == 200
        polls.append(time.perf_counter() - polled)
    return first, filled, cards, left, polls[-1]


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
    firsts = [r[0] for r in runs]
    filled = [r[1] for r in runs if r[1] is not None]
    print(f"cards on the first answer: {runs[-1][2]}")
    print(f"first answer: median {statistics.median(firsts) * 1000:,.0f} ms "
          f"(runs: {', '.join(f'{f * 1000:,.0f}' for f in firsts)})")  # fmt: skip
    if filled:
        print(f"all cards filled: median {statistics.median(filled):,.2f} s "
              f"(runs: {', '.join(f'{f:,.2f}' for f in filled)})")  # fmt: skip
    else:
        print("all cards filled: never (the page names no way to fill its cards)")
    print(f"placeholders left: {runs[-1][3]}")
    polls = [r[4] for r in runs if r[4] is not None]
    if polls:
        print(f"live poll, nothing changed: median {statistics.median(polls) * 1000:,.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
