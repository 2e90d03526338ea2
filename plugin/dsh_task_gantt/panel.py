"""The panel's HTML endpoints: the page, the polled board, and the detail fragments.

``web.py`` calls these after it has checked the method, the connection guard and the
parameters (a valid session id). The panel only talks to a :class:`TimelineProvider`
and renders its timeline dict through the :mod:`board` package, keeping each lane's
pieces (name cell, time chunks) until the lane changes; the templates do no arithmetic.
A poll from a browser whose board the server remembers (the token of its last answer)
is answered with the pieces that changed, out of band; any other with the whole board.
Every text from a log reaches the page through Jinja2 autoescaping.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Hashable, Mapping
from dataclasses import replace
from itertools import compress
from operator import attrgetter
from typing import Any
from urllib.parse import quote

from markupsafe import Markup
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse

from .board.detail import SCALES_KEPT, Scale, forget_scale
from .board.geometry import as_map, as_seq, as_str, parse_count, team_of
from .board.model import LaneChunk, ListItem, Tone, counted
from .board.moment import (
    LaneAt,
    Moment,
    MomentCache,
    TaskAt,
    list_page_at,
    malformed_at,
    step_from,
)
from .board.now import LaneNow, lane_now_at, working_text
from .board.pieces import (
    BoardPieces,
    LaneShape,
    Piece,
    Shown,
    ShownBoards,
    board_delta,
    list_item_ids,
)
from .board.view_model import task_row_key
from .clock import now_ms
from .fold.text import MESSAGE_BODY_CAP
from .host import HostCallError
from .htmx import StopPolling, is_htmx
from .layout import (
    DEFAULT_FOCUS_WINDOW_MS,
    LIST_PAGE,
    Board,
    BoardPlan,
    LaneRow,
    View,
    find_span_time,
    finish_board,
    parse_time_param,
    parse_view,
    parties,
    plan_board,
)
from .memo import TASK_ENTRIES_KEPT, TEAMS_SIZED_FOR, Memo, Same
from .provider import CheckIsBuild, ColdStartProbe, TimelineProvider, TimelineResult
from .static_files import StaticFiles
from .templating import template_environment

#: The vendored htmx (static/VENDORED.md records its checksum).
HTMX_FILE = "htmx-2.0.11.min.js"
POLL_EVERY_S = 2
POLL_EVERY = f"{POLL_EVERY_S}s"
#: A live board whose timeline did not change is still redrawn this often, so the
#: now-line and running bars move; in between an unchanged poll is a bare 204.
REDRAW_AFTER_MS = 10_000
#: What the panel's pages need: scripts and stylesheets from our own origin only, no
#: inline script or event handler anywhere; ``style=""`` attributes carry the layout's
#: numeric positions (never log text), hence style-src-attr.
PANEL_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; object-src 'none'"
)
#: Rendered lanes kept for reuse (a few teams' worth of lanes, each at a few zooms),
#: and their markup in all: a lane's markup grows with its history, and after an
#: append its old version is never asked for again (benchmarks/bench_soak.py). After
#: a working day (memo.DAY_OF_SPANS) the big team's lanes weigh about 16 M at one view:
#: the bound holds four views of such a team, or far more of an hour-long one; below
#: what the views in use hold, each poll lays out and renders every lane again.
LANE_CACHE_SIZE = 256
LANE_CACHE_CHARS = 64 << 20
#: Versions of one lane kept per scale it is drawn at: the current one and the one
#: before (a browser a poll behind). Per scale, not per lane: eight per lane held five
#: dead versions of a lead's whole markup beside the three views'; and not per drawn
#: range, which slides with a zoomed view that follows now (each range a dead slot).
LANE_VIEWS_KEPT = 2
#: Rendered chunks kept for reuse (every chunk the kept lanes draw, at a few zooms),
#: and their markup in all (a day-long big team's chunks weigh about 4 M at one view:
#: a bound above the views in use would hold dead scales' chunks, see bench_mem_growth).
#: Both markup memos hold, per lane, the scales its team's views draw at: a scale no
#: view draws at any more is dropped at once (Panel._view_scales), SCALES_KEPT bounds
#: the rest.
CHUNK_CACHE_SIZE = 8192
CHUNK_CACHE_CHARS = 8 << 20
#: Versions of one chunk kept at one scale: the live one (every view at a scale draws
#: the lane's one layout, the very chunk objects; an older version is never asked for
#: again: the story team's 60 appends polled by six views render the same 726 chunks
#: with 1 or 2, and hold 120 entries, not 233).
CHUNK_VERSIONS_KEPT = 1
#: What a drawn mark or bar costs besides its markup (its labels, preview and note
#: are held again in the mark), per item: a rough figure (tracemalloc found the
#: chunk cache's entries several times their markup's size), so the weight bound holds
#: the memory, not only the characters.
_CHUNK_ITEM_CHARS = 1000
#: Rendered task rows kept for reuse, and their markup in all.
TASK_CACHE_SIZE = TASK_ENTRIES_KEPT
TASK_CACHE_CHARS = 4 << 20
#: Renderings of one task's row kept (least recently used dropped first): the views
#: drawing it now (a live 400 px and 1280 px board, a replay cursor) and one behind.
TASK_ROW_VIEWS_KEPT = 4
#: Lane name cells at a replayed moment kept for reuse (a drag revisits moments);
#: bounded by entries (a name cell is small).
NAME_AT_CACHE_SIZE = 1024
#: Rendered list items kept for reuse (the pages of a few views: a page is 50 entries);
#: bounded by entries. 1,024 (~1.8 KB each) kept the entries that had scrolled off the
#: newest page for half an hour of a busy team's appends.
LIST_ITEM_CACHE_SIZE = 256
#: Renderings of one list entry kept (by its element's id): an entry that changes (a
#: turn that runs on) is a new item at each poll, and its dead renderings (~1.8 KB each)
#: filled the entry bound in the soak's first quarter of an hour.
LIST_ITEM_VERSIONS_KEPT = 2
#: Views whose scale is known (see Panel._view_scales), bounded by entries: a few
#: teams' browsers, each at its width and zoom.
VIEWS_KEPT = 64
#: What a laid-out lane costs besides its markup, per turn bar or mark (~).
_ROW_ITEM_CHARS = 200


def _lane_and_scale(slot: tuple[Any, ...]) -> tuple[Hashable, Hashable]:
    """A lane markup slot's lane (its position and session) and scale: a lane keeps
    its markup at the SCALES_KEPT scales it was last drawn at."""
    position, session_id, scale = slot
    return (session_id, position), scale


def _chunk_lane_and_scale(slot: tuple[Any, ...]) -> tuple[Hashable, Hashable]:
    """A chunk markup slot's lane (its element and session) and scale."""
    lane_dom_id, _chunk_dom_id, session_id, scale = slot
    return (session_id, lane_dom_id), scale


