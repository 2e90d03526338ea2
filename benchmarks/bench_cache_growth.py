"""What each entry-bounded cache gains per append: in process, a generated team, a
writer tick, then the four soak poller kinds polling twice each (the delta and the
unchanged poll), printing every cache's size and the CPU per board poll.

An entry a live team still reaches is data; one a cache gains for every append but no
later poll asks for is what fills a cache for hours (issue 24). Nothing here asserts.

Run: ``python benchmarks/bench_cache_growth.py [real|big|small] [ticks]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_soak import _INPUT, KINDS, PREFIX, PollerKind, board_params, unescape
from starlette.testclient import TestClient
from teams import TEAMS, generate_recent_team

from dsh_task_gantt import timetext
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import LiveTeam
from dsh_task_gantt.fold import text
from dsh_task_gantt.timeline import messages, spans


def sizes() -> dict[str, int]:
    return {
        "format_time": timetext.format_time.cache_info().currsize,
        "preview": text._preview.cache_info().currsize,
        "LAST_TURNS": len(spans._LAST_TURNS),
        "TURN_SPANS": len(spans._TURN_SPANS),
        "DRAWN_MESSAGES": len(messages._DRAWN_MESSAGES),
    }


def main() -> None:
    team = sys.argv[1] if len(sys.argv) > 1 else "real"
    ticks = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    root = Path(tempfile.mkdtemp(prefix="dsh-gantt-growth-")) / "sessions"
    now = int(time.time() * 1000)
    spec = generate_recent_team(root, TEAMS[team], ends_ms=now - 60_000)
    live = LiveTeam(root, spec)
    client = TestClient(
        EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 1)
    )
    at_ms = (spec.start_ms + spec.last_event_time) // 2
    held = [{"version": "", "drawn": "", "token": ""} for _ in KINDS]

    def poll(n: int, kind: PollerKind) -> None:
        params = board_params(spec.lead_id, kind, at_ms, held[n])
        r = client.get(PREFIX + "/panel/board", params=params, headers={"HX-Request": "true"})
        if r.status_code in (200, 286):
            held[n].update({k: unescape(v) for k, v in _INPUT.findall(r.text)})

    for n, kind in enumerate(KINDS):
        poll(n, kind)
    print("after the first polls", sizes(), flush=True)
    cpu, polls = 0.0, 0
    for tick in range(ticks):
        now += 2000
        live.tick(now)
        cpu0 = time.process_time()
        for n, kind in enumerate(KINDS):
            poll(n, kind)
            poll(n, kind)
        cpu += time.process_time() - cpu0
        polls += 2 * len(KINDS)
        if tick % 20 == 19:
            print(tick + 1, sizes(), f"cpu/poll {cpu * 1000 / polls:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
