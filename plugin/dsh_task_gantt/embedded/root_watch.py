"""Whether a sessions root gained or lost a workspace or a session, from a few stats.

A session's folder is created in its workspace's folder and a workspace's folder in the
root: each changes its parent folder's identity (inode, modification time, size, link
count). Appending to a log changes none of them. So the folders' identities say when the
list of sessions may have changed, without listing every session folder and stat-ing
every log in it (the cost of a full listing on a root of months: tens of ms).

A session folder whose log was not there yet at the last listing (a writer creates the
folder first, then the file) is watched on its own until its log shows up: the file's
creation changes that folder's identity, and which of the log names exist in it (the
identity alone can miss it: a modification time as coarse as the older kernels' leaves
it equal within one tick). Nothing here is keyed by time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..ids import valid_session_id
from ..logs.persistence import LOG_NAMES
from ..logs.project_key import decode_segment
from .teams import has_header

#: What changes when a folder gains or loses an entry.
FolderIdentity = tuple[int, int, int, int, int]


def folder_identity(st: os.stat_result) -> FolderIdentity:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, st.st_nlink)


def _identity(path: str) -> FolderIdentity | None:
    try:
        return folder_identity(os.stat(path))
    except OSError:
        return None


def _log_names_in(folder: str) -> tuple[str, ...]:
    """Which of the log names exist in a session folder."""
    return tuple(name for name in LOG_NAMES if os.path.lexists(os.path.join(folder, name)))


#: ``(workspace, folder, identity, log names present)`` of a folder waiting for its log.
Waiting = tuple[str, str, FolderIdentity | None, tuple[str, ...]]


def _subfolders(path: str) -> tuple[str, ...]:
    try:
        with os.scandir(path) as entries:
            return tuple(sorted(e.name for e in entries if e.is_dir()))
    except OSError:
        return ()


@dataclass(slots=True)
class _Folder:
    identity: FolderIdentity | None
    subfolders: tuple[str, ...]
    #: Session id → the folder name it is stored under (``~XXXX`` escapes decoded).
    ids: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, path: str, identity: FolderIdentity | None) -> _Folder:
        names = _subfolders(path)
        ids: dict[str, str] = {}
        for name in names:
            session_id = decode_segment(name)
            # As the listing: a folder that cannot be a session's waits for no log.
            if session_id is not None and valid_session_id(session_id):
                ids.setdefault(session_id, name)
        return cls(identity, names, ids)


@dataclass(frozen=True, slots=True)
class Signature:
    """The root's folder structure at one look: equal to another exactly when no
    workspace or session folder came or went and no folder waiting for its log changed."""

    #: The root's identity, then each workspace folder's name and identity.
    structure: tuple[object, ...]
    #: Each session folder the last listing found no log with a header in (or that it
    #: did not see: a folder newer than the listing).
    waiting: tuple[Waiting, ...]


@dataclass(slots=True)
class RootWatch:
    """The root's folder structure, re-read only where a folder's identity changed."""

    root: Path
    _root: _Folder | None = None
    _workspaces: dict[str, _Folder] = field(default_factory=dict)
    #: ``(workspace, session id)`` of every log the last listing found.
    _found: frozenset[tuple[str, str]] = frozenset()

    def look(self) -> Signature:
        """The structure now; the folders of each workspace are read again only when
        the workspace folder's identity changed."""
        root = str(self.root)
        identity = _identity(root)
        if self._root is None or self._root.identity != identity:
            self._root = _Folder(identity, _subfolders(root))
            gone = set(self._workspaces) - set(self._root.subfolders)
            for name in gone:
                del self._workspaces[name]
        structure: list[object] = [identity]
        waiting: list[Waiting] = []
        for name in self._root.subfolders:
            path = os.path.join(root, name)
            ws_identity = _identity(path)
            known = self._workspaces.get(name)
            if known is None or known.identity != ws_identity:
                known = self._workspaces[name] = _Folder.read(path, ws_identity)
            structure.append((name, ws_identity))
            for session_id, folder in known.ids.items():
                if (name, session_id) not in self._found:
                    folder_path = os.path.join(path, folder)
                    waiting.append(
                        (name, folder, _identity(folder_path), _log_names_in(folder_path))
                    )
        return Signature(tuple(structure), tuple(waiting))

    def folder_of(self, workspace: str, session_id: str) -> str | None:
        """The folder name holding ``session_id`` in ``workspace`` (as last looked)."""
        known = self._workspaces.get(workspace)
        return known.ids.get(session_id) if known is not None else None

    def listed(self, rows: Iterable[Mapping[str, object]], looked: Signature) -> Signature:
        """Remember which sessions a listing made after the look ``looked`` found a log
        with a header for; the signature that listing stands for (a later look equals it while
        nothing changed). A folder it found no log in is watched on its own from then
        on, from its identity at ``looked``: a log created meanwhile is not missed."""
        found: set[tuple[str, str]] = set()
        for row in rows:
            workspace, session_id = row.get("project"), row.get("id")
            if not has_header(row):
                continue  # a log without its header yet says nothing: still waiting
            if isinstance(workspace, str) and isinstance(session_id, str):
                found.add((workspace, session_id))
        self._found = frozenset(found)
        still = tuple(
            entry for entry in looked.waiting if (entry[0], decode_segment(entry[1])) not in found
        )
        return Signature(looked.structure, still)
