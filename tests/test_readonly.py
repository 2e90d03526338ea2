"""Read-only: across every route, the start page and the CLI, no byte under
the sessions root changes, nothing is created or removed there, and every file the
plugin opens there is opened for reading only.

``chmod -R a-w`` does not stop root, so the proof is the tree's hash before and after,
and a trace of every ``open`` / ``os.open`` under the root (any thread: decoding runs
in worker threads) with its mode or flags.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from dsh_task_gantt.cli import main as cli_main
from dsh_task_gantt.embedded import EmbeddedHost
from tests.test_escaping import hostile_team

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"
PREFIX = "/plugins/dsh-task-gantt"
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def tree_state(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under ``root``: kind, mode and content hash (or link target)."""
    state: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            rel = str(path.relative_to(root))
            if path.is_symlink():
                state[rel] = ("link", st.st_mode, os.readlink(path))
            elif path.is_dir():
                state[rel] = ("dir", st.st_mode, str(st.st_mtime_ns))
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                state[rel] = ("file", st.st_mode, f"{digest}:{st.st_mtime_ns}")
    return state


class OpenTrace:
    """Records the mode of every open of a path under the root."""

    def __init__(self, root: Path) -> None:
        self.root = str(root.resolve())
        self.opens: list[tuple[str, str]] = []

    def under_root(self, file: Any) -> str | None:
        if isinstance(file, int):
            return None
        try:
            path = os.path.realpath(os.fsdecode(file))
        except TypeError:
            return None
        return path if path.startswith(self.root) else None

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_open, real_os_open = builtins.open, os.open

        def traced_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            path = self.under_root(file)
            if path is not None:
                self.opens.append((path, mode))
            return real_open(file, mode, *args, **kwargs)

        def traced_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            inside = self.under_root(path)
            if inside is not None:
                self.opens.append((inside, f"flags={flags}"))
                assert not flags & WRITE_FLAGS, (inside, flags)
            return real_os_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", traced_open)
        monkeypatch.setattr(io, "open", traced_open)
        monkeypatch.setattr(os, "open", traced_os_open)

    def assert_read_only(self) -> None:
        assert any(path.endswith(".zstd") for path, _ in self.opens), "the trace is blind"
        for path, mode in self.opens:
            if mode.startswith("flags="):
                continue
            assert mode in ("r", "rb", "rt"), (path, mode)


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "sessions"
    if FIXTURES.is_dir():
        shutil.copytree(FIXTURES, root, symlinks=True)
    hostile_team(root)  # hostile text, a message to an outsider
    # A damaged log and a torn tail: the read-only rule holds on the error paths too.
    damaged = root / "--work-demo--" / "broken" / "session.v4.jsonl.zstd"
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"\x28\xb5\x2f\xfd garbage" * 10)
    yield root


def every_request(client: TestClient, root: Path) -> int:
    """Each route, with what the team's own timelines link to; returns the count."""
    sent = 0

    def get(url: str, **kwargs: Any) -> Any:
        nonlocal sent
        sent += 1
        response = client.get(url, **kwargs)
        assert response.status_code < 500, (url, response.status_code)
        return response

    assert get("/").status_code == 200
    sessions = sorted(p.parent.name for p in root.glob("*/*/session.v4.jsonl*"))
    assert len(sessions) >= 3
    hx = {"HX-Request": "true"}
    for session in sessions:
        q = {"session": session}
        data = get(f"{PREFIX}/api/timeline", params=q).json()
        etag = get(f"{PREFIX}/api/timeline", params=q).headers.get("etag", "")
        get(f"{PREFIX}/api/timeline", params=q, headers={"If-None-Match": etag})
        get(f"{PREFIX}/panel", params=q)
        get(f"{PREFIX}/panel", params={**q, "list": "1"})
        get(f"{PREFIX}/panel/board", params=q, headers=hx)
        get(f"{PREFIX}/panel/board", params={**q, "v": etag}, headers=hx)
        message_ids = {
            span["id"] for lane in data["lanes"] for span in lane["spans"] if span["kind"] != "turn"
        }
        for message_id in sorted(message_ids)[:6]:
            get(f"{PREFIX}/api/messages/{message_id}", params=q)
            get(f"{PREFIX}/api/messages/{message_id}", params=q, headers=hx)
            get(f"{PREFIX}/panel", params={**q, "msg": message_id})
        for task in data["tasks"][:6]:
            get(f"{PREFIX}/panel/tasks/{task['id']}", params=q, headers=hx)
        get(f"{PREFIX}/api/messages/none", params=q)
    for url in ("/static/panel.css", "/static/nothing", "/api/nothing", "/panel?session=.."):
        get(PREFIX + url)
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        sent += 1
        assert client.request(method, f"{PREFIX}/api/timeline?session=x").status_code == 405
        assert client.request(method, "/").status_code == 405
    return sent


def test_no_route_writes_creates_or_removes_anything_under_the_root(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree_state(root)
    trace = OpenTrace(root)
    trace.install(monkeypatch)
    client = TestClient(
        EmbeddedHost(root), base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000)
    )
    sent = every_request(client, root)
    sent += every_request(client, root)  # warm caches take other paths
    assert sent > 50
    trace.assert_read_only()
    assert tree_state(root) == before


def test_the_command_line_reads_only(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    before = tree_state(root)
    trace = OpenTrace(root)
    trace.install(monkeypatch)
    sessions = sorted(p.parent.name for p in root.glob("*/*/session.v4.jsonl*"))
    for session in sessions:
        for command in ("timeline", "events"):
            cli_main([command, "--sessions-root", str(root), "--session", session])
    capsysbinary.readouterr()
    trace.assert_read_only()
    assert tree_state(root) == before


def test_the_trace_would_see_a_write(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The instruments themselves: a write under the root is caught by both."""
    before = tree_state(root)
    trace = OpenTrace(root)
    trace.install(monkeypatch)
    target = next(root.glob("*/*/session.v4.jsonl*"))
    with open(target, "ab") as f:
        f.write(b"x")
    with pytest.raises(AssertionError):
        trace.assert_read_only()
    assert tree_state(root) != before
