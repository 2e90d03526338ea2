"""The wheel, installed in a fresh venv, serves the live demo from outside the source tree."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "/plugins/dsh-task-gantt"


def _run(cmd: list[str], cwd: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240, **kw)
    assert run.returncode == 0, f"{cmd} failed:\n{run.stdout}\n{run.stderr}"
    return run


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("hatchling", reason="building the wheel offline needs hatchling (.[test])")
    out = tmp_path_factory.mktemp("dist")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        cwd=out,
    )
    (built,) = out.glob("dsh_task_gantt-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv that holds only the wheel and borrows this interpreter's dependencies."""
    env_dir = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], cwd=env_dir)
    # starlette, zstandard, … come from the running interpreter (which may itself be a
    # venv, so --system-site-packages would not do). Plain path lines: the .pth files
    # there, such as an editable install of this repository, are not processed.
    (site_packages,) = env_dir.glob("lib/python3*/site-packages")
    borrowed = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site_packages / "borrowed-dependencies.pth").write_text("\n".join(borrowed) + "\n")
    _run(
        [sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"), "install",
         "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
        cwd=env_dir,
    )  # fmt: skip
    return env_dir


def _outside_env(cwd: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DSH_HOME")}
    env["HOME"] = str(cwd)  # a default sessions root that is not the developer's
    return env


def test_the_wheel_ships_templates_static_fixtures_and_the_manifest(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("templates", "static", "fixtures/sessions", "fixtures/specs"):
        repo_files = {
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        assert repo_files, f"{folder} is empty in the repository"
        missing = {f for f in repo_files if f"dsh_task_gantt/{f}" not in names}
        assert not missing, f"missing from the wheel: {sorted(missing)[:5]}"
    shipped = json.loads(zipfile.ZipFile(wheel).read("dsh_task_gantt/manifest.json"))
    assert shipped == json.loads((ROOT / "manifest.json").read_text())
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_the_installed_package_is_the_wheel_and_its_entry_point_resolves(
    venv: Path, tmp_path: Path
) -> None:
    probe = """
import json, importlib.metadata as md
import dsh_task_gantt
from dsh_task_gantt.resources import resource_path
(ep,) = [e for e in md.entry_points(group="dsh.plugins") if e.name == "dsh-task-gantt"]
plugin = ep.load()
manifest = json.loads(resource_path("manifest.json").read_text())
print(json.dumps({
    "file": dsh_task_gantt.__file__,
    "version": dsh_task_gantt.__version__,
    "dist_version": md.version("dsh-task-gantt"),
    "entry": ep.value, "has_apply": callable(getattr(plugin, "apply", None)),
    "manifest": manifest,
    "resources": [str(resource_path(n)) for n in ("static", "templates", "fixtures")],
}))
"""
    run = _run(
        [str(venv / "bin" / "python"), "-c", probe], cwd=tmp_path, env=_outside_env(tmp_path)
    )
    seen = json.loads(run.stdout)
    package = Path(seen["file"]).parent
    assert package.is_relative_to(venv) and not package.is_relative_to(ROOT)
    assert all(Path(p).is_relative_to(package) for p in seen["resources"]), seen["resources"]
    assert seen["has_apply"] and seen["entry"] == "dsh_task_gantt.plugin"
    assert seen["version"] == seen["dist_version"] == seen["manifest"]["version"]
    assert seen["manifest"]["entry"] == "dsh_task_gantt.plugin:apply"
    version = _run([str(venv / "bin" / "dsh-task-gantt"), "--version"], cwd=tmp_path)
    assert version.stdout.strip() == f"dsh-task-gantt {seen['version']}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture()
def demo_server(venv: Path, tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[bytes]]]:
    port = _free_port()
    proc = subprocess.Popen(
        [str(venv / "bin" / "dsh-task-gantt"), "serve", "--demo", "--port", str(port)],
        cwd=tmp_path,
        env={**_outside_env(tmp_path), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        copy: Path | None = None
        for raw in proc.stderr:
            line = raw.decode(errors="replace")
            found = re.search(r"demo teams copied to (\S+)", line)
            copy = Path(found.group(1)) if found else copy
            if "open http" in line:
                break
        assert copy is not None, "serve --demo did not print where its copy is"
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=5).close()
                break
            except OSError:
                assert proc.poll() is None, "the server exited"
                assert time.monotonic() < deadline, "the server did not come up"
                time.sleep(0.2)
        yield base, copy, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _spans(base: str, session: str) -> tuple[bool, int]:
    status, body = _get(f"{base}{PREFIX}/api/timeline?session={session}")
    assert status == 200, body[:200]
    data = json.loads(body)
    return data["live"], sum(len(lane["spans"]) for lane in data["lanes"])


def test_serve_demo_from_the_wheel_shows_a_live_team_that_grows(
    demo_server: tuple[str, Path, subprocess.Popen[bytes]], venv: Path
) -> None:
    base, copy, proc = demo_server
    assert copy.is_dir() and not copy.is_relative_to(ROOT)

    status, page = _get(base + "/")
    assert status == 200
    html = page.decode()
    links = re.findall(r'href="/plugins/dsh-task-gantt/panel\?session=([A-Za-z0-9._-]+)"', html)
    assert len(links) >= 3, "the start page does not list the bundled teams"
    live_lead = links[0]
    # The first card is the live team's; its summary (fetched as the page does) says so.
    status, card = _get(f"{base}{PREFIX}/start/card?session={live_lead}")
    assert status == 200
    first_row = card.decode()
    assert "badge live" in first_row and "active now" in first_row, "the live team is not first"

    status, panel = _get(f"{base}{PREFIX}/panel?session={live_lead}")
    assert status == 200 and b"<html" in panel.lower()

    htmx = sorted((venv / "lib").glob("python3*/site-packages/dsh_task_gantt/static/htmx-*.min.js"))
    if htmx:
        status, script = _get(f"{base}{PREFIX}/static/{htmx[0].name}")
        assert status == 200 and script == htmx[0].read_bytes()

    live, before = _spans(base, live_lead)
    assert live
    time.sleep(6)
    live, after = _spans(base, live_lead)
    assert live and after > before, f"the live team did not grow ({before} → {after} spans)"

    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 128 + signal.SIGINT
    assert not copy.exists(), "the demo's temporary copy outlived the server"
    if not htmx:
        pytest.skip(
            "everything else passed; no vendored htmx in the package (static/htmx-*.min.js)"
        )
