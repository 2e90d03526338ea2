"""The delta-poll benchmark measures appends a real team would make: its writer, made
again on a dataset with history, writes messages the history never held (a writer
seeded as the history's was replayed its draws, message ids included, and each append
then changed a span a day old)."""

from __future__ import annotations

import sys
from pathlib import Path

from dsh_task_gantt.fixturegen import LiveTeam, TeamSpec, generate_team

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_delta_day import resumed_seed

TICK_MS = 2_000


def _message_ids(live: LiveTeam, start: int, ticks: int) -> list[str]:
    ids = []
    for n in range(ticks):
        report = live.tick(start + n * TICK_MS)
        ids += [a.split()[1] for a in report.activities if a.startswith("message ")]
    return ids


def test_the_measuring_writer_sends_messages_the_history_never_held(tmp_path: Path) -> None:
    spec = generate_team(tmp_path, seed=5, live=True)
    start = spec.last_event_time + TICK_MS
    history = _message_ids(LiveTeam(tmp_path, spec), start, 60)
    saved = tmp_path / "spec.json"
    spec.dump(saved)
    again = TeamSpec.load(saved, root=str(tmp_path))
    later = start + 60 * TICK_MS
    assert history
    # Seeded as the history's writer was: its messages take the history's ids again.
    replayed = _message_ids(LiveTeam(tmp_path, again), later, 60)
    assert set(replayed) & set(history)
    measured = _message_ids(LiveTeam(tmp_path, again, seed=resumed_seed(again)), later * 2, 60)
    assert measured and not set(measured) & set(history + replayed)
