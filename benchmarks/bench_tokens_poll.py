"""What token use adds to a live poll: the bytes of its token markup in each answer.

A poll after an append answers only the pieces that changed (see panel.py); token use
adds the status line's team figure (in every answer after an append), a lane's figure
when its compact form changed, and a changed turn's figure in its bar's tooltip. This
generates a team (``teams.py``), serves it in process (the embedded host through
starlette's ``TestClient``), and for ``--ticks`` appends (a ``LiveTeam`` tick each,
2 s apart) sends the delta board poll each kind of panel sends (``bench_soak.KINDS``:
400 px and 1280 px following now, 400 px with a replay cursor, 1280 px with the list
open), then an unchanged poll. It prints per kind the answers' bytes and, in them, the
bytes of token markup (the elements of class ``tokens`` whole, and the figures in the
turns' tooltips): before token use an answer was the same less those bytes.

An unchanged poll reads no log (one ``stat`` each) and answers 204 with no body,
token use or not: printed too, as the statuses and bytes of those polls.

Figures only: nothing here asserts a size.

Run: ``python benchmarks/bench_tokens_poll.py [--team big] [--ticks 40]``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_soak import _INPUT, KINDS, PREFIX, board_params, unescape
from starlette.testclient import TestClient
from teams import TEAMS, generate_recent_team

from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec

#: An element of class ``tokens`` with its text (the status line's and the lanes' figures,
#: a list item's, a moment's).
TOKEN_ELEMENT = re.compile(r'<(span|div) class="tokens"[^>]*>[^<]*</\1>')
#: A turn's figure in its bar's tooltip: " · 420k in · 429 out · 95 % cached" (the
#: figure's spaces may be no-break ones).
TOOLTIP_FIGURE = re.compile(r" · [\d.,]+[kMG]?[ \u00a0]in[ \u00a0]·[^<\"]*?(?:cached|out)")


def token_bytes(body: str) -> int:
    """The bytes of token markup in an answer."""
    return sum(
        len(m.group(0).encode()) for pattern in (TOKEN_ELEMENT, TOOLTIP_FIGURE)
        for m in pattern.finditer(body)
    )  # fmt: skip


def _quantiles(values: list[int]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):,.0f} B, p90 {p90:,} B, max {ordered[-1]:,} B"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--team", choices=sorted(TEAMS), default="big")
    parser.add_argument("--ticks", type=int, default=40)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="dsh-gantt-tokens-poll-"))
    try:
        root = work / "sessions"
        spec = generate_recent_team(root, TEAMS[args.team], ends_ms=int(time.time() * 1000))
        spec_path = work / "spec.json"
        spec.dump(spec_path)
        spec = TeamSpec.load(spec_path, root=str(root))
        live = LiveTeam(root, spec)
        client = TestClient(
            EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 1)
        )
        at_ms = (spec.start_ms + spec.last_event_time) // 2
        held = [{"version": "", "drawn": "", "token": ""} for _ in KINDS]
        for n, kind in enumerate(KINDS):
            page = {"session": spec.lead_id, **({"list": "1"} if kind.list_open else {})}
            r = client.get(PREFIX + "/panel", params=page)
            held[n].update({k: unescape(v) for k, v in _INPUT.findall(r.text)})
        bodies: list[list[str]] = [[] for _ in KINDS]
        unchanged: dict[str, int] = {}
        unchanged_bytes = 0
        now = max(int(time.time() * 1000), spec.last_event_time + 2000)
        for _ in range(args.ticks):
            now += 2000
            live.tick(now)
            for n, kind in enumerate(KINDS):
                for delta in (True, False):
                    params = board_params(spec.lead_id, kind, at_ms, held[n])
                    r = client.get(
                        PREFIX + "/panel/board", params=params, headers={"HX-Request": "true"}
                    )
                    if r.status_code in (200, 286):
                        held[n].update({k: unescape(v) for k, v in _INPUT.findall(r.text)})
                    if delta:
                        if r.status_code in (200, 286):
                            bodies[n].append(r.text)
                    else:
                        unchanged[str(r.status_code)] = unchanged.get(str(r.status_code), 0) + 1
                        unchanged_bytes += len(r.content)
        print(f"team {args.team}: {args.ticks} appends, each followed by every kind's polls")
        for kind, answers in zip(KINDS, bodies, strict=True):
            sizes = [len(b.encode()) for b in answers]
            tokens = [token_bytes(b) for b in answers]
            print(f"{kind.name:14s} answers after an append ({len(answers)}): {_quantiles(sizes)}")
            print(f"{'':14s} of them token markup: {_quantiles(tokens)}")
        print(f"unchanged polls: statuses {unchanged}, {unchanged_bytes} bytes of body in all")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
