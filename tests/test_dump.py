"""`dsh-task-gantt events`: the decoded log as JSON lines, faithful and torn-tail aware."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import orjson

from dsh_task_gantt.logs.dump import dump_events
from tests.kit.logwriting import batch, event, frame, header, line, write_session, zstd_log


def dump(root: Path, sid: str) -> tuple[int, bytes, str]:
    out, err = io.BytesIO(), io.StringIO()
    code = dump_events(root, sid, out, err)
    return code, out.getvalue(), err.getvalue()


def test_header_first_then_every_event_byte_for_byte(tmp_path: Path) -> None:
    evs = [event(i, "user/message", {"text": 'é\u2028 "quoted"', "n": 1.50}) for i in range(40)]
    path = write_session(tmp_path, "s", evs, per_frame=7)
    code, out, err = dump(tmp_path, "s")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert orjson.loads(lines[0]) == header("s")
    assert [orjson.loads(x)["seq"] for x in lines[1:]] == list(range(40))
    # Exactly the bytes the writer wrote, across all frames.
    assert out == line(header("s")) + batch(evs)
    assert path.exists()


def test_skipped_lines_and_a_torn_tail_are_reported_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "--p--" / "s" / "session.v4.jsonl.zstd"
    path.parent.mkdir(parents=True)
    torn = frame(batch([event(9)]))
    path.write_bytes(
        zstd_log([line(header("s")), b"oops\n[1]\n" + line(event(0)) + b'{"type":2}\n']) + torn[:-5]
    )
    code, out, err = dump(tmp_path, "s")
    assert code == 0
    assert len(out.splitlines()) == 2
    assert err.splitlines() == [
        "skipped 3 lines that are not valid JSON",
        f"stopped before a torn last frame ({len(torn) - 5} bytes): a writer may be mid-append",
    ]


def test_plain_log_with_a_torn_line(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", [event(0)], plain=True)
    with path.open("ab") as f:
        f.write(b'{"type":"turn/st')
    code, out, err = dump(tmp_path, "s")
    assert code == 0 and len(out.splitlines()) == 2
    assert err == "stopped before a torn last line (16 bytes): a writer may be mid-append\n"


def test_garbage_is_reported_and_exit_code_1(tmp_path: Path) -> None:
    path = write_session(tmp_path, "s", [event(0)])
    with path.open("ab") as f:
        f.write(b"NOT A FRAME" + frame(line(event(1))))
    code, out, err = dump(tmp_path, "s")
    assert code == 1 and len(out.splitlines()) == 2
    assert err.startswith("stopped at data that is not part of a log") and err.count("\n") == 1


def test_unknown_session_is_exit_2_with_one_line(tmp_path: Path) -> None:
    for sid in ["nobody", "../etc", ".."]:
        code, out, err = dump(tmp_path, sid)
        assert code == 2 and out == b"" and err.count("\n") == 1 and "Traceback" not in err


def test_the_cli_command(tmp_path: Path) -> None:
    write_session(tmp_path, "s", [event(0), event(1)], per_frame=1)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_task_gantt.cli",
            "events",
            "--sessions-root",
            str(tmp_path),
            "--session",
            "s",
        ],
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert [orjson.loads(x)["type"] for x in run.stdout.splitlines()] == [
        "session",
        "turn/start",
        "turn/start",
    ]
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_task_gantt.cli",
            "events",
            "--sessions-root",
            str(tmp_path),
            "--session",
            "x",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