def _at_scale(session_id: str, scale: Scale) -> Callable[[Hashable, Hashable], bool]:
    """Whether a lane-and-scale memo's member is a lane of this session at ``scale``
    (the families of _lane_and_scale and _chunk_lane_and_scale)."""

    def dead(family: Hashable, member: Hashable) -> bool:
        return isinstance(family, tuple) and family[0] == session_id and member == scale

    return dead


#: The Content-Security-Policy (PANEL_CSP) is added by the security-headers middleware.
_HEADERS = {"Cache-Control": "no-store", "Vary": "HX-Request"}

log = logging.getLogger("dsh_task_gantt")


class Panel:
    def __init__(
        self,
        provider: TimelineProvider,
        route_prefix: str,
        static_files: StaticFiles | None = None,
    ) -> None:
        self._provider = provider
        self._prefix = route_prefix.rstrip("/")
        self._static_files = static_files
        self._env = template_environment()
        self._env.globals["poll_title"] = f"polling every {POLL_EVERY_S} s"
        self._env.globals["static_url"] = self._static_url
        #: Each lane's row and markup, by everything they depend on (layout.lane_key):
        #: a poll after an append lays out and renders only the lanes that changed.
        self._lanes: Memo[tuple[Any, ...], tuple[LaneRow, LaneShape]] = Memo(
            LANE_CACHE_SIZE,
            max_weight=LANE_CACHE_CHARS,
            weight=_lane_weight,
            lru=True,
            per_slot=LANE_VIEWS_KEPT,
            family=_lane_and_scale,
            per_family=SCALES_KEPT,
        )
        #: Each chunk's markup by the very chunk, its lane's colour and session: a lane
        #: that changed keeps its old chunks as the same objects (detail.chunk_lane lays
        #: out only the chunks whose bars and marks changed), so its versions share them
        #: (see _lane_pieces); by identity, as hashing a chunk's every mark at each poll
        #: cost more than rendering it.
        self._chunks: Memo[tuple[Same[LaneChunk], Tone, str], tuple[LaneChunk, Piece]] = Memo(
            CHUNK_CACHE_SIZE,
            max_weight=CHUNK_CACHE_CHARS,
            weight=_chunk_weight,
            lru=True,
            per_slot=CHUNK_VERSIONS_KEPT,
            family=_chunk_lane_and_scale,
            per_family=SCALES_KEPT,
        )
        #: Each task row's markup by what the row shows and the task at the replayed
        #: moment (most polls change none of them). A task's row keeps its
        #: TASK_ROW_VIEWS_KEPT last renderings: the row of a task that runs on to now is
        #: new at every poll after an append, and the dead ones filled the markup bound
        #: (4 MB) within the soak's first hour.
        self._tasks: Memo[tuple[tuple[Any, ...], TaskAt | None, str, int | None], Piece] = Memo(
            TASK_CACHE_SIZE,
            max_weight=TASK_CACHE_CHARS,
            weight=_piece_weight,
            lru=True,
            per_slot=TASK_ROW_VIEWS_KEPT,
            slot_lru=True,
        )
        #: Each list item's markup by the very item (the board keeps an item while what
        #: it stands for does not change, see view_model._list_items), its element's id
        #: and session: a poll of the list renders the items that are new. Bounded by
        #: entries (an item is a line; a few pages of a few views).
        self._list_pieces: Memo[tuple[Same[ListItem], str, str], Piece] = Memo(
            LIST_ITEM_CACHE_SIZE, lru=True, per_slot=LIST_ITEM_VERSIONS_KEPT
        )
        #: What a browser holds, by the token its last answer carried (bounded by
        #: entries: each live browser needs only its last one; see ShownBoards).
        self._shown = ShownBoards()
        #: The team at a replayed moment, by (timeline version, moment); bounded by
        #: entries (see MomentCache).
        self._moments = MomentCache()
        #: Lane name cells at a moment, by (the name cell's digest, the lane then).
        self._names_at: Memo[tuple[bytes, LaneAt, str], Piece] = Memo(NAME_AT_CACHE_SIZE, lru=True)
        #: What each view draws at, by its session, width and window width (``None``:
        #: the whole extent), which decide its scale: the origin, the scale and the
        #: extent it was last laid out at. When a view's scale changes, the scales no
        #: view of its team draws at any more (a live board's scale changes each time its
        #: extent doubles, and never comes back) are dropped from every lane-and-scale
        #: memo at once, not kept until SCALES_KEPT newer scales push them out (a dead
        #: scale holds every chunk of every lane, laid out and rendered). Bounded by
        #: entries (VIEWS_KEPT).
        self._view_scales: Memo[tuple[str, int, int | None], tuple[int, Scale, tuple[int, int]]]
        self._view_scales = Memo(VIEWS_KEPT, lru=True)
        #: The last board laid out, by its timeline (the very build), view and session:
        #: a cursor dragged over one version of the timeline lays the board out once.
        #: One entry.
        self._last_layout: tuple[tuple[Any, ...], Board, list[LaneShape]] | None = None
        # Compiled now, not on a first load (compiling them all takes about 0.1 s).
        for name in self._env.list_templates(extensions=["html"]):
            self._env.get_template(name)

    # -- helpers -----------------------------------------------------------------

    def _static_url(self, name: str) -> str:
        """A static file's URL, with its content's version when the files are known (the
        browser may then keep it for good)."""
        url = f"{self._prefix}/static/{quote(name, safe='')}"
        version = self._static_files.version(name) if self._static_files else None
        return f"{url}?v={version}" if version else url

    def _layout(
        self, result: TimelineResult, view: View, session_id: str
    ) -> tuple[Board, list[LaneShape]]:
        """The board, and each lane's markup (reused when the lane did not change)."""
        plan = plan_board(result.data, view, _task_versions(result))
        if isinstance(plan, Board):
            return plan, []
        self._drawn_at(session_id, view, plan)
        versions = _lane_versions(result, plan)
        rows: list[LaneRow] = []
        pieces: list[LaneShape] = []
        for position in range(len(plan.lanes_raw)):
            lane_key = plan.lane_key(position, versions[position] if versions else None)
            key = None if lane_key is None else (*lane_key, session_id)
            hit = self._lanes.get(key) if key is not None else None
            if key is not None and hit is not None:
                row, lane_pieces = hit
            else:
                row, lane_pieces = self._lane_pieces(
                    plan.lane_row(position), session_id, plan.scale
                )
                if key is not None and lane_key is not None:
                    # One slot per lane and scale (see LANE_VIEWS_KEPT).
                    slot = (position, session_id, plan.scale)
                    self._lanes.put(key, (row, lane_pieces), slot=slot, owner=session_id)
            rows.append(row)
            pieces.append(lane_pieces)
        return finish_board(plan, tuple(rows)), pieces

    def _drawn_at(self, session_id: str, view: View, plan: BoardPlan) -> None:
        """Note the scale ``view`` is drawn at; when it changed, drop the layouts and
        markup of every scale no view of the session draws at now (see _view_scales)."""
        window = None if view.start is None or view.end is None else view.end - view.start
        key = (session_id, view.track_px, window)
        now = (plan.extent[0], plan.scale, plan.extent)
        before = self._view_scales.get(key)
        if before == now:
            return
        self._view_scales.put(key, now, owner=session_id)
        if before is None or before[:2] == now[:2]:
            return
        views = [(k, v) for k, v in self._view_scales.items() if k[0] == session_id]
        drawn = {(origin, scale) for _, (origin, scale, _) in views} | {before[:2]}
        start, end = plan.extent
        live: set[tuple[int, Scale]] = set()
        for (_, track_px, width), (origin, scale, extent) in views:
            if width is None and extent != plan.extent:
                # A whole view not polled since the extent moved: at its next poll it
                # draws at the scale of its width over the extent now (plan_board's).
                live.add((start, Scale.of(track_px / max(end - start, 1))))
            else:
                live.add((origin, scale))
        live_scales = {scale for _, scale in live}
        for origin, scale in drawn - live:
            forget_scale(origin, scale)
            if scale not in live_scales:
                self._lanes.forget_members(_at_scale(session_id, scale))
                self._chunks.forget_members(_at_scale(session_id, scale))

    def _lane_pieces(
        self, row: LaneRow, session_id: str, scale: Hashable = None
    ) -> tuple[LaneRow, LaneShape]:
        """The lane's markup, and the row holding the very chunks an earlier version of
        the lane drew where they did not change (shared, not copied, by every version
        the lane memo keeps: a live lane's old chunks are most of it)."""
        context = {"lane": row, "prefix": self._prefix, "session_id": session_id}
        name = Piece.of(
            f"{row.dom_id}-name", self._env.get_template("lane_name.html").render(context)
        )
        tokens = _tokens_piece(row.dom_id, row.tokens_text)
        chunk_template = self._env.get_template("chunk.html")
        drawn: list[tuple[LaneChunk, Piece]] = []
        for chunk in row.chunks:
            key = (Same(chunk), row.tone, session_id)
            hit = self._chunks.get(key)
            if hit is None:
                html = chunk_template.render(context, chunk=chunk)
                piece = Piece.of(chunk.dom_id, html)
                # One slot per chunk of a lane at a scale (a chunk's id names its
                # index, not its scale: two widths draw two chunks of one id): the
                # versions no view asks for again go first.
                slot = (row.dom_id, chunk.dom_id, session_id, scale)
                hit = self._chunks.put(key, (chunk, piece), slot=slot, owner=session_id)
            drawn.append(hit)
        row = replace(row, chunks=tuple(c for c, _ in drawn))
        chunks = tuple(p for _, p in drawn)
        frame = self._env.get_template("lane.html").render(
            context, name_html=_CELL_MARK, chunks_html=[_CHUNKS_MARK]
        )
        # From the end: a lane id from a log (in the row's attributes) may hold anything.
        head, _, after = frame.rpartition(_CHUNKS_MARK)
        before, _, between = head.rpartition(_CELL_MARK)
        return row, LaneShape(
            row.dom_id,
            row.lane_id,
            row.rows,
            name,
            chunks,
            (before, between, after),
            _filled(name, tokens),
            tokens=tokens,
        )

    def _board_pieces(
        self,
        board: Board,
        lanes: list[LaneShape],
        session_id: str,
        moment: Moment | None = None,
        timeline: Mapping[str, Any] | None = None,
    ) -> BoardPieces:
        context = {"board": board, "prefix": self._prefix, "session_id": session_id}
        if moment is not None and not board.empty:
            rows_then = zip(lanes, board.lanes, moment.lanes, strict=True)
            lanes = [self._lane_at(lane, row, then, session_id) for lane, row, then in rows_then]
        nows: list[LaneNow | None] = []
        if board.live and moment is None and timeline is not None and not board.empty:
            at = now_ms()
            raw = [as_map(lane) for lane in as_seq(timeline.get("lanes"))]
            if len(raw) == len(lanes):
                nows = [lane_now_at(lane, True, at) for lane in raw]
        lanes = [
            _with_now(lane, nows[n] if n < len(nows) else None) for n, lane in enumerate(lanes)
        ]
        tasks: list[Piece] = []
        template = self._env.get_template("task_row.html")
        for n, task in enumerate(board.task_rows, start=board.tasks_before):
            task_at = moment.tasks[n] if moment is not None and n < len(moment.tasks) else None
            # A row's links are drawn only while their blocker's row is (the window's start).
            window = board.tasks_before if task.links else None
            key = (task_row_key(task), task_at, session_id, window)
            piece = self._tasks.get(key)
            if piece is None:
                at_context = {} if task_at is None else {"task_at": task_at}
                piece = Piece.of(task.dom_id, template.render(context, task=task, **at_context))
                self._tasks.put(key, piece, slot=(session_id, task.dom_id), owner=session_id)
            tasks.append(piece)
        return BoardPieces(
            axis=Piece.of("axis", self._env.get_template("axis.html").render(context)),
            grid=Piece.of("grid", self._env.get_template("grid.html").render(context)),
            lanes=tuple(lanes),
            tasks=tuple(tasks),
            tasks_head=Piece.of(
                "tasks-head", self._env.get_template("tasks_head.html").render(context)
            ),
            tasks_foot=Piece.of(
                "tasks-foot", self._env.get_template("tasks_foot.html").render(context)
            ),
            listing=Piece.of("list", self._env.get_template("list.html").render(context)),
            empty=board.empty,
            working=working_text(nows) if nows else "",
            list_items=self._list_items(board, context),
        )

    def _list_items(self, board: Board, context: Mapping[str, Any]) -> tuple[Piece, ...]:
        """The list's items on its page, each a piece by an id its content does not
        decide (a poll appends the new ones)."""
        if not board.listing or board.empty:
            return ()
        template = self._env.get_template("list_item.html")
        ids = list_item_ids([item.key for item in board.page_items])
        session_id = str(context["session_id"])
        pieces = []
        for item, item_id in zip(board.page_items, ids, strict=True):
            key = (Same(item), item_id, session_id)
            piece = self._list_pieces.get(key)
            if piece is None:
                html = template.render(context, item=item, item_id=item_id)
                piece = self._list_pieces.put(
                    key, Piece.of(item_id, html), slot=(session_id, item_id), owner=session_id
                )
            pieces.append(piece)
        return tuple(pieces)

    def _lane_at(
        self, lane: LaneShape, row: LaneRow, lane_at: LaneAt, session_id: str
    ) -> LaneShape:
        """The lane with its name cell saying what it was doing at the moment (the
        chunks are the same: what lies after the moment is dimmed in CSS)."""
        key = (lane.name.digest, lane_at, session_id)
        name = self._names_at.get(key)
        if name is None:
            context = {"lane": row, "prefix": self._prefix, "session_id": session_id}
            html = self._env.get_template("lane_name.html").render(context, lane_at=lane_at)
            name = self._names_at.put(key, Piece.of(lane.name.id, html), owner=session_id)
        tokens = _tokens_piece(row.dom_id, lane_at.tokens_text, _TOKENS_THEN)
        return replace(lane, name=name, cell=_filled(name, tokens), tokens=tokens)

    def _render(
        self, name: str, status: int = 200, *, stop_polling: bool = False, **context: Any
    ) -> HTMLResponse:
        html = self._env.get_template(name).render(prefix=self._prefix, **context)
        if stop_polling:
            return StopPolling(html, headers=dict(_HEADERS))
        return HTMLResponse(html, status_code=status, headers=dict(_HEADERS))

    def _not_found(self, request: Request, what: str) -> HTMLResponse:
        fragment = is_htmx(request)
        return self._render("notfound.html", 404, what=what, fragment=fragment)

    # -- endpoints ---------------------------------------------------------------

    async def page(
        self, request: Request, session_id: str, *, deadline: float | None = None
    ) -> Response:
        """The whole panel; ``msg=`` opens on a message, ``t=``/``from``/``to`` on a time,
        ``at=`` on a replayed moment. When the team is not in memory yet (a cold server),
        the page is streamed: its head and a "reading" status go out at once, so the
        browser fetches the CSS and scripts and paints while the logs are read, and the
        board follows. Every status code is decided before the first byte; ``deadline``
        (event loop time) bounds the build of a streamed page, which then ends with a
        message instead of being cut off."""
        params = request.query_params
        if malformed_at(params):
            return _bad_at()
        probe = self._provider if isinstance(self._provider, ColdStartProbe) else None
        if probe is not None and not probe.is_built(session_id):
            if not await probe.exists(session_id):
                return self._not_found(request, "session")
            return StreamingResponse(
                self._streamed_page(params, session_id, deadline),
                media_type="text/html",
                headers=dict(_HEADERS),
            )
        result = await self._provider.timeline(session_id)
        if result is None:
            return self._not_found(request, "session")
        return self._render("page.html", **await self._page_context(params, session_id, result))

    async def _streamed_page(
        self, params: QueryParams, session_id: str, deadline: float | None
    ) -> AsyncIterator[str]:
        head = {"prefix": self._prefix, "session_id": session_id, "htmx_file": HTMX_FILE}
        list_mode = params.get("list") == "1"
        yield self._env.get_template("page_head.html").render(head, list_mode=list_mode)
        yield "\n" + self._env.get_template("reading.html").render()
        try:
            async with asyncio.timeout_at(deadline):
                result = await self._provider.timeline(session_id)
                if result is None:  # gone since the existence check
                    tail = self._failed_tail("this session is no longer in the host's logs")
                else:
                    context = await self._page_context(params, session_id, result)
                    tail = self._env.get_template("page_body.html").render(
                        prefix=self._prefix, **context
                    )
        except TimeoutError:
            log.warning("dsh-task-gantt: the panel's team was not read in time")
            tail = self._failed_tail("the team's logs were not read in time")
        except HostCallError as exc:  # a short reason without a path: say it
            tail = self._failed_tail(str(exc))
        except Exception:
            log.exception("dsh-task-gantt: building a streamed panel failed")
            tail = self._failed_tail("an internal error while building the board")
        yield "\n" + tail

    def _failed_tail(self, reason: str) -> str:
        return self._env.get_template("page_failed.html").render(reason=reason)

    async def _page_context(
        self, params: QueryParams, session_id: str, result: TimelineResult
    ) -> dict[str, Any]:
        """Everything page.html shows of the team (its head needs none of it)."""
        view = parse_view(params)
        msg_id = params.get("msg") or None
        message = None
        if msg_id is not None:
            message = await self._provider.message(session_id, msg_id)
            at = find_span_time(result.data, msg_id)
            if at is not None and view.start is None:
                half = DEFAULT_FOCUS_WINDOW_MS // 2
                view = View(start=at - half, end=at + half, track_px=view.track_px, at=view.at)
        if params.get("list") == "1":
            view = replace(view, listing=True)
        board, lanes, moment = self._replayed(result, view, session_id, to_moment=True)
        pieces = self._board_pieces(board, lanes, session_id, moment, result.data)
        return {
            "session_id": session_id,
            "board": board,
            "pieces": pieces,
            "moment": moment,
            "token": self._shown.remember(Shown.of(pieces), _view_slot(session_id, view)),
            "etag": result.etag,
            "drawn": now_ms(),
            "list_mode": params.get("list") == "1",
            "working": pieces.working,
            "message": self._message_context(result.data, message, board) if message else None,
            "htmx_file": HTMX_FILE,
            "poll_every": POLL_EVERY,
        }

    async def warm(self, session_id: str) -> bool:
        """Read the team and lay out the board a first load draws (fit-all at the
        default width), so that the first page reuses each lane's markup. Whether the
        session was found."""
        result = await self._provider.timeline(session_id)
        if result is None:
            return False
        board, lanes = self._layout(result, View(), session_id)
        self._board_pieces(board, lanes, session_id)
        return True

    async def board(self, request: Request, session_id: str) -> Response:
        """The poll target: 204 when the shown version is current (without building the
        timeline); when it changed, only the pieces that changed if the server knows the
        board the browser holds (its token), else the whole board; 286 with the final
        board when frozen."""
        params = request.query_params
        if malformed_at(params):
            return _bad_at()
        shown = params.get("v") or request.headers.get("X-Board-Version") or ""
        result = None
        if shown:
            if isinstance(self._provider, CheckIsBuild) and self._provider.check_is_build:
                # One check of the logs: the timeline it finds carries the validator.
                result = await self._provider.timeline(session_id)
                current = result.etag if result is not None else None
            else:
                current = await self._provider.current_etag(session_id)
            if current is None:
                return self._not_found(request, "session")
            if current == shown and not self._stale(params.get("drawn")):
                return Response(status_code=204, headers={"Cache-Control": "no-store"})
        if result is None:
            result = await self._provider.timeline(session_id)
        if result is None:
            return self._not_found(request, "session")
        view = parse_view(params)
        board, lanes, moment = self._replayed(result, view, session_id)
        pieces = self._board_pieces(board, lanes, session_id, moment, result.data)
        polling = result.live or board.unread  # a log not read yet may show a live team
        held = self._shown.get(params.get("b")) if shown and polling else None
        return self._answer(result, session_id, view, board, pieces, moment, held, not polling)

    async def moment(self, request: Request, session_id: str) -> Response:
        """The board at the moment ``at`` (or the present without it), as the pieces that
        changed since the board the browser holds; ``step=prev|next`` moves the moment to
        the event before or after it first. Never stops polling: a cursor moves on a
        frozen board too."""
        params = request.query_params
        step = params.get("step") or None
        if malformed_at(params) or step not in {None, "prev", "next"}:
            return _bad_at()
        result = await self._provider.timeline(session_id)
        if result is None:
            return self._not_found(request, "session")
        view = parse_view(params)
        if view.at is not None and step is not None:
            times = self._moments.times(result.etag, result.data, session_id)
            view = replace(view, at=step_from(times, view.at, step))
        board, lanes, moment = self._replayed(result, view, session_id, to_moment=True)
        pieces = self._board_pieces(board, lanes, session_id, moment, result.data)
        held = self._shown.get(params.get("b"))
        return self._answer(
            result, session_id, view, board, pieces, moment, held, False, moment_line=True
        )

    async def items(self, request: Request, session_id: str) -> Response:
        """What an aggregate holds: a lane's turns, messages and prompts in a time range."""
        params = request.query_params
        start, end = parse_time_param(params.get("from")), parse_time_param(params.get("to"))
        lane_id = params.get("lane") or ""
        if start is None or end is None or end < start:
            return HTMLResponse(
                "<p>from and to must be times, from first.</p>", 400, headers=dict(_HEADERS)
            )
        result = await self._provider.timeline(session_id)
        if result is None:
            return self._not_found(request, "session")
        plan = plan_board(result.data, View())
        raw_lanes = plan.lanes_raw if isinstance(plan, BoardPlan) else ()
        if isinstance(plan, BoardPlan):
            self._drawn_at(session_id, View(), plan)
        for position, raw in enumerate(raw_lanes):
            if isinstance(plan, BoardPlan) and as_str(raw.get("id")) == lane_id:
                # Only this lane: its row as last drawn, or laid out alone.
                versions = _lane_versions(result, plan)
                lane_key = plan.lane_key(position, versions[position] if versions else None)
                hit = self._lanes.get((*lane_key, session_id)) if lane_key is not None else None
                lane = hit[0] if hit is not None else plan.lane_row(position)
                turns = [t for t in lane.turns if t.start <= end and t.end >= start]
                marks = [m for m in lane.marks if start <= m.ms <= end]
                return self._render(
                    "items.html",
                    session_id=session_id,
                    lane=lane,
                    start=start,
                    end=end,
                    turns=turns,
                    marks=marks,
                    turns_text=counted(len(turns), "turn"),
                    marks_text=counted(len(marks), "message"),
                )
        return self._not_found(request, "lane")

    async def message(self, request: Request, session_id: str, message_id: str) -> Response:
        """The detail fragment of one message (for ``/api/messages/{id}`` with HX-Request)."""
        message = await self._provider.message(session_id, message_id)
        if message is None:
            return self._not_found(request, "message")
        result = await self._provider.timeline(session_id)
        data: Mapping[str, Any] = result.data if result is not None else {}
        board = self._layout(result, View(), session_id)[0] if result is not None else None
        return self._render(
            "message.html", session_id=session_id, m=self._message_context(data, message, board)
        )

    async def task(self, request: Request, session_id: str, task_id: str) -> Response:
        """The detail fragment of one task: every transition with its time and actor."""
        result = await self._provider.timeline(session_id)
        if result is None:
            return self._not_found(request, "session")
        board, _ = self._layout(result, View(), session_id)
        for row in board.tasks:
            if row.task_id == task_id:
                return self._render(
                    "task.html",
                    session_id=session_id,
                    t=row,
                    description=_task_description(result.data, task_id),
                )
        return self._not_found(request, "task")

    # -- replay ------------------------------------------------------------------

    def _replayed(
        self, result: TimelineResult, view: View, session_id: str, *, to_moment: bool = False
    ) -> tuple[Board, list[LaneShape], Moment | None]:
        """The board, its lanes, and the team at the view's moment (``None``: the
        present). ``to_moment``: the list view turns to the page holding the moment."""
        board, lanes = self._layout_once(result, view, session_id)
        at = view.at
        if at is None:
            return board, lanes, None
        if to_moment and view.listing:
            page = list_page_at([item.ms for item in board.items], at, LIST_PAGE)
            if page != board.list_page:
                board, lanes = self._layout_once(result, replace(view, list_page=page), session_id)
        return board, lanes, self._moments.moment(result.etag, result.data, at, session_id)

    def _layout_once(
        self, result: TimelineResult, view: View, session_id: str
    ) -> tuple[Board, list[LaneShape]]:
        """The layout does not depend on the moment: the same build of the timeline (the
        very object) seen through the same view is laid out once."""
        key = (result.data, result.etag, replace(view, at=None), session_id)
        last = self._last_layout
        if last is not None and last[0][0] is result.data and last[0][1:] == key[1:]:
            return last[1], last[2]
        board, lanes = self._layout(result, view, session_id)
        self._last_layout = (key, board, lanes)
        return board, lanes

    def _answer(
        self,
        result: TimelineResult,
        session_id: str,
        view: View,
        board: Board,
        pieces: BoardPieces,
        moment: Moment | None,
        held: Shown | None,
        stop_polling: bool,
        *,
        moment_line: bool = False,
    ) -> Response:
        """The pieces that changed since ``held`` (out of band), else the whole board.
        ``moment_line``: the moment's line is sent even when empty (back to the present)."""
        now_shown = Shown.of(pieces)
        delta = board_delta(held, pieces, now_shown) if held is not None else None
        context: dict[str, Any] = {
            "session_id": session_id,
            "board": board,
            "moment": moment,
            "moment_line": moment_line or moment is not None,
            "etag": result.etag,
            "drawn": now_ms(),
            "token": self._shown.remember(now_shown, _view_slot(session_id, view)),
            "working": pieces.working,
        }
        if delta is not None:
            response = self._render(
                "delta.html", replaced=delta.replaced, appended=delta.appended, **context
            )
            # The board element itself stays: only the out-of-band pieces are swapped.
            response.headers["HX-Reswap"] = "none"
            response.headers["X-Board-Delta"] = "1"
            return response
        return self._render(
            "board.html", stop_polling=stop_polling, pieces=pieces, status_oob=True, **context
        )

    # -- pieces ------------------------------------------------------------------

    @staticmethod
    def _stale(drawn: str | None) -> bool:
        """Whether the board the browser shows was drawn long enough ago (server clock)
        that its now-line should move (only while live: a frozen board is never polled)."""
        drawn_ms = parse_count(drawn)
        if drawn_ms is None:
            return False
        return now_ms() - drawn_ms >= REDRAW_AFTER_MS

    @staticmethod
    def _message_context(
        timeline: Mapping[str, Any], message: Mapping[str, Any], board: Board | None
    ) -> dict[str, Any]:
        sender, recipient = parties(timeline, message)
        body = message.get("body")
        length = message.get("length")
        msg_id = str(message.get("id", ""))
        return {
            "id": msg_id,
            # Where its marks are (lane element, time): a long run of marks drawn as one
            # cluster lists no ids, and the panel finds the one holding it by its range.
            "marks_at": _marks_at(board, msg_id) if board is not None else "",
            "sender": sender,
            "recipient": recipient,
            "queued_at": _ms(message.get("queuedAt")),
            "delivered_at": _ms(message.get("deliveredAt")),
            "body": body if isinstance(body, str) else "",
            "length": length if isinstance(length, int) else None,
            "length_text": f"{length:,}" if isinstance(length, int) else "",
            "truncated": bool(message.get("truncated")),
            "cap": f"{MESSAGE_BODY_CAP:,}",
        }


