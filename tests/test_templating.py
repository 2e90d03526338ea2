"""The panel's templates: read once, so they stay in step with the running code."""

from __future__ import annotations

import shutil
from pathlib import Path

from dsh_task_gantt.resources import resource_path
from dsh_task_gantt.templating import template_environment


def test_a_template_changed_on_disk_under_a_running_server_is_not_picked_up(
    tmp_path: Path,
) -> None:
    """An upgrade (or a checkout) that rewrites the templates while the server runs must
    not pair them with the old code: a template naming a field the old view model lacks
    would fail every page (seen in an hour-long soak whose checkout moved under it)."""
    folder = tmp_path / "templates"
    shutil.copytree(resource_path("templates"), folder)
    env = template_environment(folder)
    before = env.get_template("notfound.html").render(fragment=True, what="message")
    (folder / "notfound.html").write_text("{{ a_field_the_old_code_never_passes }}")
    assert env.get_template("notfound.html").render(fragment=True, what="message") == before
