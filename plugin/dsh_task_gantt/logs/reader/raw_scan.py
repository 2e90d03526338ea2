"""Every complete raw line of a log from its start (the ``events`` dump, the header)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dsh_task_gantt.events import SessionHeader, header_from_line
from dsh_task_gantt.logs.reader.units import Progress, is_zstd_path, units


@dataclass(slots=True)
class RawScan:
    """Every complete raw line of a log from the start, for a faithful dump.

    Iterate :meth:`lines`; afterwards ``torn_tail_bytes`` and ``garbage`` say how
    the data ended. Opening errors raise ``OSError`` (the caller maps them).
    """

    path: Path
    torn_tail_bytes: int = 0
    garbage: str | None = None

    def lines(self) -> Iterator[bytes]:
        with open(self.path, "rb") as f:
            progress = Progress(end=0)
            for unit in units(f, is_zstd_path(self.path), progress, None):
                for line in unit.lines:
                    if line and not line.isspace():
                        yield line
            self.torn_tail_bytes = progress.torn_tail_bytes
            self.garbage = progress.garbage


def read_header(path: Path) -> SessionHeader | None:
    """Only the header line of a log (decodes the first frame or line, not the rest)."""
    scan = RawScan(path)
    try:
        for line in scan.lines():
            return header_from_line(line)
    except OSError:
        return None
    return None
