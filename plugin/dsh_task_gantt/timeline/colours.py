"""The lanes' colours: the one place a lane colour is chosen (the board's CSS and the
timeline JSON both come from here)."""

from __future__ import annotations

#: Lane colours: (design-system token, light-skin fallback), assigned by position.
PALETTE: tuple[tuple[str, str], ...] = (
    ("--dsw-alias-state-business-primary", "rgb(65,118,230)"),
    ("--dsw-alias-state-success-primary", "rgb(34,197,94)"),
    ("--dsw-alias-state-warn-primary", "rgb(245,158,11)"),
    ("--dsw-alias-state-error-primary", "rgb(236,19,19)"),
    ("--dsw-alias-state-idle-primary", "rgb(212,212,212)"),
)
#: Text on a filled lane colour.
ON_COLOR: tuple[str, str] = ("--dsw-alias-label-primary-inverted", "rgb(255,255,255)")
#: The ``unassigned`` lane's own neutral colour (takes no palette slot).
UNASSIGNED_COLOR: tuple[str, str] = ("--dsh-gantt-unassigned", "rgb(148,163,184)")
