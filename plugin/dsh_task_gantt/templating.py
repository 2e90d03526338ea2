"""The one Jinja environment over the shipped templates.

Autoescaping is on for every template: every text on a page may come from a log.
Undefined names raise instead of rendering as empty, so a view model that forgot a
field fails a test rather than showing a blank.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from .resources import resource_path
from .timetext import format_time, format_utc


def _optional_time(fmt: str) -> Any:
    return lambda ms: format_time(int(ms), fmt) if ms is not None else ""


def template_environment(templates: Path | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates or resource_path("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Templates are read once: a package upgraded (or a checkout changed) under a
        # running server must not pair new templates with the old code's view models
        # (every page would fail on a name the old code does not provide).
        auto_reload=False,
    )
    env.filters["pathpart"] = lambda value: quote(str(value), safe="")
    env.filters["qs"] = lambda value: quote(str(value), safe="")
    env.filters["clock"] = _optional_time("hms")
    env.filters["fulltime"] = _optional_time("full")
    env.filters["utc"] = format_utc
    return env
