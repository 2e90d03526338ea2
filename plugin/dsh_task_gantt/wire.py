"""The timeline JSON by parts: each unchanged lane and task keeps its part, and an
answer can hold only what changed since a version the client already has.

A poll after an append changes a lane or two and a task or none, yet the whole team
used to be serialised again (3.5 MB on a big team). :class:`Encoder` keeps, per team,
the last lane and task objects with their parts and a generation number; a lane equal
to the kept one reuses its part (equality is cheap: unchanged lanes hold the very same
span objects), so a part's generation says whether it changed. A body is one
``orjson.dumps`` of the fields in order with the parts' values, byte-identical to
``orjson.dumps(data)`` (with ``delta`` last for a ``since`` answer). No bytes are kept: a
panel's poll needs only the generations, and the bytes of a day's lanes are tens of
megabytes that only an API client reads: kept, the lanes' bytes and the assembled body
were two more copies of the timeline, each the size of the full answer and growing with
every append. Each answer serialises what it sends (a ``since`` answer only the lanes
and tasks that changed).

Versions: generations only grow, and a part keeps its generation only while its id
stays in every version of its team, so a version is its team and the generation
counter's mark when it was encoded: a part of a later version of the team is new or
changed since then exactly when its generation is past that mark. The encoder
remembers that pair for the last :data:`VERSIONS_KEPT` etags it encoded (a pair, not
a number per lane and task: after a day a version held a dict of 1,400 tasks).
``?since=<etag>`` answers with the lanes and tasks changed since it (plus every small
top-level field, in full); an etag it does not remember (a restart, a long sleep,
another team) gets the full answer, and the ``delta`` field says which of the two it is.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

#: The top-level fields that hold one entry per lane or task (by ``id``).
LISTED = ("lanes", "tasks")
#: Versions remembered for ``since`` (a poller is one or two versions behind; a client
#: that slept longer gets the full answer, which is always correct). Each is a team key
#: and a number, so this bounds the versions' memory.
VERSIONS_KEPT = 128
#: Teams whose last lanes and tasks are kept for reuse (the service also forgets a team
#: here when it forgets its build). Each holds one version of its team's parts.
TEAMS_KEPT = 64
#: A field's value in :attr:`WireTimeline.fields` when its entries are parts.
LISTED_HERE: Any = object()
#: What an etag looks like inside its quotes (the service's are 32 hex digits).
_ETAG_CORE = re.compile(r"[A-Za-z0-9_-]{1,128}")

#: Generations are unique in the process, so parts of different teams (or encoders)
#: never look alike.
_GENERATIONS = itertools.count(1)


class Part:
    """One lane or task: its id, the generation of its value, and the value (the
    timeline's own object, not a copy: a part is reused while its value does not
    change)."""

    __slots__ = ("_item", "generation", "id")

    def __init__(self, part_id: str, item: Mapping[str, Any], generation: int) -> None:
        self.id = part_id
        self.generation = generation
        self._item = item

    @property
    def item(self) -> Mapping[str, Any]:
        """The value (the timeline's own object: never to be mutated)."""
        return self._item


@dataclass(frozen=True, slots=True)
class Version:
    """One version (etag): its team, and the generation counter's mark when it was
    encoded (every part it held has a lower generation, every later part a higher)."""

    team: str
    mark: int


class WireTimeline:
    """One timeline, ready to serialise: the parts its body is assembled from."""

    __slots__ = ("etag", "fields", "history", "lanes", "tasks", "team")

    def __init__(
        self,
        team: str,
        etag: str,
        fields: tuple[tuple[str, Any], ...],
        lanes: tuple[Part, ...],
        tasks: tuple[Part, ...],
        history: Mapping[str, Version],
    ) -> None:
        self.team = team
        self.etag = etag
        #: Every top-level field in the data's order with its value (the data's own
        #: object); :data:`LISTED_HERE` for the listed ones (their parts are below).
        self.fields = fields
        self.lanes = lanes
        self.tasks = tasks
        #: The versions the encoder remembers (shared, newest last).
        self.history = history

    @property
    def body(self) -> bytes:
        """The whole timeline, serialised for this answer (not kept: see the module)."""
        return self._serialised({"lanes": self.lanes, "tasks": self.tasks})

    def since(self, since_etag: str) -> bytes:
        """The answer to ``?since=since_etag``: only the changed lanes and tasks when the
        version is remembered, else the full timeline; ``delta`` says which."""
        lane_ids = [p.id for p in self.lanes]
        task_ids = [p.id for p in self.tasks]
        old = self.history.get(since_etag)
        unique = len(set(lane_ids)) == len(lane_ids) and len(set(task_ids)) == len(task_ids)
        known = old is not None and old.team == self.team and unique
        listed: Mapping[str, Sequence[Part]] = {"lanes": self.lanes, "tasks": self.tasks}
        if old is not None and known:
            listed = {
                name: [p for p in parts if p.generation > old.mark]
                for name, parts in listed.items()
            }
        return self._serialised(listed, delta(since_etag, known, lane_ids, task_ids))

    def _serialised(
        self, listed: Mapping[str, Sequence[Part]], delta_field: dict[str, Any] | None = None
    ) -> bytes:
        """The JSON object of the fields in order, the listed ones from ``listed``'s
        parts (a ``since`` answer: the changed ones only), ``delta`` last: one pass of
        orjson, no pieces joined."""
        data = {
            name: [p.item for p in listed[name]] if value is LISTED_HERE else value
            for name, value in self.fields
        }
        if delta_field is not None:
            data["delta"] = delta_field
        return orjson.dumps(data)


#: Per listed field, the last object of each id with its part.
_Kept = dict[str, dict[str, tuple[Any, Part]]]
#: Per listed field, the last list's very items and their parts.
_Last = dict[str, tuple[tuple[Any, ...], tuple[Part, ...]]]


class Encoder:
    """Splits timelines into parts, keeping the part (and generation) of each lane and
    task that did not change."""

    def __init__(self) -> None:
        self._teams: dict[str, _Kept] = {}
        #: Each team's last lists: a list of the very same items (a poll that moved no
        #: task holds the same task dicts) keeps its parts without a look at each item.
        self._last: dict[str, _Last] = {}
        self._history: dict[str, Version] = {}

    def forget(self, team_key: str) -> None:
        """Drop a team's kept parts (its next encoding gives every lane a new part)."""
        self._teams.pop(team_key, None)
        self._last.pop(team_key, None)

    def encode(self, team_key: str, data: Mapping[str, Any], etag: str) -> WireTimeline:
        kept = self._teams.pop(team_key, None) or {}
        last = self._last.pop(team_key, None) or {}
        fields: list[tuple[str, Any]] = []
        parts: dict[str, tuple[Part, ...]] = {name: () for name in LISTED}
        for name, value in data.items():
            same = last.get(name) if name in LISTED else None
            if same is not None and _same_items(same[0], value):
                # The very items of the last encoding (each was listable, and the
                # timeline's values are never mutated): their parts as they were.
                parts[name] = same[1]
                fields.append((name, LISTED_HERE))
            elif name in LISTED and _listable(value):
                parts[name], kept[name] = _parts(value, kept.get(name, {}))
                last[name] = (tuple(value), parts[name])
                fields.append((name, LISTED_HERE))
            else:
                last.pop(name, None)
                fields.append((name, value))
        self._teams[team_key] = kept
        self._last[team_key] = last
        if len(self._teams) > TEAMS_KEPT:
            gone = next(iter(self._teams))
            self._teams.pop(gone)
            self._last.pop(gone, None)
        lanes, tasks = parts["lanes"], parts["tasks"]
        self._history.pop(etag, None)
        self._history[etag] = Version(team_key, next(_GENERATIONS))
        while len(self._history) > VERSIONS_KEPT:
            self._history.pop(next(iter(self._history)))
        return WireTimeline(team_key, etag, tuple(fields), lanes, tasks, self._history)


def parse_since(raw: str) -> str | None:
    """The etag a ``since`` parameter names (quoted as in the ``ETag`` header; the
    quotes and a ``W/`` may be left out), or ``None`` when it is malformed."""
    core = raw.strip().removeprefix("W/")
    if len(core) >= 2 and core[0] == core[-1] == '"':
        core = core[1:-1]
    return f'"{core}"' if _ETAG_CORE.fullmatch(core) else None


def delta(
    since_etag: str, known: bool, lane_ids: Sequence[Any], task_ids: Sequence[Any]
) -> dict[str, Any]:
    """The ``delta`` field of a ``since`` answer."""
    return {"since": since_etag, "known": known, "laneIds": lane_ids, "taskIds": task_ids}


def ids_of(value: Any) -> list[Any]:
    """The ``id`` of each entry of a listed field (``None`` for an entry without one)."""
    if not isinstance(value, list):
        return []
    return [item.get("id") if isinstance(item, dict) else None for item in value]


# -- helpers ---------------------------------------------------------------------


def _same_items(was: tuple[Any, ...], value: Any) -> bool:
    """Whether ``value`` is a list of the very items ``was`` holds (C-level checks)."""
    return isinstance(value, list) and len(value) == len(was) and all(map(operator.is_, value, was))


def _listable(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, dict) and isinstance(item.get("id"), str) for item in value
    )


def _parts(
    items: Sequence[dict[str, Any]], kept: Mapping[str, tuple[Any, Part]]
) -> tuple[tuple[Part, ...], dict[str, tuple[Any, Part]]]:
    parts: list[Part] = []
    keep: dict[str, tuple[Any, Part]] = {}
    for item in items:
        item_id: str = item["id"]
        old = kept.get(item_id)
        # Equal objects serialise to equal bytes (the timeline's values are typed by the
        # fold: no 1 where a True or 1.0 could stand); unchanged lanes hold the same
        # span objects, so this is mostly identity checks.
        if old is not None and old[0] is item:
            part = old[1]
        elif old is not None and old[0] == item:
            # Equal, not the same object: its generation stands, its value is the new
            # one (the old one would keep a second copy of the lane alive).
            part = Part(item_id, item, old[1].generation)
        else:
            part = Part(item_id, item, next(_GENERATIONS))
        parts.append(part)
        keep.setdefault(item_id, (item, part))
    return tuple(parts), keep
