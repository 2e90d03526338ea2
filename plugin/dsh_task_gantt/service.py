"""The I/O shell around the pure fold: find the team, read each lane, build, cache.

One :class:`TimelineService` per mounted plugin. Per request it

1. resolves the team root (``agentTeams`` → ``parentSession`` walk → the session
   itself),
2. reads the lead's log (live snapshot first, persisted second), learns the roster
   from it and from the live services, reads each member's log the same way,
3. hands everything to :func:`timeline.build_timeline`.

Caching is keyed only on what changed — a lane's channel and revision (persisted
``stat().revision``, or the live snapshot's length) and the live services'
answers — never on time. An unchanged team costs one ``stat`` (or length check)
per lane and no decoding, folding or serialising; a grown log is read from where
the last read stopped and folded onto the previous state.

A persistence that keeps lanes across restarts (ours, given a lane cache: the extras
``resume_lane`` and ``keep_lane``) hands a lane it has never read in this process the
lane an earlier process folded, with its reader resumed at the same place, so a
restarted server reads only what was appended since; a lane that read new bytes is
offered back to it, to be written later off the request path.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import host
from .clock import now_ms
from .events import SessionHeader, as_str, coerce_header, field_of
from .fold import EMPTY_FOLD, RUN_MARKS, UNREAD_DATA, LaneFold, fold_lane
from .ids import valid_session_id
from .logs.channels import LaneRead, read_lane
from .memo import TEAMS_SIZED_FOR, forget_owners
from .provider import TimelineResult
from .timeline import LaneSource, TeamSnapshot, build_timeline, member_order, message_detail
from .wire import Encoder

#: A parentSession chain longer than this is treated as a cycle or junk.
MAX_PARENT_DEPTH = 32
#: Built teams kept (least recently asked forgotten first), with the lanes they hold:
#: a user clicking through the start page opens one team after another, and memory
#: must be bounded by this, not by the teams ever opened (README: Hours). A few panels open
#: side by side stay warm; a team asked for again after eviction reads its logs again
#: (from the lane cache, when there is one).
TEAMS_KEPT = TEAMS_SIZED_FOR


@dataclass(slots=True)
class _LaneCache:
    """What the service remembers of one lane between requests."""

    channel: str
    revision: str | None
    events_seen: int
    fold: LaneFold
    source: LaneSource
    #: What the read said (kept so that a cached lane reports the same notes).
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class _TeamCache:
    """The last built timeline of one team root, and the key it was built from."""

    key: bytes
    result: TimelineResult
    snapshot: TeamSnapshot


@dataclass(slots=True)
class _Services:
    agents: host.Agents | None
    persistence: host.SessionPersistence | None
    teams: host.AgentTeams | None
    notes: list[str] = field(default_factory=list)
    #: Services that failed or hung during this request: not asked again in it, so one
    #: hung service costs one bound per request, not one per lane.
    broken: set[str] = field(default_factory=set)
    #: Answers already had in this request: the root walk, the existence check and the
    #: lane read all ask about the lead, and an unchanged poll should cost one stat per
    #: log. Within one request the answers cannot usefully change.
    stats: dict[str, Any] = field(default_factory=dict)
    agents_by_id: dict[str, Any] = field(default_factory=dict)

    def live_agents(self) -> host.Agents | None:
        return None if host.AGENTS in self.broken else self.agents

    def live_teams(self) -> host.AgentTeams | None:
        return None if host.AGENT_TEAMS in self.broken else self.teams


@dataclass(slots=True)
class _BuildLock:
    """One session's build lock and how many requests hold or await it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class TimelineService:
    """Implements :class:`provider.TimelineProvider` over the host services."""

    def __init__(self, get_service: Callable[[str], Any], *, clock: Callable[[], int] = now_ms):
        self._get = get_service
        self._clock = clock
        #: Each lane's last read and fold. Bounded by the teams kept: a lane no kept
        #: team holds is forgotten when a team is (see _forget_teams).
        self._lanes: dict[str, _LaneCache] = {}
        #: The last build of each team (by requested session and root), least recently
        #: asked first: at most TEAMS_KEPT.
        self._teams: dict[str, _TeamCache] = {}
        #: Lanes' and tasks' bytes kept between builds, and the versions for ``since``
        #: (a team's parts are forgotten with the team; versions are bounded there).
        self._wire = Encoder()
        #: One build per requested session at a time: a request that arrives while the
        #: same team is being read (a warm-up, a second tab) waits for that read and
        #: then finds it cached instead of decoding every log a second time. Per event
        #: loop, because an asyncio lock belongs to the loop it first waited in.
        #: Each lock counts the requests holding or awaiting it, so it is forgotten
        #: only when none is left (a released lock is not "locked" while its next
        #: waiter is still being woken).
        self._building: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, _BuildLock]
        ] = weakref.WeakKeyDictionary()

    # -- TimelineProvider ------------------------------------------------------------

    #: ``timeline`` and ``current_etag`` are one ``_build`` each (``CheckIsBuild``).
    check_is_build = True

    async def timeline(self, session_id: str) -> TimelineResult | None:
        built = await self._build(session_id)
        return None if built is None else built.result

    async def message(self, session_id: str, message_id: str) -> Mapping[str, Any] | None:
        built = await self._build(session_id)
        if built is None:
            return None
        return message_detail(built.snapshot, message_id)

    async def current_etag(self, session_id: str) -> str | None:
        """The cheap path of a poll: an unchanged team costs one stat per lane."""
        built = await self._build(session_id)
        return None if built is None else built.result.etag

    # -- ColdStartProbe ------------------------------------------------------------

    def is_built(self, session_id: str) -> bool:
        """Whether a timeline of this session is in memory: a page answered from it needs
        no log read (only the cheap re-check of a build)."""
        prefix = session_id + "\0"
        return any(key.startswith(prefix) for key in self._teams)

    async def exists(self, session_id: str) -> bool:
        """Whether the session is known: a live agent or a stat of its log, no read."""
        return await self._exists(self._services(), session_id)

    # -- building ----------------------------------------------------------------------

    def _services(self) -> _Services:
        notes: list[str] = []
        agents = self._safe_get(host.AGENTS, notes)
        persistence = self._safe_get(host.SESSION_PERSISTENCE, notes)
        teams = self._safe_get(host.AGENT_TEAMS, notes)
        # A persistence that can leave unread lines unparsed (ours) learns which from
        # the fold, the only one that knows; a host's own persistence just reads.
        use_skip_rules = getattr(persistence, "use_skip_rules", None)
        if callable(use_skip_rules):
            use_skip_rules(UNREAD_DATA, RUN_MARKS)
        return _Services(agents, persistence, teams, notes)

    def _safe_get(self, name: str, notes: list[str]) -> Any:
        try:
            return self._get(name)
        except Exception as exc:
            notes.append(f"the host's {name} service could not be reached ({type(exc).__name__})")
            return None

    async def team_root(self, session_id: str) -> str | None:
        """The root of the team ``session_id`` belongs to (``None``: unknown session)."""
        services = self._services()
        if not await self._exists(services, session_id):
            return None
        root, _ = await self._resolve_root(services, session_id)
        return root

    async def _build(self, session_id: str) -> _TeamCache | None:
        locks = self._building.setdefault(asyncio.get_running_loop(), {})
        entry = locks.get(session_id)
        if entry is None:
            entry = locks[session_id] = _BuildLock()
        entry.users += 1
        try:
            async with entry.lock:
                return await self._build_now(session_id)
        finally:
            entry.users -= 1
            if entry.users == 0:  # forgotten when idle: ids requested once add nothing
                del locks[session_id]

    async def _build_now(self, session_id: str) -> _TeamCache | None:
        services = self._services()
        if not await self._exists(services, session_id):
            return None
        root, lead_agent = await self._resolve_root(services, session_id)

        lead = await self._read_lane(services, root)
        services.notes.extend(lead.notes)
        live_members = await self._live_rows(services, lead_agent, "list_members", "listMembers")
        live_tasks = await self._live_rows(services, lead_agent, "list_tasks", "listTasks")
        running = await self._running_children(services, root)
        children = await self._cold_children(services, root)
        order = member_order(root, lead.source, live_members, [*running, *children, session_id])
        member_ids = [i for i in order.ids if valid_session_id(i)]

        # Member lanes are read concurrently, then folded; results keep roster order.
        reads = await self._read_lanes(services, member_ids)
        lanes = [lead, *reads]
        members: dict[str, LaneSource] = {}
        for member_id, lane in zip(member_ids, reads, strict=True):
            members[member_id] = lane.source
            services.notes.extend(lane.notes)

        key = _change_key(
            session_id, lanes, live_members, live_tasks, [*running, "", *children], services.notes
        )
        cache_key = f"{session_id}\0{root}"
        cached = self._teams.pop(cache_key, None)
        if cached is not None and cached.key == key:
            self._teams[cache_key] = cached  # now the most recently asked
            return cached

        snapshot = TeamSnapshot(
            requested_session_id=session_id,
            root_session_id=root,
            lead=lead.source,
            members=members,
            live_members=live_members,
            live_tasks=live_tasks,
            running_children=tuple(running),
            generated_at=self._clock(),
            service_notes=tuple(services.notes),
            child_sessions=tuple(children),
        )
        data = build_timeline(snapshot)
        etag = '"' + hashlib.blake2b(key, digest_size=16).hexdigest() + '"'
        wire = self._wire.encode(cache_key, data, etag)
        result = TimelineResult(data=data, etag=etag, live=bool(data.get("live")), wire=wire)
        built = _TeamCache(key=key, result=result, snapshot=snapshot)
        self._teams[cache_key] = built
        if len(self._teams) > TEAMS_KEPT:
            self._forget_teams()
        return built

    def _forget_teams(self) -> None:
        """Down to TEAMS_KEPT teams (least recently asked first), and the lanes and
        bytes only the forgotten ones held: the memos' entries made for those lanes
        (``memo.forget_owners``) and, from a persistence that offers it (ours: the extra
        ``forget_sessions``), the readers of their logs, whose offsets no kept lane
        continues from. A build in flight for another team may lose a lane it just
        read: it is read again on its next poll, once."""
        gone: set[str] = set()
        while len(self._teams) > TEAMS_KEPT:
            key = next(iter(self._teams))
            del self._teams[key]
            self._wire.forget(key)
            gone.add(key.partition("\0")[0])  # the session asked for (panel memos)
        held = {s.lead.session_id for s in (t.snapshot for t in self._teams.values())}
        for team in self._teams.values():
            held.update(team.snapshot.members)
        for session_id in [s for s in self._lanes if s not in held]:
            del self._lanes[session_id]
            gone.add(session_id)
        gone -= held | {key.partition("\0")[0] for key in self._teams}
        forget_owners(gone)
        persistence = self._safe_get(host.SESSION_PERSISTENCE, [])
        release = host.service_method(persistence, "forget_sessions")
        if release is not None and gone:
            # Only memory: a later read of these logs starts afresh (or from the disk
            # lane cache), so a failure changes nothing shown.
            with contextlib.suppress(Exception):
                release(sorted(gone))

    async def _exists(self, services: _Services, session_id: str) -> bool:
        """Whether the session is known; a host that cannot tell raises HostCallError
        (the route answers 503 with its short reason rather than a false 404)."""
        if await self._agent(services, session_id) is not None:
            return True
        stat = await self._stat_or_raise(services, session_id)
        if stat is not None and not isinstance(stat, Mapping):
            raise host.HostCallError(
                f"sessionPersistence.stat answered with a {type(stat).__name__}"
            )
        return stat is not None

    async def _agent(self, services: _Services, session_id: str) -> Any:
        if session_id in services.agents_by_id:
            return services.agents_by_id[session_id]
        agents = services.live_agents()
        get = host.service_method(agents, "get") if agents is not None else None
        agent = None
        if get is not None:
            try:
                agent = await host.call_host(get, session_id, what="agents.get")
            except host.HostCallError as exc:
                services.broken.add(host.AGENTS)
                _note_once(services.notes, f"{exc}; reading persisted logs")
        services.agents_by_id[session_id] = agent
        return agent

    async def _stat_or_raise(self, services: _Services, session_id: str) -> Any:
        """``persistence.stat``, asked once per session per request (an error too)."""
        if session_id not in services.stats:
            stat = (
                host.service_method(services.persistence, "stat") if services.persistence else None
            )
            if stat is None:
                services.stats[session_id] = None
            else:
                try:
                    services.stats[session_id] = await host.call_host(
                        stat,
                        session_id,
                        timeout=host.call_timeout(services.persistence),
                        what="sessionPersistence.stat",
                    )
                except host.HostCallError as exc:
                    services.stats[session_id] = exc
        answer = services.stats[session_id]
        if isinstance(answer, host.HostCallError):
            raise answer
        return answer

    async def _stat(self, services: _Services, session_id: str) -> Any:
        try:
            return await self._stat_or_raise(services, session_id)
        except host.HostCallError as exc:
            _note_once(services.notes, str(exc))
            return None

    async def _header(self, services: _Services, session_id: str) -> SessionHeader | None:
        agent = await self._agent(services, session_id)
        raw: Any = None
        if agent is not None:
            raw = getattr(getattr(agent, "session", None), "header", None)
        if raw is None:
            stat = await self._stat(services, session_id)
            raw = stat.get("header") if isinstance(stat, Mapping) else None
        return coerce_header(raw) if raw is not None else None

    async def _resolve_root(self, services: _Services, session_id: str) -> tuple[str, Any]:
        """agentTeams membership → parentSession walk → the session itself."""
        agent = await self._agent(services, session_id)
        teams = services.live_teams()
        membership_fn = (
            host.service_method(teams, "try_membership", "tryMembership")
            if teams is not None
            else None
        )
        if agent is not None and membership_fn is not None:
            try:
                membership = await host.call_host(
                    membership_fn, agent, what="agentTeams.try_membership"
                )
            except host.HostCallError as exc:
                services.broken.add(host.AGENT_TEAMS)
                services.notes.append(str(exc))
                membership = None
            root = as_str(field_of(membership, "root"))
            if root and valid_session_id(root):
                return root, await self._agent(services, root)

        current, seen = session_id, {session_id}
        for _ in range(MAX_PARENT_DEPTH):
            header = await self._header(services, current)
            parent = header.parent_session if header else None
            if not parent or not valid_session_id(parent) or parent in seen:
                break
            # A parent with no log anywhere (and no live agent) cannot be a lane: the
            # team is rooted at the last session that exists.
            if await self._agent(services, parent) is None and (
                await self._stat(services, parent) is None
            ):
                break
            seen.add(parent)
            current = parent
        return current, await self._agent(services, current)

    async def _cold_children(self, services: _Services, root: str) -> list[str]:
        """Sessions whose header names ``root`` as ``parentSession``, running or not
        (older logs have no ``subagent/catalog``). Our own persistence answers from
        headers it read once per file; a host's ``list()`` rows carry their headers."""
        persistence = services.persistence
        if persistence is None:
            return []
        children_of = host.service_method(persistence, "children_of")
        try:
            if children_of is not None:
                rows: Any = await host.call_host(
                    children_of,
                    root,
                    timeout=host.call_timeout(persistence),
                    what="finding child sessions",
                )
                ids = [r for r in host.iter_or_empty(rows) if isinstance(r, str)]
            else:
                list_fn = host.service_method(persistence, "list")
                if list_fn is None:
                    return []
                rows = await host.call_host(
                    list_fn, timeout=host.call_timeout(persistence), what="sessionPersistence.list"
                )
                ids = []
                for row in host.iter_or_empty(rows):
                    header = coerce_header(field_of(row, "header") or {})
                    row_id = as_str(field_of(row, "id")) or (header.id if header else None)
                    if header is not None and header.parent_session == root and row_id:
                        ids.append(row_id)
        except host.HostCallError as exc:
            _note_once(services.notes, str(exc))
            return []
        return [i for i in dict.fromkeys(ids) if i != root and valid_session_id(i)]

    async def _live_rows(
        self, services: _Services, lead_agent: Any, *names: str
    ) -> list[Mapping[str, Any]] | None:
        teams = services.live_teams()
        if teams is None or lead_agent is None:
            return None
        fn = host.service_method(teams, *names)
        if fn is None:
            return None
        try:
            rows = await host.call_host(fn, lead_agent, what=f"agentTeams.{names[0]}")
        except host.HostCallError as exc:
            services.broken.add(host.AGENT_TEAMS)
            services.notes.append(str(exc))
            return None
        if not isinstance(rows, list | tuple):
            services.notes.append(f"agentTeams.{names[0]} answered with a {type(rows).__name__}")
            return None
        plain: list[Mapping[str, Any]] = [r for r in map(_plain_row, rows) if r is not None]
        if len(plain) < len(rows):
            skipped = len(rows) - len(plain)
            services.notes.append(
                f"agentTeams.{names[0]}: skipped {skipped} of {len(rows)} rows that are not "
                "plain objects"
            )
        return plain

    async def _running_children(self, services: _Services, root: str) -> list[str]:
        live = services.live_agents()
        list_fn = host.service_method(live, "list") if live is not None else None
        if list_fn is None:
            return []
        try:
            agents = await host.call_host(list_fn, what="agents.list")
        except host.HostCallError as exc:
            services.broken.add(host.AGENTS)
            _note_once(services.notes, str(exc))
            return []
        children: list[str] = []
        for agent in host.iter_or_empty(agents):
            header = coerce_header(getattr(getattr(agent, "session", None), "header", None) or {})
            agent_id = as_str(getattr(agent, "id", None))
            running = getattr(agent, "status", None) == "running"
            is_child = header is not None and header.parent_session == root
            if running and is_child and agent_id and valid_session_id(agent_id):
                children.append(agent_id)
        return children

    async def _read_lane(self, services: _Services, session_id: str) -> _LaneCache:
        """Read one lane, folding only what is new since the last read of it."""
        fetched = await self._fetch_lane(services, session_id)
        return fetched if isinstance(fetched, _LaneCache) else self._fold_new(services, fetched)

    async def _read_lanes(
        self, services: _Services, session_ids: Sequence[str]
    ) -> list[_LaneCache]:
        """Several lanes: read side by side (a slow host call delays no other lane),
        then folded one after another. A fold running beside another lane's decoding
        only contends for the GIL (measured: slower than folding afterwards)."""
        fetched = await asyncio.gather(*(self._fetch_lane(services, s) for s in session_ids))
        return [f if isinstance(f, _LaneCache) else self._fold_new(services, f) for f in fetched]

    def _fold_new(
        self, services: _Services, fetched: tuple[str, LaneRead, _LaneCache | None]
    ) -> _LaneCache:
        """Fold what was read; a persisted lane that read new bytes is offered to a
        persistence that keeps lanes across restarts (written later, off this path)."""
        session_id, read, start = fetched
        lane = self._fold_lane(session_id, read, start)
        keep = host.service_method(services.persistence, "keep_lane")
        if (
            keep is not None
            and read.channel == "persisted"
            and (read.events or start is None)
            # Nothing of a live agent in it: another process must never show it.
            and not read.live_agent
            and lane.source.agent_status is None
        ):
            # Only a cache: nothing shown depends on it, so a failure is not a note.
            with contextlib.suppress(Exception):
                keep(session_id, lane, lane.events_seen)
        return lane

    async def _resume_lane(self, services: _Services, session_id: str) -> _LaneCache | None:
        """The lane an earlier process kept of this session's log, when the persistence
        keeps lanes and still has the same file there (it checks; see ``resume_lane``)."""
        resume = host.service_method(services.persistence, "resume_lane")
        if resume is None or await self._agent(services, session_id) is not None:
            return None
        try:
            lane = await resume(session_id)
        except Exception:  # only a cache: the log is read instead
            return None
        if not (
            isinstance(lane, _LaneCache)
            and lane.channel == "persisted"
            and isinstance(lane.fold, LaneFold)
            and isinstance(lane.source, LaneSource)
            and lane.source.fold is lane.fold
            and lane.source.session_id == session_id
        ):
            return None
        self._lanes[session_id] = lane
        return lane

    async def _fetch_lane(
        self, services: _Services, session_id: str
    ) -> _LaneCache | tuple[str, LaneRead, _LaneCache | None]:
        """The cached lane when its log is unchanged, else what was read since it."""
        cached = self._lanes.get(session_id)
        if cached is None:
            cached = await self._resume_lane(services, session_id)
        # Cheapest check first: an unchanged persisted log, and no live agent now.
        if (
            cached is not None
            and cached.channel == "persisted"
            and await self._agent(services, session_id) is None
        ):
            stat = await self._stat(services, session_id)
            if isinstance(stat, Mapping) and _revision(stat) == cached.revision:
                return cached
        since = cached.events_seen if cached is not None else 0
        read: LaneRead = await read_lane(
            session_id,
            agents=services.live_agents(),
            persistence=services.persistence,
            since=since,
            timeout=host.HOST_CALL_TIMEOUT_S,
            runs=True,
        )
        resumable = (
            cached is not None
            and read.channel == cached.channel
            and read.total_events >= cached.events_seen
            and not read.restarted  # another file now: its events are not a continuation
            and read.channel in ("snapshot", "persisted")
        )
        if not resumable and since:
            read = await read_lane(
                session_id,
                agents=services.live_agents(),
                persistence=services.persistence,
                since=0,
                timeout=host.HOST_CALL_TIMEOUT_S,
                runs=True,
            )
        return session_id, read, cached if resumable else None

    def _fold_lane(self, session_id: str, read: LaneRead, start: _LaneCache | None) -> _LaneCache:
        fold = start.fold if start is not None else None
        if read.events or fold is None:
            fold = fold_lane(read.events, start=fold)
        if read.channel == "unreadable":
            fold = EMPTY_FOLD
        source = LaneSource(
            session_id=session_id,
            channel=read.channel,
            error=read.error,
            header=read.header,
            inherited_event_count=read.inherited_event_count,
            agent_status=read.agent_status,
            fold=fold,
            log_name=read.log_name,
            stopped_at=read.stopped_at,
        )
        entry = _LaneCache(
            channel=read.channel,
            revision=read.revision,
            events_seen=read.total_events,
            fold=fold,
            source=source,
            notes=tuple(read.notes),
        )
        self._lanes[session_id] = entry
        return entry


