"""DSH's own team projection, packed from npm, run by Node over a lead log's events.

The package (``@deepseek-ai/dsh-experimental-agent-team``, MIT) is packed with
``npm pack`` into ~/.cache/dsh-task-gantt-dev/agent-team once; its runtime needs
``zod`` (installed from npm beside it) and ``@deepseek-ai/dsh-brand``, which is not
published and only brands strings at the type level: an identity stub stands in.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

PACKAGE = "@deepseek-ai/dsh-experimental-agent-team@0.1.5-alpha.2"
CACHE = Path.home() / ".cache" / "dsh-task-gantt-dev" / "agent-team"
SCRIPT = Path(__file__).with_name("dsh_projection.mjs")
#: The oldest Node the package's ES module syntax and zod 4 run on here.
NODE_MAJOR = 20
_STUB = "// Identity stub: DSH's brand package only brands strings.\n" \
    "export function brandString(value) { return value; }\n"  # fmt: skip


def _run(args: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def node_problem() -> str | None:
    """Why DSH's projection cannot run here, or ``None`` when Node and npm can."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "Node and npm are not on PATH"
    version = _run([node, "--version"], Path.cwd()).stdout.strip().lstrip("v")
    major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
    if major < NODE_MAJOR:
        return f"Node {version} is older than {NODE_MAJOR}"
    return None


def package_dir() -> Path | str:
    """The unpacked package, ready to import; or why it could not be had (a reason)."""
    problem = node_problem()
    if problem:
        return problem
    pkg = CACHE / "package"
    ready = pkg / "node_modules" / "zod" / "package.json"
    brand = pkg / "node_modules" / "@deepseek-ai" / "dsh-brand"
    if (pkg / "lib" / "types" / "projection.js").is_file() and ready.is_file() and brand.is_dir():
        return pkg
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        packed = _run(["npm", "pack", PACKAGE], CACHE)
        if packed.returncode != 0:
            return f"npm pack {PACKAGE} failed (no registry?): {packed.stderr.strip()[-300:]}"
        with tarfile.open(CACHE / packed.stdout.strip().splitlines()[-1]) as tar:
            tar.extractall(CACHE, filter="data")
        deps = CACHE / "deps"
        deps.mkdir(exist_ok=True)
        (deps / "package.json").write_text('{"name": "deps", "private": true}\n')
        wanted = orjson.loads((pkg / "package.json").read_bytes())["dependencies"]["zod"]
        installed = _run(["npm", "install", "--ignore-scripts", f"zod@{wanted}"], deps)
        if installed.returncode != 0:
            return f"npm install zod failed: {installed.stderr.strip()[-300:]}"
        shutil.copytree(deps / "node_modules" / "zod", ready.parent, dirs_exist_ok=True)
        brand.mkdir(parents=True, exist_ok=True)
        (brand / "package.json").write_text(
            '{"name": "@deepseek-ai/dsh-brand", "version": "0.0.0-identity-stub", '
            '"type": "module", "exports": {".": "./index.js"}}\n'
        )
        (brand / "index.js").write_text(_STUB)
    except (OSError, subprocess.SubprocessError, tarfile.TarError, KeyError) as exc:
        return f"could not pack {PACKAGE}: {exc}"
    return pkg


def project(pkg: Path, root_id: str, events: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """DSH's projected team state after ``events`` (``(type, data)`` in log order)."""
    lines = [orjson.dumps({"rootId": root_id})]
    lines += [orjson.dumps({"type": t, "data": d}) for t, d in events]
    done = subprocess.run(
        ["node", str(SCRIPT), str(pkg)],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=120,
        check=True,
    )
    state: dict[str, Any] = orjson.loads(done.stdout)
    return state
