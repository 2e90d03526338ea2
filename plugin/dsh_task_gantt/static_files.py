"""The panel's static files (CSS, scripts, vendored htmx), answered from memory.

A first load waits for these before it can draw the board, and a freshly started
server answered its first ``FileResponse`` only after importing anyio's thread
backend (tens of ms) and hopping to a thread for each ``stat`` and read. They are
small and few, so each is read once, kept with its validator, and read again only
when its size or modification time changed (a developer's edit while serving).
Only the files that were in the folder at start-up are ever served: no path comes
from a request.

The panel's page names each file with its content's version (``panel.css?v=…``): a
browser may keep that URL for good, so a panel opened again (a new server, the same
files) draws without asking for its CSS and scripts at all. The same name without the
current version (another page, an older copy) is answered as before, revalidated.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from starlette.responses import Response

#: What each shipped kind of file is; anything else is served as bytes.
MEDIA_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
}
#: Versioned files (htmx-2.0.x.min.js) never change under their name.
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    #: A digest of the bytes: the ``v`` of the file's URL, and (quoted) its ``ETag``.
    version: str
    #: The file's (size, mtime_ns) when it was read: a change reads it again.
    identity: tuple[int, int]


class StaticFiles:
    """The files of one folder as it was at start-up, by name."""

    def __init__(self, folder: Path) -> None:
        self._paths = {p.name: p for p in folder.iterdir() if p.is_file()}
        #: Each file's bytes, by name: bounded by the files present at start-up (a
        #: name asked for that is not one of them is never kept).
        self._read: dict[str, StaticFile] = {}
        for name in self._paths:
            self._current(name)

    def version(self, name: str) -> str | None:
        """The file's current version (``None``: no such file)."""
        current = self._current(name)
        return current.version if current is not None else None

    def response(
        self, name: str, if_none_match: str | None, asked_version: str | None = None
    ) -> Response | None:
        """The file's answer (304 when the browser holds this version), or ``None``
        when there is no such file. Kept for good when its name says its version
        (htmx-2.0.x.min.js) or the URL asked for the current one."""
        current = self._current(name)
        if current is None:
            return None
        versioned = re.search(r"\d+\.\d+", name) or asked_version == current.version
        etag = f'"{current.version}"'
        headers = {"Cache-Control": IMMUTABLE if versioned else REVALIDATE, "ETag": etag}
        if if_none_match and etag in (t.strip() for t in if_none_match.split(",")):
            return Response(status_code=304, headers=headers)
        media_type = MEDIA_TYPES.get(Path(name).suffix, "application/octet-stream")
        return Response(current.body, media_type=media_type, headers=headers)

    def _current(self, name: str) -> StaticFile | None:
        path = self._paths.get(name)
        if path is None:
            return None
        try:
            stat = os.stat(path)
        except OSError:
            self._read.pop(name, None)
            return None
        identity = (stat.st_size, stat.st_mtime_ns)
        known = self._read.get(name)
        if known is not None and known.identity == identity:
            return known
        try:
            body = path.read_bytes()
        except OSError:
            return None
        self._read[name] = StaticFile(body, hashlib.sha256(body).hexdigest()[:16], identity)
        return self._read[name]
