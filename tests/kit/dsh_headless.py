"""Real DSH run headless against the scripted model (tests/kit/scripted_model.py), writing
real session logs into a fresh ``DSH_HOME``.

Two DSHs:

- **npm's 0.1.0-rc.8** (installed by :mod:`tests.kit.dsh_npm`): no agent teams (see
  :data:`NO_TEAM_FROM_NPM`), so it plays the solo story, a lead and a subagent child. Its
  profile needs two patch rows: HMR on (its user-patch watcher wants it; a supported
  ``--patch`` overlay, no edit to DSH's files) and the ``tool-subagent`` row one-shot
  (rc.8's default, ``continuable``, returns at once and the child is cut off when the lead
  ends its turn).
- **a DSH 0.1.1-rc.2 tree built from DSH's repository**, pointed to by
  :data:`TREE_ENV`: agent teams through the patch layer of HOST §9 (:func:`team_patch`).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.kit.dsh_npm import TREE_ENV, built_tree
from tests.kit.scripted_model import ScriptedModel

__all__ = ["TREE_ENV", "built_tree"]  # the built tree is named as tests/kit/dsh_npm.py says
#: What a headless run may take (a team run takes ~7 s here).
RUN_TIMEOUT_S = 240

#: Why no DSH from npm runs an agent team (checked against the registry 2026-12-02).
NO_TEAM_FROM_NPM = (
    "no DSH on npm runs agent teams: @deepseek-ai/dsh@0.1.5-rc.2 depends on packages at "
    "^0.1.5-rc.2 that are not published (dsh-base, dsh-acp-app, dsh-tool-subagent: their "
    "newest is 0.1.0-rc.8 or 0.1.2-alpha.2), and the team packages "
    "(@deepseek-ai/dsh-experimental-agent-team and -tool-agent-team 0.1.5-alpha.2, their "
    "only version) import @deepseek-ai/dsh-subagent/internal, which no published "
    "dsh-subagent (0.0.1-rc.1, 0.1.0-rc.6, 0.1.0-rc.8) exports, and need dsh-brand "
    f"^0.1.5-alpha.2 (unpublished). Set {TREE_ENV} to a DSH 0.1.1-rc.2 tree built from "
    "DSH's repository to run the team test."
)

SOLO_PATCH = """\
# The test's own overlay (a --patch layer; DSH's files are untouched).
# rc.8's user-patch watcher needs HMR, which the headless bundle turns off.
- id: hmr
  disabled: false
# One-shot: the lead waits for its child (rc.8's default returns at once).
- id: tool-subagent
  config:
    provider: spawn
    toolName: subagent
    backgroundMode: one-shot
    maxDepth: 1
"""


def team_patch(tree: Path) -> str:
    """HOST §9's patch layer for agent teams in DSH 0.1.1-rc.2: the subagent control,
    list-agents and report rows off (their tool names clash with the team's), both
    subagent rows one-shot with depth 1, the two team packages inserted (by absolute
    path into the built tree, which resolves their imports from its own workspace)."""
    experimental = tree / "packages" / "experimental"
    return f"""\
- id: tool-subagent-control
  disabled: true
- id: tool-subagent-list-agents
  disabled: true
- id: tool-subagent-report
  disabled: true
- id: tool-subagent
  config:
    provider: spawn
    toolName: subagent
    backgroundMode: one-shot
    maxDepth: 1
- id: tool-subagent-fork
  config:
    provider: fork
    toolName: subagent_fork
    backgroundMode: one-shot
    maxDepth: 1
- insert:
    - id: agent-team
      name: '{experimental / "agent-team" / "lib" / "index.js"}'
    - id: tool-agent-team
      name: '{experimental / "tool-agent-team" / "lib" / "index.js"}'
"""


@dataclass(frozen=True)
class HeadlessRun:
    """One headless run: where its logs are, what DSH printed, how long it took."""

    sessions_root: Path
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def lead_session(self, lead_ids: set[str]) -> str:
        """The lead's session id (the scripted model saw it in DSH's request headers)."""
        found = [
            p.name
            for p in self.sessions_root.glob("*/*")
            if p.name in lead_ids and any(p.glob("session*.jsonl*"))
        ]
        assert len(found) == 1, (found, lead_ids, list(self.sessions_root.glob("*/*")))
        return found[0]


def run_headless(
    node: Path,
    cli: Path,
    env: Mapping[str, str],
    home: Path,
    prompt: str,
    patch: str,
    model: ScriptedModel,
) -> HeadlessRun:
    """``dsh --profile headless --patch <patch> <prompt>`` in a fresh home and workspace."""
    home.mkdir(parents=True, exist_ok=True)
    work = home.parent / "workspace"
    work.mkdir(exist_ok=True)
    patch_file = home.parent / "test-patch.yml"
    patch_file.write_text(patch)
    run_env = {
        **env,
        "DSH_HOME": str(home),
        "DEEPSEEK_BASE_URL": model.base_url,
        "DEEPSEEK_API_KEY": "scripted-model",
    }
    started = time.monotonic()
    done = subprocess.run(
        [
            str(node),
            str(cli),
            "--profile",
            "headless",
            "--patch",
            str(patch_file),
            prompt,
        ],
        cwd=work,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    return HeadlessRun(
        home / "sessions",
        done.returncode,
        done.stdout,
        done.stderr,
        time.monotonic() - started,
    )
