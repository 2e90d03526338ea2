"""What the web layer needs from the timeline service (the seam between routes and I/O).

``web.py`` guards each request (method, connection, parameters) and then asks a
:class:`TimelineProvider`; ``service.py`` implements it over the host services.
Tests of the panel and routes can hand in a provider of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import orjson

if TYPE_CHECKING:
    from .wire import WireTimeline


@dataclass(frozen=True, slots=True)
class TimelineResult:
    #: The timeline JSON (docs/interfaces.md) as a dict (camelCase keys).
    data: Mapping[str, Any]
    #: Strong validator: equal exactly when ``body`` would be equal (no time in it).
    etag: str
    live: bool
    #: The timeline's lanes and tasks as wire parts, when the provider keeps
    #: them: it can then answer ``?since=<etag>`` with what changed.
    wire: WireTimeline | None = None
    #: ``body`` when the provider serialised it up front.
    encoded: bytes | None = None

    @property
    def body(self) -> bytes:
        """The timeline serialised (orjson), served as is by the API; made when first
        asked for (a panel's poll never asks)."""
        if self.encoded is not None:
            return self.encoded
        # One pass over the data (the wire's parts keep no bytes: assembling from them
        # would serialise each lane and then copy them all into the body).
        return orjson.dumps(self.data)


class TimelineProvider(Protocol):
    async def timeline(self, session_id: str) -> TimelineResult | None:
        """The team's timeline for a (valid) session id; ``None`` when unknown (404)."""
        ...

    async def message(self, session_id: str, message_id: str) -> Mapping[str, Any] | None:
        """One message in full (``/api/messages`` shape); ``None`` when unknown (404)."""
        ...

    async def current_etag(self, session_id: str) -> str | None:
        """The validator of the timeline as it would be built now, computed as cheaply
        as possible (no decoding when no log changed); ``None`` when unknown."""
        ...


@runtime_checkable
class CheckIsBuild(Protocol):
    """What a provider may also tell: its ``timeline`` costs what ``current_etag`` does
    (both one check of the logs; an unchanged team's build is kept), so a poll that would
    ask for the validator and then the timeline asks for the timeline once."""

    check_is_build: bool


@runtime_checkable
class ColdStartProbe(Protocol):
    """What a provider may also tell, so that a first page can be streamed: its head goes
    out while the team is read, once everything that decides the status is known."""

    def is_built(self, session_id: str) -> bool:
        """Whether the team of ``session_id`` is in memory (a page then costs no read)."""
        ...

    async def exists(self, session_id: str) -> bool:
        """Whether the session is known, without reading any log (a 404 otherwise)."""
        ...
