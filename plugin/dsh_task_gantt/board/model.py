"""The board's values: frozen dataclasses the templates draw (no arithmetic in them).

Times are epoch ms; ``t``/``d`` fields are seconds from the board's origin (its extent
start), which the stylesheet turns into positions through the chart's ``--span``: a
mark's markup does not change when the extent grows, the scale changes or "now" moves.
"""

from __future__ import annotations

import weakref
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..plurals import counted as counted  # re-exported: the panel takes it from here
from ..timetext import duration_text, format_time
from .tokens import TOKEN_KEYS, tokens_text, tokens_title

#: Track width assumed when the browser did not say (a 400 px sidebar minus the names).
DEFAULT_TRACK_PX = 300
#: The narrowest window a view may zoom to (the browser reads it from the board).
MIN_WINDOW_MS = 2_000


#: A cluster lists its messages' ids up to this many; a longer run of one lane's marks
#: says what it holds by its time range alone (see ``Cluster.listed_ids``).
CLUSTER_IDS_LISTED = 16


@dataclass(frozen=True, slots=True)
class View:
    """The time window the user looks at; ``None`` ends mean fit-all."""

    start: int | None = None
    end: int | None = None
    #: Keep the window's width but slide it to "now" on every live update.
    follow: bool = False
    #: Visible track width in px (the browser reports it), for ticks and mark spacing.
    track_px: int = DEFAULT_TRACK_PX
    #: The list view is on (only then are its items drawn), and which page (0: newest).
    listing: bool = False
    list_page: int = 0
    #: The list holds each turn too (lane, length, tokens); off, only messages, prompts
    #: and task moves.
    list_turns: bool = False
    #: Which task rows are drawn (0: the newest); a long run has hundreds of tasks.
    task_page: int = 0
    #: The replayed moment (epoch ms): rows say what held then; ``None``: the present.
    at: int | None = None


@dataclass(frozen=True, slots=True)
class Tick:
    left: float
    ms: int
    t: float  # seconds from the origin
    label: str  # UTC fallback; the browser rewrites it in local time
    fmt: str  # "hms" | "hm" | "dhm" | "d"
    #: "start"/"end": so close to an end of the track that a centred label would be cut
    #: (under the names, or past the edge); the label then sits on that side of its tick.
    align: str = ""


@dataclass(frozen=True, slots=True)
class Tone:
    """How a lane's colour is drawn: a palette class and a pattern variant."""

    css: str  # c0..c4 (palette slots), cu (unassigned), cx (system), cp (human prompt)
    variant: int  # 0 solid, 1 hatched, 2 dotted, 3 outlined (lanes 6+, 11+, 16+)

    @property
    def classes(self) -> str:
        return f"{self.css} v{self.variant}"


#: The unassigned lane's and an unknown owner's neutral colour (one object: a row or
#: segment names it).
UNASSIGNED_TONE = Tone("cu", 0)


@dataclass(frozen=True, slots=True)
class Party:
    name: str
    tone: Tone


@dataclass(frozen=True, slots=True)
class TurnBar:
    start: int
    end: int  # clamped to now / extent end when open
    open: bool
    t: float  # seconds from the origin
    d: float  # seconds long (an open bar reaches the chart's --open-t instead)
    #: When the turn ended (unclamped); ``None`` while it runs.
    closed: int | None = None
    #: The turn's token use, as the timeline's ``Tokens`` values in TOKEN_KEYS order
    #: (``None``: no usage). Words are made only when shown.
    tokens: tuple[Any, ...] | None = None

    @property
    def label(self) -> str:
        # Written only for the bars drawn alone: most turns of a long team are drawn in
        # groups, and formatting two times for each of thousands of turns showed up.
        ended = format_time(self.closed) if self.closed is not None else "now"
        spent = self.tokens_text
        return f"turn {format_time(self.start)}–{ended}" + (f" · {spent}" if spent else "")

    @property
    def tokens_text(self) -> str | None:
        if self.tokens is None:
            return None
        return tokens_text(dict(zip(TOKEN_KEYS, self.tokens, strict=True)))