def _marks_at(board: Board, msg_id: str) -> str:
    """The message's marks on the board as ``lane-element@ms`` words (a message has a
    mark or two: sent and received; a lane has thousands, compared in C)."""
    return " ".join(
        f"{row.dom_id}@{mark.ms}"
        for row in board.lanes
        for mark in compress(row.marks, map(msg_id.__eq__, map(_MSG_ID, row.marks)))
    )


_MSG_ID = attrgetter("msg_id")


def _lane_versions(result: TimelineResult, plan: BoardPlan) -> tuple[int, ...] | None:
    """Each lane's wire generation (it changes exactly when the lane's bytes do), when
    the provider kept them for these very lanes: a cheaper key than hashing every lane
    again at each poll."""
    parts = result.wire.lanes if result.wire is not None else ()
    if len(parts) != len(plan.lanes_raw) or any(
        part.id != lane.get("id") for part, lane in zip(parts, plan.lanes_raw, strict=True)
    ):
        return None
    return tuple(part.generation for part in parts)


def _task_versions(result: TimelineResult) -> tuple[int, ...] | None:
    """Each task's wire generation (it changes exactly when the task's bytes do), when
    the provider kept them for these very tasks: what the board's task memos are keyed
    by instead of each task's bytes, made again at every poll."""
    parts = result.wire.tasks if result.wire is not None else ()
    tasks = as_seq(result.data.get("tasks"))
    team = team_of(result.data)
    last = _TASK_VERSIONS.get(team)
    if last is not None and last[0] is parts and last[1] is tasks:
        return last[2]  # the very same parts and tasks (most builds move no task)
    # In C where it can be: a day's team has over a thousand tasks, asked at every poll.
    if len(parts) != len(tasks) or list(map(_PART_ID, parts)) != [
        task.get("id") if type(task) is dict else as_map(task).get("id") for task in tasks
    ]:
        versions = None
    else:
        versions = tuple(map(_GENERATION, parts))
    owner = as_str(result.data.get("sessionId")) or None
    _TASK_VERSIONS.put(team, (parts, tasks, versions), owner=owner)
    return versions


