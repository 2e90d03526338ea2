"""A live writer against the real server.

``dsh-task-gantt serve`` runs under uvicorn on 127.0.0.1 (a free port); a writer
thread appends zstd frames to the lead's and a teammate's log, some of them in two
halves with a pause between, while the API, the board and the panel are polled in a
loop over HTTP. Every answer is 200/204/304; no event of a half-written frame ever
shows; every complete frame shows in the end.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.kit.logwriting import T0, event, frame, header, line, write_session

PREFIX = "/plugins/dsh-task-gantt"
LEAD, MATE = "live-lead", "live-mate"
FRAMES = 36
#: Split points of the frames written in two halves: inside the magic, the frame
#: header, the first block header, the middle, one byte short of the end.
SPLITS = [1, 3, 5, 7, 12, None, -1]
PAUSE_S = 0.12


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    root = tmp_path / "sessions"
    member = {"id": MATE, "name": "mate", "phase": "active"}
    lead_log = write_session(
        root,
        LEAD,
        [
            event(0, "team/member", {"version": 2, "teamId": LEAD, "member": member}),
            event(1, "turn/start", {"turn": "open"}),  # stays open: the team is live
        ],
    )
    mate_log = write_session(root, MATE, [], head=header(MATE, parentSession=LEAD))
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dsh_task_gantt.cli",
            "serve",
            "--sessions-root",
            str(root),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(base + "/", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.05)
        yield base, lead_log, mate_log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        assert "Traceback" not in stderr, stderr


class Writer(threading.Thread):
    """Appends numbered frames; ``allowed`` gets an id just before its last byte lands."""

    def __init__(self, lead_log: Path, mate_log: Path) -> None:
        super().__init__(daemon=True)
        self.lead_log, self.mate_log = lead_log, mate_log
        self.allowed: set[str] = set()
        self.lock = threading.Lock()
        self.halves = 0
        self.error: BaseException | None = None

    def frames(self, n: int) -> list[tuple[Path, bytes, list[str]]]:
        t = T0 + 1_000 + 100 * n
        message = {"id": f"m{n}", "senderId": LEAD, "targetId": MATE, "content": f"msg {n}"}
        lead = [
            event(2 + 2 * n, "team/message/queued", {"teamId": LEAD, "message": message}, t),
            event(
                3 + 2 * n,
                "team/message/delivered",
                {"messageId": f"m{n}", "targetId": MATE},
                t + 10,
            ),
        ]
        mate = [
            event(2 * n, "turn/start", {"turn": f"w{n}"}, t + 20),
            event(2 * n + 1, "turn/end", {"turn": f"w{n}"}, t + 50),
        ]
        return [
            (self.lead_log, frame(b"".join(line(e) for e in lead)), [f"m{n}"]),
            (self.mate_log, frame(b"".join(line(e) for e in mate)), [f"w{n}"]),
        ]

    def run(self) -> None:
        try:
            for n in range(FRAMES):
                for k, (path, data, ids) in enumerate(self.frames(n)):
                    split = SPLITS[(n + k) % len(SPLITS)] if (n + k) % 3 == 0 else 0
                    if split is None:
                        split = len(data) // 2
                    with open(path, "ab") as f:
                        if split:
                            f.write(data[:split])
                            f.flush()
                            self.halves += 1
                            time.sleep(PAUSE_S)  # the panel polls a torn frame now
                        with self.lock:
                            self.allowed.update(ids)
                        f.write(data[split:])
                time.sleep(0.02)
        except BaseException as exc:  # reported by the test
            self.error = exc

    def snapshot(self) -> set[str]:
        with self.lock:
            return set(self.allowed)


def seen_in_json(data: dict[str, Any]) -> set[str]:
    return {
        span["id"]
        for lane in data["lanes"]
        for span in lane["spans"]
        if re.fullmatch(r"[mw]\d+", span["id"])
    }


class _Drawn(HTMLParser):
    """A board's marks: the messages drawn alone or listed by a cluster, and the long
    runs drawn as one cluster (its lane and range) that list no ids."""

    def __init__(self) -> None:
        super().__init__()
        self.lane: str | None = None
        self.ids: set[str] = set()
        self.runs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        if "lane" in classes and "data-lane" in a:
            self.lane = a["data-lane"]
        if a.get("data-msg"):
            self.ids.add(a["data-msg"])
        if "cluster" in classes:
            if "data-msgs" in a:
                self.ids.update(a["data-msgs"].split())
            elif self.lane is not None:
                self.runs.append((self.lane, a["data-from"], a["data-to"]))


def seen_in_html(text: str, client: httpx.Client) -> set[str]:
    """Messages drawn as marks, or held by a cluster of marks too crowded to draw apart
    (a long run's, as a user opens it: the list of what it holds)."""
    drawn = _Drawn()
    drawn.feed(text)
    seen = set(drawn.ids)
    for lane, start, end in drawn.runs:
        items = client.get(
            "/panel/items", params={"session": LEAD, "lane": lane, "from": start, "to": end}
        )
        assert items.status_code == 200, items.text[:300]
        listed = _Drawn()
        listed.feed(items.text)
        assert listed.ids, f"a cluster on {lane} from {start} to {end} lists nothing"
        seen |= listed.ids
    return {m for m in seen if re.fullmatch(r"m\d+", m)}


def test_polling_while_frames_are_appended(server: tuple[str, Path, Path]) -> None:
    base, lead_log, mate_log = server
    writer = Writer(lead_log, mate_log)
    statuses: dict[int, int] = {}
    ever_seen: set[str] = set()
    q = {"session": LEAD}
    hx = {"HX-Request": "true"}
    with httpx.Client(base_url=base + PREFIX, timeout=10) as client:
        etag, version = "", ""
        writer.start()
        polls = 0
        while writer.is_alive() or polls < 5:
            answers: list[tuple[httpx.Response, set[str]]] = []
            timeline = client.get("/api/timeline", params=q, headers={"If-None-Match": etag})
            if timeline.status_code == 200:
                etag = timeline.headers["etag"]
                answers.append((timeline, seen_in_json(timeline.json())))
            else:
                answers.append((timeline, set()))
            board = client.get("/panel/board", params={**q, "v": version}, headers=hx)
            if board.status_code == 200:
                version = re.search(r'id="board-version" name="v" value="([^"]+)"', board.text)[1]  # type: ignore[index]
            answers.append((board, seen_in_html(board.text, client)))
            if polls % 5 == 0:
                page = client.get("/panel", params=q)
                answers.append((page, seen_in_html(page.text, client)))
            allowed = writer.snapshot()  # read after the answers: a superset of theirs
            for response, seen in answers:
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                assert response.status_code in (200, 204, 304), response.text[:300]
                assert seen <= allowed, f"half-written frame shown: {sorted(seen - allowed)}"
                ever_seen |= seen
            polls += 1
        writer.join()
        assert writer.error is None
        expected = {f"m{n}" for n in range(FRAMES)} | {f"w{n}" for n in range(FRAMES)}
        deadline = time.monotonic() + 10
        while True:  # every complete frame eventually shows
            final = client.get("/api/timeline", params=q)
            assert final.status_code == 200
            if seen_in_json(final.json()) == expected or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert seen_in_json(final.json()) == expected
        board = client.get("/panel/board", params=q, headers=hx)
        assert seen_in_html(board.text, client) == {f"m{n}" for n in range(FRAMES)}
    assert writer.halves >= 20
    assert statuses.get(304, 0) + statuses.get(204, 0) > 0  # unchanged polls were cheap
    assert sum(statuses.values()) > 100
    assert len(ever_seen) > FRAMES  # the polls watched it grow, not just the end


def test_oversized_and_odd_requests_to_the_real_server(server: tuple[str, Path, Path]) -> None:
    """What uvicorn itself sees first: long URLs and headers are a 4xx (or a closed
    connection), never a 5xx, and the server keeps serving afterwards."""
    base, _, _ = server
    url = f"{base}{PREFIX}/api/timeline"
    with httpx.Client(timeout=10) as client:
        for size in (5_000, 60_000):
            response = client.get(f"{url}?session={LEAD}&pad={'a' * size}")
            assert 400 <= response.status_code < 500, (size, response.status_code)
            assert "Traceback" not in response.text
        status = _raw_status(base, f"{PREFIX}/api/timeline?session={LEAD}&pad={'a' * 1_000_000}")
        assert status is None or 400 <= status < 500, status
        try:
            response = client.get(url, params={"session": LEAD}, headers={"X-Pad": "a" * 200_000})
            assert response.status_code < 500
        except httpx.TransportError:
            pass
        raw = client.get(f"{base}{PREFIX}/api/messages/..%2F..%2Fetc%2Fpasswd?session={LEAD}")
        assert raw.status_code == 400
        assert client.get(url, params={"session": LEAD}).status_code == 200


def _raw_status(base: str, target: str) -> int | None:
    """The status of a request too long for an HTTP client to send (None: hung up)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        try:
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            head = sock.recv(64)
        except OSError:
            return None
    match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    return int(match[1]) if match else None