@dataclass(frozen=True, slots=True)
class Mark:
    dom_id: str
    msg_id: str
    kind: str  # "sent" | "received" | "prompt" | "system"
    glyph: str
    row: int
    ms: int
    time_text: str
    tone: Tone  # the other party's colour (or the prompt / system colour)
    t: float  # seconds from the origin
    sender: Party
    recipient: Party | None
    label: str  # aria prefix: "message from A to B" (the time is appended)
    preview: str
    #: Sent but not delivered yet (``deliveredAt`` is null): drawn hollow and said so.
    pending: bool = False

    @property
    def note(self) -> str:
        """Said after the time in the mark's label and tooltip."""
        return ", delivery pending" if self.pending else ""


@dataclass(frozen=True, slots=True)
class Segment:
    left: float
    width: float
    start: int
    end: int
    open: bool
    owner: str
    tone: Tone
    label: str
    t: float
    d: float


@dataclass(frozen=True, slots=True)
class Transition:
    left: float
    ms: int
    time_text: str
    action: str
    glyph: str
    actor: str
    status: str
    revision: int | None
    t: float


@dataclass(frozen=True, slots=True)
class TaskPhase:
    """One phase of a task's life on its row (``task-phase--<kind>``)."""

    kind: str  # blocked | ready | in-progress | completed | deleted
    t: float
    d: float
    #: Runs on to now (the task is still so): it reaches --open-t in CSS.
    open: bool
    #: A finished task's last phase: a short cap, not a bar to the end of time.
    cap: bool
    #: The owner's colour (in progress only).
    tone: Tone | None
    label: str


@dataclass(frozen=True, slots=True)
class TaskOverlap:
    """A stretch in which another task in progress had overlapping write scopes."""

    t: float
    d: float
    open: bool
    other: str
    label: str


@dataclass(frozen=True, slots=True)
class TaskLink:
    """Finish to start: from a blocker's completion (``up`` rows above) to the moment
    this task became ready."""

    t: float
    d: float
    up: int
    #: The blocker's row position (drawn only while that row is drawn too).
    source: int
    label: str


@dataclass(frozen=True, slots=True)
class TaskRow:
    dom_id: str
    task_id: str
    subject: str
    status: str
    owner: str
    tone: Tone
    #: The faint line from creation to completion (or now): the task's whole life.
    life_left: float
    life_width: float
    life_t: float
    life_d: float
    #: The life runs on to now (the task is not finished): it reaches --open-t in CSS.
    life_open: bool
    segments: tuple[Segment, ...]
    transitions: tuple[Transition, ...]
    label: str
    #: The task's phases (empty for a timeline without them: segments are drawn then).
    phases: tuple[TaskPhase, ...] = ()
    #: Short texts on the one-line row: its state now and its owner.
    state_text: str = ""
    #: Blockers not completed now (the chip's count) and every blocker it lists.
    open_blockers: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    overlaps: tuple[TaskOverlap, ...] = ()
    links: tuple[TaskLink, ...] = ()
    #: On the chain that decided the team's last completion.
    critical: bool = False


@dataclass(frozen=True, slots=True)
class TurnGroup:
    """Turns closer than a pixel or two at the board's scale: one bar with a count."""

    t: float
    d: float
    start: int
    end: int
    count: int

    @property
    def label(self) -> str:
        return f"{self.count} turns"


@dataclass(frozen=True, slots=True)
class Cluster:
    """Marks too crowded for their rows: one chip with a count in the counterparts' colours."""

    t: float
    row: int
    start: int
    end: int
    count: int
    tones: tuple[Tone, ...]
    marks: tuple[Mark, ...]
    #: Its marks are every mark of its lane from ``start`` to ``end`` (a run on one row):
    #: a message's mark at a time in that range is in it, so its range says what it holds.
    run: bool = False

    @property
    def listed_ids(self) -> str | None:
        """Its messages' ids as the chip lists them (``data-msgs``), or ``None`` for a run
        longer than CLUSTER_IDS_LISTED: its range says what it holds, and a day's board
        zoomed out has runs of thousands (every id in every changed chunk, at each poll,
        was most of a poll's body)."""
        if self.run and self.count > CLUSTER_IDS_LISTED:
            return None
        return " ".join(mark.msg_id for mark in self.marks)


