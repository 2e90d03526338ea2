"""The lane colours have one source: the timeline's palette, emitted as CSS variables."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from dsh_task_gantt.board.colours import COLOURS_CSS, palette_css
from dsh_task_gantt.resources import resource_path
from dsh_task_gantt.timeline import ON_COLOR, PALETTE, UNASSIGNED_COLOR
from tests.kit.boardteams import PREFIX, FakeProvider, demo_team, make_app


def test_the_shipped_colours_are_the_timelines() -> None:
    shipped = (resource_path("static") / COLOURS_CSS).read_text(encoding="utf-8")
    assert shipped == palette_css(), "run: python -m dsh_task_gantt.board.colours"
    declared = {
        name: (token, fallback)
        for name, token, fallback in re.findall(
            r"(--c\d|--on|--cu): var\(([^,]+), ([^)]+\))\);", shipped
        )
    }
    assert declared == {
        **{f"--c{n}": (token, fallback) for n, (token, fallback) in enumerate(PALETTE)},
        "--on": ON_COLOR,
        "--cu": UNASSIGNED_COLOR,
    }


def test_the_panel_stylesheet_defines_no_lane_colour_of_its_own() -> None:
    css = (resource_path("static") / "panel.css").read_text(encoding="utf-8")
    assert re.findall(r"(?m)^\s*--(c\d|on|cu)\s*:", css) == []
    assert "var(--cu)" in css and "var(--c0)" in css  # it uses them


def test_the_page_loads_the_colours_before_the_panel_stylesheet() -> None:
    client = TestClient(make_app(FakeProvider(demo_team())))
    html = client.get(f"{PREFIX}/panel?session=s-lead").text
    colours = html.index(f"{PREFIX}/static/{COLOURS_CSS}")
    assert colours < html.index(f"{PREFIX}/static/panel.css")
    assert client.get(f"{PREFIX}/static/{COLOURS_CSS}").text == palette_css()
