"""A task row's graph parts (pure): its phases, open-blocker chip, overlaps, critical
path mark and finish-to-start links, from the timeline's ``phases``/``overlaps``/
``criticalPath`` (docs/interfaces.md). A timeline without them gives none of these:
the row then draws its owner segments as before."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..timetext import format_time
from .geometry import as_int, as_map, as_seq, as_str, seconds
from .model import UNASSIGNED_TONE, TaskLink, TaskOverlap, TaskPhase, Tone
from .task_facts import TeamTaskFacts

#: Links drawn into one row (a fan-in of more is said in the tooltip of its phases).
MAX_LINKS_PER_ROW = 4
#: Overlap stretches drawn on one row.
MAX_OVERLAPS_PER_ROW = 6
#: Blockers named in a tooltip before "and N more".
NAMED_BLOCKERS = 4

#: The row's short state word, by its last phase.
STATE_WORDS = {
    "blocked": "blocked",
    "ready": "ready",
    "in-progress": "in progress",
    "completed": "done",
    "deleted": "deleted",
}
_FINAL_CAPS = frozenset({"completed", "deleted"})


@dataclass(frozen=True, slots=True)
class GraphContext:
    """What every row's graph parts need about the whole board."""

    positions: Mapping[str, int]
    #: When each task's last completion happened (tasks completed at the end only).
    done_at: Mapping[str, int]
    critical: frozenset[str]

    @staticmethod
    def build(timeline: Mapping[str, Any], tasks: Sequence[Mapping[str, Any]]) -> GraphContext:
        positions: dict[str, int] = {}
        done: dict[str, int] = {}
        for n, task in enumerate(tasks):
            task_id = as_str(task.get("id"))
            positions.setdefault(task_id, n)
            phases = [as_map(p) for p in as_seq(task.get("phases"))]
            if phases and as_str(phases[-1].get("kind")) == "completed":
                start = as_int(phases[-1].get("start"))
                if start is not None:
                    done[task_id] = start
        return GraphContext(positions, done, _critical(timeline))

    @staticmethod
    def of_team(timeline: Mapping[str, Any], team: TeamTaskFacts) -> GraphContext:
        """The same as :meth:`build`, from the team's task facts (read once per version
        of its tasks; the maps are shared, never changed)."""
        return GraphContext(team.positions, team.done_at, _critical(timeline))


def _critical(timeline: Mapping[str, Any]) -> frozenset[str]:
    """The ids on the timeline's critical path."""
    path = as_map(timeline.get("criticalPath"))
    return frozenset(as_str(t) for t in as_seq(path.get("taskIds")) if as_str(t))


def _names(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:NAMED_BLOCKERS])
    more = len(ids) - NAMED_BLOCKERS
    return shown + (f" and {more} more" if more > 0 else "")


def _span_text(start: int, end: int | None) -> str:
    return f"{format_time(start)}–{format_time(end) if end is not None else 'now'}"


def graph_fields(
    task: Mapping[str, Any],
    position: int,
    context: GraphContext,
    tone_of: Callable[[str], tuple[str, Tone] | None],
    extent: tuple[int, int],
) -> dict[str, Any]:
    """The :class:`~.model.TaskRow` fields of the graph, for ``dataclasses.replace``."""
    origin = extent[0]
    raw = [as_map(p) for p in as_seq(task.get("phases"))]
    status = as_str(task.get("status"))
    finished = status in _FINAL_CAPS
    phases: list[TaskPhase] = []
    kinds: list[tuple[str, int, int | None]] = []
    open_blockers: tuple[str, ...] = ()
    for n, p in enumerate(raw):
        kind, start, end = as_str(p.get("kind")), as_int(p.get("start")), as_int(p.get("end"))
        if start is None or kind not in STATE_WORDS:
            continue
        last = n == len(raw) - 1
        blockers = tuple(b for b in (as_str(x) for x in as_seq(p.get("blockers"))) if b)
        tone: Tone | None = None
        who = ""
        if kind == "in-progress":
            found = tone_of(as_str(p.get("ownerId")))
            who = found[0] if found else "unknown owner"
            tone = found[1] if found else UNASSIGNED_TONE
        if kind == "blocked":
            text = f"blocked by {_names(blockers)}" if blockers else "blocked"
            if last:
                open_blockers = blockers
        elif kind == "ready":
            text = "ready, nobody on it"
        elif kind == "in-progress":
            text = f"in progress · {who}"
        else:
            text = kind
        cap = last and finished and kind in _FINAL_CAPS
        still = end is None and not cap
        phases.append(
            TaskPhase(
                kind=kind,
                t=seconds(start, origin),
                d=round(max((end or start) - start, 0) / 1000, 3),
                open=still,
                cap=cap,
                tone=tone,
                label=f"{text} · {format_time(start)}"
                if cap
                else f"{text} · {_span_text(start, end)}",
            )
        )
        kinds.append((kind, start, end))
    overlaps = tuple(
        TaskOverlap(
            t=seconds(start, origin),
            d=round(max((end or start) - start, 0) / 1000, 3),
            open=end is None,
            other=other,
            label=f"write scopes overlap with {other}"
            + (f" ({', '.join(scopes[:3])})" if scopes else "")
            + f" · {_span_text(start, end)}",
        )
        for o in (as_map(x) for x in as_seq(task.get("overlaps"))[:MAX_OVERLAPS_PER_ROW])
        if (start := as_int(o.get("start"))) is not None and (other := as_str(o.get("taskId")))
        for end in (as_int(o.get("end")),)
        for scopes in ([s for s in (as_str(x) for x in as_seq(o.get("scopes"))) if s],)
    )
    blockers = tuple(b for b in (as_str(x) for x in as_seq(task.get("blockedBy"))) if b)
    links: list[TaskLink] = []
    for blocker in blockers:
        source, done = context.positions.get(blocker), context.done_at.get(blocker)
        if source is None or done is None or source >= position:
            continue
        # The moment this task became ready (or was taken up) after that completion.
        ready = min(
            (s for k, s, _ in kinds if k != "blocked" and s >= done),
            default=None,
        )
        if ready is None:
            continue
        links.append(
            TaskLink(
                t=seconds(done, origin),
                d=round((ready - done) / 1000, 3),
                up=position - source,
                source=source,
                label=f"{blocker} done {format_time(done)}, then this one ready",
            )
        )
        if len(links) >= MAX_LINKS_PER_ROW:
            break
    state = STATE_WORDS.get(kinds[-1][0], "") if kinds else ""
    return {
        "phases": tuple(phases),
        "state_text": state,
        "open_blockers": open_blockers,
        "blockers": blockers,
        "overlaps": overlaps,
        "links": tuple(links),
        "critical": as_str(task.get("id")) in context.critical,
    }