@dataclass(frozen=True, slots=True)
class LaneChunk:
    """A lane's turns and marks in one time chunk (its content depends on them only)."""

    dom_id: str
    index: int
    turns: tuple[TurnBar | TurnGroup, ...]
    marks: tuple[Mark | Cluster, ...]


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class LaneMessages:
    """What one lane's marks say of the messages, in the order the marks first say it."""

    #: The marks read (held: while this lives no other object has their ids).
    marks: Sequence[Mark]
    #: Each key and the kind of its first mark on the lane, in the order of those marks,
    #: and the place of each one's first mark (ascending).
    first: dict[str, str]
    first_at: array[int]
    #: The keys with a sent mark on the lane (by their first sent mark), and their places.
    sent: dict[str, None]
    sent_at: array[int]
    #: The keys whose first mark is a prompt, and their places.
    prompts: dict[str, None]
    prompts_at: array[int]
    #: The version this one only adds keys to (weakly: versions do not hold each other),
    #: and how many keys of ``first`` and ``sent`` that version had: the team's count
    #: is carried on by the keys added.
    grew_from: weakref.ref[LaneMessages] | None = None
    grown_first: int = 0
    grown_sent: int = 0


@dataclass(frozen=True, slots=True)
class LaneRow:
    dom_id: str
    lane_id: str
    kind: str
    name: str
    index: int
    tone: Tone
    status: str | None
    phase: str | None
    channel: str
    error: str | None
    #: One short word under the name: running/idle, else the member's phase, else a
    #: log that could not be read or is empty.
    state_text: str
    turns: tuple[TurnBar, ...]
    marks: tuple[Mark, ...]
    rows: int  # mark rows used (1..MARK_ROWS), for the lane height
    #: What is drawn: the lane's chunks in the drawn range, crowded items aggregated.
    chunks: tuple[LaneChunk, ...] = ()
    #: What the member was asked to do (its catalog, descriptor or member label).
    label: str | None = None
    #: Its token use in words (``None``: no usage at all).
    tokens_text: str | None = None
    #: What its marks say of the messages (the board's count; made of the lane's read,
    #: which every width shares). Derived from ``marks``: not compared.
    messages: LaneMessages | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ListItem:
    ms: int
    time_text: str
    kind: str  # "message" | "prompt" | "system" | "task" | "turn"
    text: str
    msg_id: str | None
    task_id: str | None
    sender: Party | None
    recipient: Party | None
    pending: bool = False
    #: What the item stands for, stable while the list grows (its element's id is made
    #: from it, so a poll appends new items rather than sending the list again).
    key: str = ""
    #: A turn item's lane and turn (the words are made only for the items drawn).
    lane: Party | None = None
    turn: TurnBar | None = None

    @property
    def duration_text(self) -> str:
        """How long the turn took; empty while it runs (the item then says so, and
        does not change with the clock)."""
        turn = self.turn
        if turn is None or turn.closed is None:
            return ""
        return duration_text(turn.closed - turn.start)

    @property
    def tokens_text(self) -> str | None:
        return self.turn.tokens_text if self.turn is not None else None

    @property
    def tokens_title(self) -> str | None:
        if self.turn is None or self.turn.tokens is None:
            return None
        return tokens_title(dict(zip(TOKEN_KEYS, self.turn.tokens, strict=True)))


@dataclass(frozen=True, slots=True)
class TaskTime:
    task_id: str
    subject: str
    blocked: str
    ready: str
    working: str


