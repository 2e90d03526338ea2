"""Sizes of a generated team (``small``, ``medium``, ``large``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Scale:
    """Sizes of a generated team. ``rounds`` of filler work sit between scripted beats."""

    name: str
    extra_teammates: int
    rounds: int
    lead_steps: tuple[int, int]  # filler steps per round on the lead
    mate_steps: tuple[int, int]  # filler steps per round on each teammate
    text_median: int  # assistant text characters
    tool_result_median: int
    message_median: int  # team message body characters
    message_max: int
    batch: tuple[int, int]  # lines per frame


SCALES: dict[str, Scale] = {
    "small": Scale("small", 0, 10, (1, 2), (1, 2), 160, 220, 1800, 8000, (1, 15)),
    "medium": Scale("medium", 3, 40, (10, 20), (4, 8), 400, 500, 1800, 8000, (3, 15)),
    "large": Scale("large", 3, 70, (47, 57), (9, 12), 1200, 1500, 1800, 8000, (3, 15)),
}
