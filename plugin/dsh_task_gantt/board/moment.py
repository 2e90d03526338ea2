"""The team and its task board at one moment: a pure function of a timeline and a time.

Everything comes from the timeline's own data: a task's state at ``at`` is its last
history entry at or before ``at`` (a task with none was not created yet); a lane was in
a turn when one of its turns started at or before ``at`` and had not ended by then, idle
since the end of its last turn otherwise; its last message sent is its latest outgoing
mark at or before ``at``, its last received the latest incoming one delivered by then.
Nothing after ``at`` is read into the answer, so the moment of a timeline equals the
moment of the same timeline cut at ``at``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..memo import Memo
from ..timeline.activity import activity_at
from ..timetext import format_time
from .geometry import as_int, as_map, as_seq, as_str, parse_time_param
from .model import counted
from .tokens import TOKEN_KEYS, add_tokens, tokens_text, tokens_title

#: Event times sent on each side of the moment, so the arrow keys step without asking
#: (each answer centres them on its moment again).
STEP_TIMES = 16
#: The moments a page can name: a date from year 1 to 9999 (the clock's range).
EARLIEST_MS = -62_135_596_800_000
LATEST_MS = 253_402_300_799_999

#: The order statuses are counted in, in the summary (others follow by name).
_STATUS_ORDER = ("pending", "in_progress", "completed", "deleted")
_MESSAGE_KINDS = frozenset({"message", "user-prompt"})


@dataclass(frozen=True, slots=True)
class MessageAt:
    """A lane's last message in one direction: which, when, with whom."""

    msg_id: str
    ms: int
    other: str
    preview: str
    #: The human's prompt (received from "you"), not a member's message.
    prompt: bool = False


@dataclass(frozen=True, slots=True)
class LaneAt:
    lane_id: str
    #: "turn": in a turn since ``since``; "idle": idle since ``since`` (``None``: no turn
    #: ended yet); "none": nothing on this lane yet.
    doing: str
    since: int | None
    sent: MessageAt | None
    received: MessageAt | None
    #: Tokens of the lane's turns ended by then, in TOKEN_KEYS order (``None``: none
    #: with usage; a tuple, so the lane is a key). A turn still running at the moment
    #: is left out: what it spent so far is not dated.
    tokens: tuple[int, ...] | None = None

    @property
    def tokens_text(self) -> str | None:
        if self.tokens is None:
            return None
        return tokens_text(dict(zip(TOKEN_KEYS, self.tokens, strict=True)))

    @property
    def text(self) -> str:
        """What the lane was doing, in words (UTC; the page rewrites times locally)."""
        if self.doing == "turn" and self.since is not None:
            return f"in a turn since {format_time(self.since)}"
        if self.doing == "idle":
            return f"idle since {format_time(self.since)}" if self.since is not None else "idle"
        return "nothing yet"


@dataclass(frozen=True, slots=True)
class TaskAt:
    task_id: str
    #: ``False``: the task's first history entry is after the moment.
    exists: bool
    status: str | None = None
    owner: str | None = None
    revision: int | None = None
    action: str | None = None
    actor: str | None = None
    action_ms: int | None = None
    #: The task's phase then (``ready``, ``blocked``…; ``None`` without phases) and,
    #: blocked, the blockers not completed then.
    phase: str | None = None
    blockers: tuple[str, ...] = ()

    @property
    def status_text(self) -> str:
        if not self.exists:
            return "not created yet"
        if self.phase == "blocked":
            return "blocked by " + ", ".join(self.blockers) if self.blockers else "blocked"
        if self.phase == "ready":
            return "ready"
        return (self.status or "unknown").replace("_", " ")


