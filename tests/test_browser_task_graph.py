"""The task graph in real Chromium at 400 and 1280 px, on the committed fixture teams
(invoices: the demo's well-formed team; alpha: the edge cases) and a live copy of the
demo team: phases with shape and text, the open-blocker chip, one-line rows with owner
and state, the highlight of blockers and dependents, finish-to-start links on wide
panels, the replay's "blocked by", the "Where the time went" section, the fold of done
tasks while live — and no inline script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_task_gantt import demo, embedded
from dsh_task_gantt.fixturegen import TeamSpec
from tests.kit.browser import ONE_POLL_MS, Server, Watched, browser, watched_each
from tests.kit.fixture_team import FIXTURES, alpha, alpha_server

__all__ = ["alpha", "alpha_server", "browser", "watched_each"]


@pytest.fixture(scope="module")
def invoices() -> TeamSpec:
    return TeamSpec.load(FIXTURES / "specs" / "invoices.json", root=str(FIXTURES / "sessions"))


def _open(page: Any, server: Server, query: str) -> None:
    page.goto(server.url(query))
    page.locator("#board .chart").wait_for(state="attached")
    page.wait_for_load_state("networkidle")


def _row(page: Any, task_id: str) -> Any:
    return page.locator(f'.row.task[data-task-id="{task_id}"]')


def test_rows_draw_phases_chips_owner_and_state_on_one_line(
    watched_each: Watched, alpha_server: Server, invoices: TeamSpec
) -> None:
    page = watched_each.page
    _open(page, alpha_server, f"session={invoices.lead_id}")
    tests = next(t for t in invoices.tasks if len(t.blocked_by) == 2)  # the fan-in
    row = _row(page, tests.id)
    kinds = row.locator(".task-phase").evaluate_all(
        "els => els.map(e => [...e.classList].find(c => c.startsWith('task-phase--')))"
    )
    assert kinds[0] == "task-phase--blocked" and "task-phase--in-progress" in kinds
    assert kinds[-1] == "task-phase--completed"
    blocked = row.locator(".task-phase--blocked").first.get_attribute("title")
    assert blocked.startswith(f"blocked by {', '.join(tests.blocked_by)}")
    # shape, not colour only: hatched blocked, dashed ready, filled in progress
    style = row.locator(".task-phase--blocked").first.evaluate(
        "e => getComputedStyle(e).backgroundImage"
    )
    assert "repeating-linear-gradient" in style
    ready = page.locator(".row.task .task-phase--ready").first.evaluate(
        "e => getComputedStyle(e).borderStyle"
    )
    assert "dashed" in ready
    # the key shows the same shapes as the rows
    key_ready = page.locator("#key .task-phase--ready").evaluate(
        "e => getComputedStyle(e).borderStyle"
    )
    assert "dashed" in key_ready
    # one line per task, whatever the width; the subject whole in the tooltip
    heights = page.locator(".row.task").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().height)"
    )
    assert heights and max(heights) <= 24
    name = row.locator(".task-name")
    assert name.get_attribute("title") == tests.subject
    # owner and state as short text
    owner = next(m for m in invoices.members if m.id == tests.final.owner_id).name
    assert row.locator(".task-state").inner_text() == f"{owner} · done"
    assert "on the critical path" in (name.get_attribute("aria-label") or "")
    # overlapping write scopes: underlined on both rows, each naming the other
    (overlap,) = row.locator(".task-overlap").all()
    other = (overlap.get_attribute("title") or "").split("overlap with ")[1].split(" ")[0]
    back = _row(page, other).locator(".task-overlap").first.get_attribute("title") or ""
    assert f"overlap with {tests.id} " in back
    assert page.evaluate("document.querySelectorAll('script:not([src])').length") == 0
    assert watched_each.errors == []


def test_the_chip_counts_open_blockers_and_names_them(
    watched_each: Watched, alpha_server: Server, alpha: Any
) -> None:
    page = watched_each.page
    _open(page, alpha_server, f"session={alpha.lead_id}")
    (missing,) = [t for t in alpha.tasks if "missing-blocker" in t.traits]
    chip = _row(page, missing.id).locator(".chip-blockers")
    assert chip.inner_text() == "⊘1" and chip.get_attribute("title") == "blocked by task-99"
    assert _row(page, missing.id).locator(".task-state").inner_text() == "blocked"
    assert page.locator(".chip-blockers").count() == sum(
        1 for t in alpha.tasks if t.final.status == "pending" and t.blocked_by
    )


def test_focus_or_hover_lights_blockers_and_dependents(
    watched_each: Watched, alpha_server: Server, invoices: TeamSpec
) -> None:
    page = watched_each.page
    _open(page, alpha_server, f"session={invoices.lead_id}")
    tests = next(t for t in invoices.tasks if len(t.blocked_by) == 2)
    first = tests.blocked_by[0]
    dependents = [t.id for t in invoices.tasks if first in t.blocked_by]
    _row(page, tests.id).locator(".task-name").focus()
    lit = page.locator(".row.task.hl-blocker").evaluate_all("els => els.map(e => e.dataset.taskId)")
    assert sorted(lit) == sorted(tests.blocked_by)
    page.locator(".row.task.hl-self").wait_for()
    _row(page, first).hover()
    lit = page.locator(".row.task.hl-dependent").evaluate_all(
        "els => els.map(e => e.dataset.taskId)"
    )
    assert sorted(lit) == sorted(dependents) and len(dependents) >= 2
    page.mouse.move(1, 1)
    assert page.locator(".row.task.hl-dependent").count() == 0


def test_finish_to_start_links_on_wide_panels_only(
    watched_each: Watched, alpha_server: Server, invoices: TeamSpec
) -> None:
    page = watched_each.page
    _open(page, alpha_server, f"session={invoices.lead_id}")
    links = page.locator(".task-link")
    wanted = sum(1 for t in invoices.tasks for b in t.blocked_by if t.final.status != "deleted")
    assert links.count() == wanted
    shown = links.evaluate_all(
        "els => els.filter(e => getComputedStyle(e).display !== 'none').length"
    )
    wide = page.viewport_size["width"] >= 700
    assert shown == (wanted if wide else 0)
    if wide:  # each reaches up to its blocker's row
        tests = next(t for t in invoices.tasks if len(t.blocked_by) == 2)
        link = _row(page, tests.id).locator(".task-link").first
        top = link.bounding_box()["y"]
        blocker_row = _row(page, tests.blocked_by[0]).bounding_box()
        assert blocker_row["y"] <= top <= blocker_row["y"] + blocker_row["height"]


def test_replay_says_ready_or_blocked_by_at_the_moment(
    watched_each: Watched, alpha_server: Server, invoices: TeamSpec
) -> None:
    page = watched_each.page
    tests = next(t for t in invoices.tasks if len(t.blocked_by) == 2)
    at = tests.revisions[0].time + 1
    _open(page, alpha_server, f"session={invoices.lead_id}&at={at}")
    text = _row(page, tests.id).locator(".at-task").inner_text()
    assert text.startswith(f"blocked by {', '.join(tests.blocked_by)}")
    free = next(t for t in invoices.tasks if not t.blocked_by and t.revisions[0].time < at)
    assert _row(page, free.id).locator(".at-task").inner_text().split(" · ")[0] in (
        "ready",
        "in progress",
    )


def test_where_the_time_went_is_readable_and_stays_open(
    watched_each: Watched, alpha_server: Server, invoices: TeamSpec
) -> None:
    page = watched_each.page
    _open(page, alpha_server, f"session={invoices.lead_id}")
    where = page.locator("#where-time")
    where.locator("summary").press("Enter")  # keyboard reachable
    assert where.get_attribute("open") is not None
    text = where.inner_text()
    assert "Critical path" in text and " of the team's " in text
    for member in invoices.members:
        assert member.name in text
    box = where.bounding_box()
    assert box["width"] <= page.viewport_size["width"]
    assert watched_each.errors == []


def test_done_tasks_fold_while_live_and_open_by_keyboard(
    watched_each: Watched, tmp_path: Path
) -> None:
    teams = demo.DemoTeams.prepare(tmp_path / "sessions")
    spec = teams.live_spec
    done = sum(1 for t in spec.tasks if t.final.status == "completed")
    with Server(embedded.EmbeddedHost(teams.root)) as server:
        page = watched_each.page
        _open(page, server, f"session={spec.lead_id}")
        button = page.locator("[data-done-fold]")
        assert button.inner_text() == f"{done} done"
        assert page.locator(".row.task.status-completed:visible").count() == 0
        button.focus()
        page.keyboard.press("Enter")
        assert button.get_attribute("aria-expanded") == "true"
        assert page.locator(".row.task.status-completed:visible").count() == done
        page.wait_for_timeout(ONE_POLL_MS)  # a poll keeps it open
        assert page.locator(".row.task.status-completed:visible").count() == done
        # the list view still has every task's moves
        page.locator("#list-toggle").click()
        page.locator("#list .item.k-task").first.wait_for()
        assert page.locator("#list .item.k-task").count() > 0
    assert watched_each.errors == []
