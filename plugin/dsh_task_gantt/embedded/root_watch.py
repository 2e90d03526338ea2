"""Whether a sessions root gained or lost a workspace or a session, from a few stats.

A session's folder is created in its workspace's folder and a workspace's folder in the
root: each changes its parent folder's identity (inode, modification time, size, link
count). Appending to a log changes none of them. So the folders' identities say when the
list of sessions may have changed, without listing every session folder and stat-ing
every log in it (the cost of a full listing on a root of months: tens of ms).

A session folder whose log was not there yet at the last listing (a writer creates the
folder first, then the file) is watched on its own until its log shows up: the file's
creation changes that folder's identity. Nothing here is keyed by time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..logs.project_key import decode_segment

#: What changes when a folder gains or loses an entry.
FolderIdentity = tuple[int, int, int, int, int]


def folder_identity(st: os.stat_result) -> FolderIdentity:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, st.st_nlink)


def _identity(path: str) -> FolderIdentity | None:
    try:
        return folder_identity(os.stat(path))
    except OSError:
        return None


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
            if session_id is not None:
                ids.setdefault(session_id, name)
        return cls(identity, names, ids)


@dataclass(slots=True)
class RootWatch:
    """The root's folder structure, re-read only where a folder's identity changed."""

    root: Path
    _root: _Folder | None = None
    _workspaces: dict[str, _Folder] = field(default_factory=dict)
    #: ``(workspace, session folder)`` with no log at the last listing.
    _waiting: frozenset[tuple[str, str]] = frozenset()

    def look(self) -> tuple[object, ...]:
        """The structure's signature: equal to the last one exactly when no workspace or
        session folder was added or removed and no waiting folder changed."""
        root = str(self.root)
        identity = _identity(root)
        if self._root is None or self._root.identity != identity:
            self._root = _Folder(identity, _subfolders(root))
            gone = set(self._workspaces) - set(self._root.subfolders)
            for name in gone:
                del self._workspaces[name]
        signature: list[object] = [identity]
        for name in self._root.subfolders:
            path = os.path.join(root, name)
            ws_identity = _identity(path)
            known = self._workspaces.get(name)
            if known is None or known.identity != ws_identity:
                self._workspaces[name] = _Folder.read(path, ws_identity)
            signature.append((name, ws_identity))
        for workspace, folder in sorted(self._waiting):
            signature.append((workspace, folder, _identity(os.path.join(root, workspace, folder))))
        return tuple(signature)

    def folder_of(self, workspace: str, session_id: str) -> str | None:
        """The folder name holding ``session_id`` in ``workspace`` (as last looked)."""
        known = self._workspaces.get(workspace)
        return known.ids.get(session_id) if known is not None else None

    def listed(self, rows: Iterable[Mapping[str, object]]) -> None:
        """Remember which session folders a listing found a log in; the others are
        watched one by one from the next look on."""
        found = {(row.get("project"), row.get("id")) for row in rows}
        self._waiting = frozenset(
            (workspace, name)
            for workspace, known in self._workspaces.items()
            for name in known.subfolders
            if (workspace, decode_segment(name)) not in found
        )