#: Each team's last ``_task_versions`` answer with the very parts and tasks it read
#: (neither is mutated once built): the polls of one build, and builds that moved no
#: task, read the same objects again. One entry per team, bounded by teams.
_TASK_VERSIONS: Memo[str, tuple[Any, Any, tuple[int, ...] | None]] = Memo(TEAMS_SIZED_FOR)


_PART_ID = attrgetter("id")
_GENERATION = attrgetter("generation")


#: The tooltip of a replayed lane's figure (no exact counts on any lane figure: they
#: change with every model call; the status line has them).
_TOKENS_THEN = "tokens of its turns ended by then"


def _tokens_piece(dom_id: str, text: str | None, title: str = "") -> Piece:
    """A lane's token figure, the piece in its name cell's placeholder (lane_name.html);
    empty when its log has no usage (it says nothing rather than "0")."""
    piece_id = f"{dom_id}-tokens"
    if not text:
        return Piece.of(piece_id, f'<div class="tokens" id="{piece_id}"></div>')
    if title:
        html = Markup('<div class="tokens" id="{}" title="{}">{}</div>').format(
            piece_id, title, text
        )
    else:
        html = Markup('<div class="tokens" id="{}">{}</div>').format(piece_id, text)
    return Piece.of(piece_id, str(html))


