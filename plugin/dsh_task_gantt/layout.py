"""The board's layout, as one import: see the :mod:`board` package for the pieces."""

from __future__ import annotations

from .board.detail import MARK_PX, MARK_ROWS, Scale
from .board.geometry import (
    DEFAULT_FOCUS_WINDOW_MS,
    MAX_TICKS,
    MIN_EXTENT_MS,
    TICK_LABEL_PX,
    TICK_STEPS_MS,
    choose_tick_step,
    make_ticks,
    parse_time_param,
    parse_view,
    quantized_end,
    tick_format,
)
from .board.model import (
    DEFAULT_TRACK_PX,
    MIN_WINDOW_MS,
    Board,
    Cluster,
    LaneChunk,
    LaneRow,
    ListItem,
    Mark,
    Party,
    TaskRow,
    Tick,
    Tone,
    TurnBar,
    TurnGroup,
    View,
)
from .board.view_model import (
    LIST_PAGE,
    BoardPlan,
    find_span_time,
    finish_board,
    layout_board,
    parties,
    plan_board,
)
from .timetext import format_time

__all__ = [
    "DEFAULT_FOCUS_WINDOW_MS", "DEFAULT_TRACK_PX", "LIST_PAGE", "MARK_PX", "MARK_ROWS",
    "MAX_TICKS", "MIN_EXTENT_MS", "MIN_WINDOW_MS", "TICK_LABEL_PX", "TICK_STEPS_MS",
    "Board", "BoardPlan", "Cluster", "LaneChunk", "LaneRow", "ListItem", "Mark", "Party",
    "Scale", "TaskRow", "Tick", "Tone", "TurnBar", "TurnGroup", "View", "choose_tick_step",
    "find_span_time", "finish_board", "format_time", "layout_board", "make_ticks",
    "parse_time_param", "parse_view", "parties", "plan_board", "quantized_end", "tick_format",
]  # fmt: skip