@dataclass(frozen=True, slots=True)
class MemberTime:
    name: str
    in_turns: str
    idle: str
    held: int


@dataclass(frozen=True, slots=True)
class WhereTime:
    upto: int
    upto_text: str
    tasks: tuple[TaskTime, ...]
    tasks_more: int
    members: tuple[MemberTime, ...]
    #: "task-1 → task-3", its length and the team's span (empty without a path).
    path: str
    path_length: str
    span: str


@dataclass(frozen=True, slots=True)
class Board:
    empty: bool
    live: bool
    partial: bool
    #: A member's log could not be read (it may be slow or locked now): the panel keeps
    #: polling, frozen or not, and draws the team once its logs are read.
    unread: bool
    extent_start: int
    extent_end: int
    window_start: int
    window_end: int
    follow: bool
    zoom: float  # track width / visible width
    scroll: float  # window start as a fraction of the extent
    now: int | None
    now_left: float | None
    frozen_at: int | None
    frozen_text: str | None
    tick_fmt: str
    ticks: tuple[Tick, ...]
    lanes: tuple[LaneRow, ...]
    tasks: tuple[TaskRow, ...]
    #: The list's items (only when the list view is on: empty otherwise).
    items: tuple[ListItem, ...]
    notes: tuple[str, ...]
    message_count: int
    track_px: int  # the visible track width this layout assumed
    #: Where open spans end, as a percentage of the extent ("now" while live, the
    #: frozen end otherwise): the board sets it once and open bars reach it in CSS, so
    #: a lane's markup does not change while only the clock moves.
    open_end_left: float = 100.0
    #: The live edge ("now" plus headroom) a following window slides to; the extent end
    #: is rounded up from it in coarse steps so positions stay put from poll to poll.
    live_end: int | None = None
    #: Seconds of the extent, and where open spans end, in seconds from the origin: the
    #: chart's --span and --open-t, which place every mark and bar.
    span_s: float = 0.0
    open_t: float = 0.0
    now_t: float | None = None
    #: The list view's page (0: the newest) and how many pages there are.
    list_page: int = 0
    list_pages: int = 1
    #: The items on that page, when the list view is on (none are drawn otherwise).
    page_items: tuple[ListItem, ...] = ()
    listing: bool = False
    list_turns: bool = False
    #: The time range whose chunks are drawn (``None``: all of them); the browser asks
    #: for the board again when the user scrolls past it.
    drawn_from: int | None = None
    drawn_to: int | None = None
    #: The task rows drawn (``tasks`` holds them all), and how many are left out before
    #: and after them (a row at each end pages to them).
    task_rows: tuple[TaskRow, ...] = ()
    tasks_before: int = 0
    tasks_after: int = 0
    task_page: int = 0
    #: "Where the time went" under the tasks (``None``: a timeline without phases).
    where: WhereTime | None = None
    #: The team's token use in words and in full (``None``: no usage at all).
    tokens_text: str | None = None
    tokens_title: str | None = None

    @property
    def zoomed(self) -> bool:
        """Whether the window shows less than the whole extent."""
        return self.zoom > 1

    @property
    def min_window_ms(self) -> int:
        """The narrowest window a view may zoom to: the browser's zoom stops there."""
        return MIN_WINDOW_MS

    @property
    def counts_text(self) -> str:
        """``5 lanes · 6 tasks · 16 messages`` for the status line."""
        return " · ".join(
            (
                counted(len(self.lanes), "lane"),
                counted(len(self.tasks), "task"),
                counted(self.message_count, "message"),
            )
        )

    @property
    def notes_text(self) -> str:
        return counted(len(self.notes), "note")

    @property
    def done_rows(self) -> int:
        """Completed tasks among the rows drawn: while live they fold into one row."""
        return sum(1 for row in self.task_rows if row.status == "completed")

    @property
    def tasks_before_text(self) -> str:
        return counted(self.tasks_before, "earlier task")

    @property
    def tasks_after_text(self) -> str:
        return counted(self.tasks_after, "later task")
