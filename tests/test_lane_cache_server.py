"""The lane cache in a real server: a restart reads only what was appended, the
shut-down writes what is pending, and ``serve --no-cache`` writes nothing."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import orjson
import pytest

from dsh_task_gantt.cli import build_parser, main
from dsh_task_gantt.embedded import EmbeddedHost
from dsh_task_gantt.fixturegen import LiveTeam
from dsh_task_gantt.fixturegen.scenario import generate_team
from dsh_task_gantt.logs.frames import walk_frames
from tests.kit.chromium import Server
from tests.kit.logwriting import record_decoded_frames

PREFIX = "/plugins/dsh-task-gantt"


def logs_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("session*.jsonl.zstd") if p.is_file())


def frames_after(path: Path, offset: int) -> int:
    return len(walk_frames(path.read_bytes(), offset).frames)


def get(server: Server, path: str) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=60) as r:
        assert r.status == 200
        body: bytes = r.read()
        return body


def test_a_restarted_server_decodes_only_the_appended_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "sessions"
    spec = generate_team(root, seed=21, shape="story", name="restarted", live=True)
    cache = tmp_path / "cache"
    api = f"{PREFIX}/api/timeline?session={spec.lead_id}"
    decoded = record_decoded_frames(monkeypatch)
    with Server(EmbeddedHost(root, cache_dir=cache)) as first:
        get(first, api)
    logs = logs_under(root)
    cold_frames = len(decoded)
    assert cold_frames == sum(frames_after(p, 0) for p in logs)
    # The shut-down wrote one entry per lane (the writer's delay had not passed).
    assert len(list(cache.glob("*.lane"))) == len(logs)

    sizes = {p: p.stat().st_size for p in logs}
    live = LiveTeam(root, spec)
    now = spec.last_event_time
    for _ in range(4):
        now += 2_500
        live.tick(now)
    appended = sum(frames_after(p, sizes[p]) for p in logs)
    assert 0 < appended < cold_frames / 2

    decoded.clear()
    with Server(EmbeddedHost(root, cache_dir=cache)) as second:
        body = get(second, api)
        assert second_host_resumed(second) == len(logs)
    assert len(decoded) == appended  # each appended frame once, nothing older
    assert all(offset >= min(sizes.values()) for offset in decoded)

    decoded.clear()
    with Server(EmbeddedHost(root)) as cold:  # no cache: the same answer, read in full
        cold_body = get(cold, api)
        assert strip_generated(cold_body) == strip_generated(body)
    # The same token totals (lane cache format 2 keeps the steps' usage): per lane, per
    # turn and for the team, and there are some.
    warm, read = orjson.loads(body), orjson.loads(cold_body)
    assert warm["tokens"] == read["tokens"] and warm["tokens"]["steps"] > 0
    assert [lane["tokens"] for lane in warm["lanes"]] == [lane["tokens"] for lane in read["lanes"]]
    assert len(decoded) == sum(frames_after(p, 0) for p in logs)


def second_host_resumed(server: Server) -> int:
    app = server._server.config.app  # the EmbeddedHost the server runs
    return int(app.persistence.resumed)


def strip_generated(body: bytes) -> bytes:
    return re.sub(rb'"generatedAt":\d+', b"", body)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _serve_once(root: Path, env: dict[str, str], *flags: str) -> None:
    """``serve`` in its own process: one panel opened, then stopped by SIGINT."""
    port = _free_port()
    # This interpreter's package (a console script on PATH may be another install's).
    command = [sys.executable, "-m", "dsh_task_gantt.cli"]
    proc = subprocess.Popen(
        [*command, "serve", "--sessions-root", str(root), "--port", str(port), *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                url = f"http://127.0.0.1:{port}/"
                with urllib.request.urlopen(url, timeout=30) as page:
                    assert page.status == 200
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.2)
        lead = next(iter(logs_under(root))).parent.name
        urllib.request.urlopen(f"{url}{PREFIX[1:]}/panel?session={lead}", timeout=60).read()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    assert b"Traceback" not in proc.stderr.read()


@pytest.mark.slow
def test_serve_no_cache_writes_nothing_and_serve_writes_its_cache(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    generate_team(root, seed=2, shape="pair", name="pair")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "DSH_TASK_GANTT_CACHE_DIR": str(tmp_path / "env-cache"),
    }
    _serve_once(root, env, "--no-cache")
    assert list(home.iterdir()) == []
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "env-cache").exists()

    _serve_once(root, env)  # the control: by default the folder gets entries
    assert len(list((tmp_path / "env-cache").glob("*.lane"))) == len(logs_under(root))
    _serve_once(root, env, "--cache-dir", str(tmp_path / "flag"))
    assert list((tmp_path / "flag").glob("*.lane"))
    assert (tmp_path / "flag").stat().st_mode & 0o777 == 0o700


def test_a_server_start_drops_the_entries_of_logs_deleted_since(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    spec = generate_team(root, seed=2, shape="pair", name="pair")
    cache = tmp_path / "cache"
    with Server(EmbeddedHost(root, cache_dir=cache)) as first:
        get(first, f"{PREFIX}/api/timeline?session={spec.lead_id}")
    entries = sorted(cache.glob("*.lane"))
    lanes = len(logs_under(root))
    assert len(entries) == lanes >= 2
    mate = next(p for p in logs_under(root) if p.parent.name != spec.lead_id)
    shutil.rmtree(mate.parent)
    with Server(EmbeddedHost(root, cache_dir=cache)):  # nothing requested: only the start
        deadline = time.monotonic() + 10
        while len(list(cache.glob("*.lane"))) != lanes - 1:
            assert time.monotonic() < deadline, "the entry of the deleted log stayed"
            time.sleep(0.05)


def test_serve_names_the_cache_switches_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = capsys.readouterr().out
    assert "--cache-dir" in text and "--no-cache" in text
    assert "DSH_TASK_GANTT_CACHE_DIR" in text and "XDG_CACHE_HOME" in text
    # What an entry holds, when it goes, and how to clear them all.
    words = " ".join(text.split())
    assert "copies of the logs' message texts" in words
    assert "deleting a session's log removes its entry at the next server start" in words
    assert "to clear the cache, delete its folder" in words
    args = build_parser().parse_args(["serve", "--cache-dir", "~/lanes"])
    assert args.cache_dir == Path("~/lanes").expanduser() and args.use_cache
    assert not build_parser().parse_args(["serve", "--no-cache"]).use_cache