def _change_key(
    session_id: str,
    lanes: Sequence[_LaneCache],
    live_members: Any,
    live_tasks: Any,
    running: Sequence[str],
    notes: Sequence[str],
) -> bytes:
    """Everything the timeline depends on, named by revision rather than content."""
    parts: list[Any] = [session_id]
    for lane in lanes:
        src = lane.source
        parts.append(
            [
                src.session_id,
                lane.channel,
                lane.revision,
                lane.events_seen,
                src.agent_status,
                src.error,
            ]
        )
    parts.extend([_plain(live_members), _plain(live_tasks), list(running), list(notes)])
    return orjson.dumps(parts, default=str)


def _note_once(notes: list[str], note: str) -> None:
    """A broken service is asked once per lane: say so once per request."""
    if note not in notes:
        notes.append(note)


def _revision(stat: Any) -> str | None:
    rev = field_of(stat, "revision")
    return None if rev is None else str(rev)


def _plain(value: Any) -> Any:
    """A JSON-able, order-preserving image of a host answer (for change keys)."""
    try:
        return orjson.loads(orjson.dumps(value, default=str))
    except Exception:  # TypeError, JSONEncodeError, or a hostile __str__
        try:
            return repr(value)
        except Exception:  # RecursionError on deep nesting
            return f"<unreadable {type(value).__name__}>"


def _plain_row(row: Any) -> dict[str, Any] | None:
    """A host's row as plain JSON data, or ``None`` when it is not an object, nests
    deeper than orjson allows, or breaks when read (no hostile object goes further)."""
    if not isinstance(row, Mapping):
        return None
    try:
        plain = orjson.loads(orjson.dumps(dict(row), default=str))
    except Exception:
        return None
    return plain if isinstance(plain, dict) else None
