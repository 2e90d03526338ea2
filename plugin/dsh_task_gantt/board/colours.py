"""The lane colours as CSS variables, from the timeline's palette (its one source).

``static/colors.css`` is this module's output (``python -m dsh_task_gantt.board.colours``
writes it; a test keeps it equal), and ``panel.css`` only uses the variables.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..resources import resource_path
from ..timeline import ON_COLOR, PALETTE, UNASSIGNED_COLOR

COLOURS_CSS = "colors.css"


def palette_css() -> str:
    """``--c0``… (the palette slots), ``--on`` (text on them), ``--cu`` (unassigned):
    the host's theme token first, the timeline's fallback after it."""
    lines = [
        "/* Generated from timeline/colours.py by python -m dsh_task_gantt.board.colours:",
        "   do not edit (a test keeps it equal). */",
        ":root {",
    ]
    lines += [f"  --c{n}: var({token}, {fallback});" for n, (token, fallback) in enumerate(PALETTE)]
    lines.append(f"  --on: var({ON_COLOR[0]}, {ON_COLOR[1]});")
    lines.append(f"  --cu: var({UNASSIGNED_COLOR[0]}, {UNASSIGNED_COLOR[1]});")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    target = Path(resource_path("static")) / COLOURS_CSS
    target.write_text(palette_css(), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
