"""The panel's static files: the shipped bytes, their types and validators, 304 when the
browser holds them, and only the files that were there at start-up."""

from __future__ import annotations

import os
import re
from pathlib import Path

from starlette.testclient import TestClient

from dsh_task_gantt.resources import resource_path
from dsh_task_gantt.static_files import StaticFiles
from tests.kit.boardteams import PREFIX, FakeProvider, demo_team, make_app


def test_each_shipped_file_is_served_as_it_is_on_disk_with_its_type_and_cache_policy() -> None:
    client = TestClient(make_app(FakeProvider(demo_team())))
    for path in sorted(resource_path("static").iterdir()):
        response = client.get(f"{PREFIX}/static/{path.name}")
        assert response.status_code == 200, path.name
        assert response.content == path.read_bytes(), path.name
        assert response.headers["etag"].startswith('"'), path.name
        immutable = "htmx-" in path.name  # versioned under its name
        assert ("immutable" in response.headers["cache-control"]) is immutable, path.name
    css = client.get(f"{PREFIX}/static/panel.css").headers["content-type"]
    js = client.get(f"{PREFIX}/static/panel.js").headers["content-type"]
    assert css.startswith("text/css") and js.startswith("text/javascript")


def test_a_browser_that_holds_the_file_gets_a_304_and_a_changed_one_the_new_bytes(
    tmp_path: Path,
) -> None:
    (tmp_path / "panel.js").write_text("var a = 1;\n")
    files = StaticFiles(tmp_path)
    first = files.response("panel.js", None)
    assert first is not None and first.status_code == 200 and first.body == b"var a = 1;\n"
    etag = first.headers["etag"]
    assert first.headers["cache-control"] == "no-cache"  # no version asked: revalidated
    again = files.response("panel.js", f'"other", {etag}')
    assert again is not None and again.status_code == 304 and again.body == b""
    # A developer's edit while serving: the next answer has the new bytes, a new validator.
    (tmp_path / "panel.js").write_text("var a = 22;\n")
    os.utime(tmp_path / "panel.js", ns=(1, 1))
    changed = files.response("panel.js", etag)
    assert changed is not None and changed.status_code == 200 and changed.body == b"var a = 22;\n"
    assert changed.headers["etag"] != etag


def test_only_files_present_at_start_up_are_served(tmp_path: Path) -> None:
    (tmp_path / "panel.css").write_text("a{}")
    files = StaticFiles(tmp_path)
    (tmp_path / "later.js").write_text("alert(1)")
    assert files.response("later.js", None) is None
    (tmp_path / "panel.css").unlink()
    assert files.response("panel.css", None) is None  # gone: a 404, not an old copy


def test_the_page_names_its_files_by_version_and_that_url_may_be_kept_for_good() -> None:
    client = TestClient(make_app(FakeProvider(demo_team())))
    html = client.get(f"{PREFIX}/panel?session=s-lead").text
    for name in ("colors.css", "panel.css", "panel.js", "embed.js"):
        found = re.search(rf'"({PREFIX}/static/{re.escape(name)}\?v=([0-9a-f]+))"', html)
        assert found is not None, name
        kept = client.get(found.group(1))
        assert kept.content == (resource_path("static") / name).read_bytes()
        assert "immutable" in kept.headers["cache-control"], name
        assert kept.headers["etag"] == f'"{found.group(2)}"'
        # Any other version (an older page's) is answered, but revalidated.
        stale = client.get(f"{PREFIX}/static/{name}?v=0123456789abcdef")
        assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"


def test_what_is_kept_is_bounded_by_the_files_present_at_start_up(tmp_path: Path) -> None:
    """Asking for names by the thousand (a scanner, a stale page) keeps nothing more
    than one copy of each file that was there at start-up."""
    (tmp_path / "a.css").write_text("a")
    (tmp_path / "b.js").write_text("b")
    files = StaticFiles(tmp_path)
    for n in range(2_000):
        assert files.response(f"x{n}.js", None) is None
        assert files.response("a.css", None) is not None
    (tmp_path / "a.css").write_text("a changed")
    assert files.response("a.css", None) is not None
    assert sorted(files._read) == ["a.css", "b.js"]