#: Stand-ins for the name cell and the chunks in a lane's row, rendered once to find
#: the row's frame around them (private-use characters; split from the end, as only
#: the lane's own attributes, before both, hold text from a log).
_CELL_MARK = Markup("\ue000")
_CHUNKS_MARK = Markup("\ue001")


def _filled(name: Piece, tokens: Piece | None) -> Markup:
    """The name cell as drawn in its row: its placeholder holding the token figure."""
    if tokens is None:
        return name.html
    empty = f'<div class="tokens" id="{tokens.id}"></div>'
    return Markup(str(name.html).replace(empty, str(tokens.html), 1))


def _with_now(lane: LaneShape, now: LaneNow | None) -> LaneShape:
    """The lane with its now-state (empty: frozen, replaying, or no member) drawn into
    the placeholder its name cell holds (lane_name.html)."""
    piece_id = f"{lane.dom_id}-now"
    empty = f'<div class="now-state" id="{piece_id}"></div>'
    if now is None:
        html = empty
    else:
        # "in a turn" reads "turn" in the narrow name cell (whole for screen readers).
        words = str(Markup.escape(now.text))  # "<1 min": escaped like any text
        text = Markup(words.replace("in a turn", '<span class="sr">in a </span>turn', 1))
        html = str(
            Markup('<div class="now-state now-{}" id="{}" title="{}">{}</div>').format(
                now.state, piece_id, now.title, text
            )
        )
    piece = Piece.of(piece_id, html)
    cell = lane.cell if html == empty else Markup(str(lane.cell).replace(empty, html, 1))
    return replace(lane, now=piece, cell=cell)


