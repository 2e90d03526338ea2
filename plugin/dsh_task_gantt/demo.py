"""``serve --demo``: the bundled example teams, one of them live.

The bundled logs are copied to a temporary sessions root (they are never touched).
The example team a newcomer sees first ("invoices": a lead and three teammates adding
a CSV export to an invoices API) is regenerated there from its seed with its clock
moved so that it ends now, and a background thread keeps appending real-format
frames to it — turns, task claims and completions, messages, now and then a human
prompt — so its panel visibly grows. The temporary root is removed on exit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .clock import now_ms
from .fixturegen import (
    FIXTURE_SEED,
    STORY_SEED_OFFSET,
    STORY_TEAM,
    LiveTeam,
    TeamSpec,
    generate_team,
)
from .resources import resource_path

log = logging.getLogger("dsh_task_gantt.demo")

#: Seconds between two appended activities.
TICK_SECONDS = 2.5
LIVE_TEAM = STORY_TEAM


@dataclass(slots=True)
class DemoTeams:
    root: Path
    live_spec: TeamSpec
    interval: float = TICK_SECONDS
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @classmethod
    @contextlib.contextmanager
    def start(cls, *, interval: float = TICK_SECONDS) -> Iterator[DemoTeams]:
        tmp = Path(tempfile.mkdtemp(prefix="dsh-task-gantt-demo-"))
        try:
            teams = cls.prepare(tmp / "sessions", interval=interval)
            teams.run_in_background()
            try:
                yield teams
            finally:
                teams.stop()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def prepare(cls, root: Path, *, interval: float = TICK_SECONDS) -> DemoTeams:
        bundled = resource_path("fixtures")
        shutil.copytree(bundled / "sessions", root)
        # An install may ship read-only files; the copy must take appends and be removable.
        _make_writable(root)
        frozen = TeamSpec.load(bundled / "specs" / f"{LIVE_TEAM}.json", root=str(root))
        # Replace the copy of the live team by the same team, its clock ending now.
        shutil.rmtree(root / frozen.project_key, ignore_errors=True)
        spec = _generate_live(root, start_ms=now_ms() - _live_duration())
        # The other bundled teams that shared the workspace folder come back as they were.
        for path in (bundled / "sessions" / frozen.project_key).glob("*"):
            if not (root / frozen.project_key / path.name).exists():
                shutil.copytree(path, root / frozen.project_key / path.name)
                _make_writable(root / frozen.project_key / path.name)
        return cls(root=root, live_spec=spec, interval=interval)

    def run_in_background(self) -> None:
        live = LiveTeam(self.root, self.live_spec)

        def loop() -> None:
            while not self._stop.wait(self.interval):
                try:
                    live.tick(now_ms())
                except Exception:
                    # A failed append must not end the demo silently: say so, keep ticking.
                    log.warning("the demo team could not append this tick", exc_info=True)

        self._thread = threading.Thread(target=loop, name="dsh-task-gantt-demo", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


def _generate_live(root: Path, *, start_ms: int) -> TeamSpec:
    return generate_team(
        root,
        seed=FIXTURE_SEED + STORY_SEED_OFFSET,
        shape="story",
        name=LIVE_TEAM,
        start_ms=start_ms,
        live=True,
    )


def _live_duration() -> int:
    """How long the live variant of the team runs. It ends on an open lead turn, not on
    the frozen bundle's closing turn, so its length is measured on a scratch copy: the
    team then ends now, and the first appended tick does not stretch its time axis."""
    with tempfile.TemporaryDirectory(prefix="dsh-task-gantt-demo-") as scratch:
        spec = _generate_live(Path(scratch), start_ms=0)
    return spec.last_event_time - spec.start_ms


def _make_writable(root: Path) -> None:
    for directory, _dirs, files in os.walk(root):
        here = Path(directory)
        here.chmod(here.stat().st_mode | stat.S_IRWXU)
        for name in files:
            path = here / name
            path.chmod(path.stat().st_mode | stat.S_IRUSR | stat.S_IWUSR)