@dataclass(frozen=True, slots=True)
class Moment:
    at: int
    lanes: tuple[LaneAt, ...]
    tasks: tuple[TaskAt, ...]
    #: Event times nearest the moment: before it, and from it on (the moment itself
    #: when something happened then). One unbroken run of the timeline's event times,
    #: so the browser finds the event before or after any time inside it.
    before: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def at_fmt(self) -> str:
        """How the moment's time is written: to the millisecond when another event
        falls in the same second (a step between them would otherwise change nothing
        that shows), else to the second."""
        second = self.at // 1000
        near = (*self.before[-1:], *self.after[:2])
        return "fullms" if any(t != self.at and t // 1000 == second for t in near) else "full"

    @property
    def at_text(self) -> str:
        return format_time(self.at, self.at_fmt)

    @property
    def in_turn(self) -> int:
        return sum(1 for lane in self.lanes if lane.doing == "turn")

    @property
    def members(self) -> int:
        """Lanes that are members (``unassigned`` holds tasks, never turns)."""
        return sum(1 for lane in self.lanes if lane.lane_id != "unassigned")

    @property
    def by_status(self) -> tuple[tuple[str, int], ...]:
        counts = Counter(task.status or "unknown" for task in self.tasks if task.exists)
        known = [(s, counts.pop(s)) for s in _STATUS_ORDER if s in counts]
        return (*known, *sorted(counts.items()))

    @property
    def not_created(self) -> int:
        return sum(1 for task in self.tasks if not task.exists)

    @property
    def summary(self) -> str:
        """One line: how many members were in a turn, and the tasks by status."""
        parts = [f"{self.in_turn} of {counted(self.members, 'member')} in a turn"]
        tasks = [f"{n} {status.replace('_', ' ')}" for status, n in self.by_status]
        if self.not_created:
            tasks.append(f"{self.not_created} not created yet")
        parts.append("tasks: " + (", ".join(tasks) if tasks else "none"))
        return " · ".join(parts)

    @property
    def tokens(self) -> dict[str, int] | None:
        """The team's tokens spent in turns ended by the moment."""
        total: dict[str, int] | None = None
        for lane in self.lanes:
            if lane.tokens is not None:
                total = add_tokens(total, dict(zip(TOKEN_KEYS, lane.tokens, strict=True)))
        return total

    @property
    def tokens_text(self) -> str | None:
        return tokens_text(self.tokens)

    @property
    def tokens_title(self) -> str | None:
        return tokens_title(self.tokens)

    @property
    def steps_text(self) -> str:
        """The event times around the moment, for the browser's arrow keys."""
        return " ".join(str(ms) for ms in (*self.before, *self.after))


# ---------------------------------------------------------------------------


def malformed_at(params: Mapping[str, str]) -> bool:
    """``at=`` is given but is neither epoch ms nor an ISO 8601 instant of a year from
    1 to 9999."""
    raw = params.get("at")
    if raw is None or raw == "":
        return False
    at = parse_time_param(raw)
    return at is None or not EARLIEST_MS <= at <= LATEST_MS


def event_times(timeline: Mapping[str, Any]) -> tuple[int, ...]:
    """Every time something happened (turn starts and ends, messages sent and
    delivered, prompts, task moves), sorted, each once: what the arrow keys step
    between, and every time at which :func:`moment_at` can change."""
    times: set[int] = set()
    for lane in as_seq(timeline.get("lanes")):
        for span in as_seq(as_map(lane).get("spans")):
            span = as_map(span)
            fields = ["time", "end"]
            # A delivery changes what the recipient received; the sender's mark of the
            # same message carries the time too, but nothing of its lane changes then.
            if span.get("direction") != "outgoing":
                fields.append("deliveredAt")
            for field in fields:
                value = as_int(span.get(field))
                if value is not None:
                    times.add(value)
    for task in as_seq(timeline.get("tasks")):
        for entry in as_seq(as_map(task).get("history")):
            value = as_int(as_map(entry).get("time"))
            if value is not None:
                times.add(value)
    return tuple(sorted(times))


def step_from(times: Sequence[int], at: int, direction: str) -> int:
    """The event time before (``prev``) or after (``next``) ``at``; ``at`` when none."""
    if direction == "prev":
        index = bisect.bisect_left(times, at)
        return times[index - 1] if index > 0 else at
    index = bisect.bisect_right(times, at)
    return times[index] if index < len(times) else at


def moment_at(timeline: Mapping[str, Any], at: int, times: Sequence[int] = ()) -> Moment:
    """The team at ``at``; ``times`` (from :func:`event_times`) gives the steps around it."""
    lanes = tuple(_lane_at(as_map(lane), at) for lane in as_seq(timeline.get("lanes")))
    tasks = tuple(_task_at(as_map(task), at) for task in as_seq(timeline.get("tasks")))
    lo, hi = bisect.bisect_left(times, at), bisect.bisect_right(times, at)
    return Moment(
        at=at,
        lanes=lanes,
        tasks=tasks,
        before=tuple(times[max(lo - STEP_TIMES, 0) : lo]),
        after=tuple(times[lo : hi + STEP_TIMES]),
    )


def _lane_at(lane: Mapping[str, Any], at: int) -> LaneAt:
    spans = as_seq(lane.get("spans"))
    activity = activity_at(spans, at)
    # The latest by (time, id): two messages in the same millisecond are told apart the
    # same way whatever order the lane lists them in.
    sent: tuple[int, str, Mapping[str, Any]] | None = None
    received: tuple[int, str, Mapping[str, Any]] | None = None
    ended: dict[str, Any] = {}  # turn id -> its tokens (a span listed twice counts once)
    for raw in spans:
        span = as_map(raw)
        time = as_int(span.get("time"))
        if time is None or time > at:
            continue
        if as_str(span.get("kind")) == "turn":
            # The tokens spent by then: those of the turns ended by then.
            end = as_int(span.get("end"))
            if end is not None and end <= at and isinstance(span.get("tokens"), Mapping):
                ended.setdefault(as_str(span.get("id")), span.get("tokens"))
            continue
        if as_str(span.get("kind")) not in _MESSAGE_KINDS:
            continue
        outgoing = span.get("direction") == "outgoing"
        if not outgoing and not _delivered_by(span, at):
            continue
        found = (time, as_str(span.get("id")), span)
        best = sent if outgoing else received
        if best is None or found[:2] > best[:2]:
            if outgoing:
                sent = found
            else:
                received = found
    return LaneAt(
        lane_id=as_str(lane.get("id")),
        doing=activity.doing,
        since=activity.since,
        sent=_message_at(sent, "to") if sent else None,
        received=_message_at(received, "from") if received else None,
        tokens=_sum_tokens(ended),
    )


def _sum_tokens(ended: Mapping[str, Any]) -> tuple[int, ...] | None:
    total: dict[str, int] | None = None
    for turn_id in sorted(ended):
        total = add_tokens(total, ended[turn_id])
    return None if total is None else tuple(total[k] for k in TOKEN_KEYS)


def _delivered_by(span: Mapping[str, Any], at: int) -> bool:
    """A message is received once delivered; a host that records no delivery (the key
    is absent) is taken at the mark's time, one that says "pending" (null) never."""
    if "deliveredAt" not in span:
        return True
    delivered = as_int(span.get("deliveredAt"))
    return delivered is not None and delivered <= at


def _message_at(found: tuple[int, str, Mapping[str, Any]], side: str) -> MessageAt:
    time, _, span = found
    other = as_map(span.get(side))
    prompt = span.get("kind") == "user-prompt" or other.get("kind") == "user"
    name = "you" if prompt else as_str(other.get("name")) or as_str(other.get("id")) or "?"
    return MessageAt(
        msg_id=as_str(span.get("id")),
        ms=time,
        other=name,
        preview=as_str(span.get("preview")),
        prompt=prompt,
    )


def _task_at(task: Mapping[str, Any], at: int) -> TaskAt:
    # In time order, and by revision within a millisecond (whatever the list's order).
    entries = sorted(
        (
            (time, as_int(entry.get("revision")) or 0, entry)
            for raw in as_seq(task.get("history"))
            if (time := as_int((entry := as_map(raw)).get("time"))) is not None and time <= at
        ),
        key=lambda item: (item[0], item[1]),
    )
    task_id = as_str(task.get("id"))
    if not entries:
        return TaskAt(task_id=task_id, exists=False)
    owner: str | None = None
    for _, _, entry in entries:
        status = as_str(entry.get("status"))
        actor = as_str(entry.get("actor")) or None
        # Claiming makes the claimer the owner; going back to pending (released,
        # reopened) leaves the task unowned; completing or deleting keeps the owner.
        if "ownerName" in entry or "ownerId" in entry:
            # The entry says who owned the task after it (an assignment names no actor).
            owner = as_str(entry.get("ownerName")) or as_str(entry.get("ownerId")) or None
        elif status == "in_progress" and entry.get("action") == "claimed":
            owner = actor
        elif status == "pending":
            owner = None
    dated = sum(
        1 for raw in as_seq(task.get("history")) if as_int(as_map(raw).get("time")) is not None
    )
    if len(entries) == dated:
        # Every move is in: the task's own owner is the state after its last one (the
        # board may know an owner that no claim names, such as one assigned by the lead).
        owner = as_str(task.get("ownerName")) or owner
    time, _, last = entries[-1]
    phase, blockers = _phase_at(task, at)
    return TaskAt(
        task_id=task_id,
        exists=True,
        status=as_str(last.get("status")) or None,
        owner=owner,
        revision=as_int(last.get("revision")),
        action=as_str(last.get("action"), "updated"),
        actor=as_str(last.get("actor")) or None,
        action_ms=time,
        phase=phase,
        blockers=blockers,
    )


def _phase_at(task: Mapping[str, Any], at: int) -> tuple[str | None, tuple[str, ...]]:
    """The task's phase holding ``at`` (phases partition its life, the last one open)."""
    for raw in as_seq(task.get("phases")):
        phase = as_map(raw)
        start, end = as_int(phase.get("start")), as_int(phase.get("end"))
        if start is not None and start <= at and (end is None or at < end):
            blockers = tuple(b for b in (as_str(x) for x in as_seq(phase.get("blockers"))) if b)
            return as_str(phase.get("kind")) or None, blockers
    return None, ()


def list_page_at(item_times: Sequence[int], at: int, page_size: int) -> int:
    """The list page (0: the newest) holding the last item at or before ``at``."""
    index = bisect.bisect_right(item_times, at) - 1
    if index < 0:
        index = 0
    return max(len(item_times) - 1 - index, 0) // page_size


#: Moments kept (a drag visits a few dozen; polls while replaying add one per version,
#: and those of an old version are never asked for again). Bounded by entries (a moment
#: is one small record per lane and task, so on a big team (245 tasks) 64 are ~2 MB)
#: and per moment by its last MOMENT_VERSIONS_KEPT versions: a replay cursor left at
#: one moment while the team runs reaches only the newest, and the 64 entries were
#: otherwise filled with one dead version per append.
MOMENT_CACHE_SIZE = 64
MOMENT_VERSIONS_KEPT = 2
#: Teams whose event times are kept: one timeline version each, the latest asked for
#: (a version is replaced at each append, and the one before is never asked for again).
#: Each is one number per event of the team's history: eight versions of one team were
#: ~2 KB a tick of appends (bench_mem_growth's shapes: tuples of ints held here).
TIMES_TEAMS_KEPT = 8


class MomentCache:
    """:func:`moment_at` and :func:`event_times` kept by timeline version (an ETag: the
    same version, the same data), least recently used forgotten first."""

    def __init__(self, size: int = MOMENT_CACHE_SIZE) -> None:
        self._moments: Memo[tuple[str, int], Moment] = Memo(
            size, lru=True, per_slot=MOMENT_VERSIONS_KEPT
        )
        self._times: Memo[str, tuple[int, ...]] = Memo(TIMES_TEAMS_KEPT, lru=True, per_slot=1)

    def times(self, version: str, timeline: Mapping[str, Any], team: str) -> tuple[int, ...]:
        """The event times of ``team``'s timeline at ``version``."""
        found = self._times.get(version)
        if found is None:
            found = self._times.put(version, event_times(timeline), slot=team, owner=team)
        return found

    def moment(self, version: str, timeline: Mapping[str, Any], at: int, team: str) -> Moment:
        key = (version, at)
        found = self._moments.get(key)
        if found is None:
            found = moment_at(timeline, at, self.times(version, timeline, team))
            self._moments.put(key, found, slot=at, owner=team)
        return found
