"""Processes a test started, found from /proc: the panel's server among them."""

from __future__ import annotations

from pathlib import Path


def is_panel_server(pid: int) -> bool:
    """Whether ``pid`` runs ``dsh-task-gantt serve`` (``python -m dsh_task_gantt.cli``)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"dsh_task_gantt.cli" in command and b"serve" in command