def _bad_at() -> HTMLResponse:
    return HTMLResponse(
        "<p>at must be a time (epoch ms or ISO 8601), step prev or next.</p>",
        400,
        headers=dict(_HEADERS),
    )


def _ms(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _task_description(timeline: Mapping[str, Any], task_id: str) -> str | None:
    tasks = timeline.get("tasks")
    for task in tasks if isinstance(tasks, list | tuple) else ():
        if isinstance(task, Mapping) and task.get("id") == task_id:
            description = task.get("description")
            return description if isinstance(description, str) and description else None
    return None


def _view_slot(session_id: str, view: View) -> tuple[object, ...]:
    """Which view a browser's board belongs to (``ShownBoards``): its window's ends are
    left out, as they slide with now, and so is a replayed moment's time, as a cursor
    dragged leaves the moments behind."""
    return (
        session_id,
        view.follow,
        view.track_px,
        view.listing,
        view.list_page,
        view.list_turns,
        view.task_page,
        view.at is None,
    )


def _chunk_weight(held: tuple[LaneChunk, Piece]) -> int:
    chunk, piece = held
    return len(piece.html) + _CHUNK_ITEM_CHARS * (len(chunk.turns) + len(chunk.marks) + 1)


def _lane_weight(held: tuple[LaneRow, LaneShape]) -> int:
    """A laid-out lane's cost in characters: the row's markup (its chunks' pieces are
    shared with other versions and counted by the chunk memo), its bars and marks."""
    row, shape = held
    frame = sum(map(len, shape.frame)) + len(shape.cell)
    return frame + _ROW_ITEM_CHARS * (len(row.turns) + len(row.marks) + 1)


def _piece_weight(piece: Piece) -> int:
    return len(piece.html) + len(piece.id) + 64
