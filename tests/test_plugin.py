"""``apply(ctx)``: register now, later, or never — and say so."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

import dsh_task_gantt
from dsh_task_gantt import ROUTE_PREFIX, plugin
from tests.kit.fakehost import FakeConnection, FakeContext, FakeWebServer

ROOT = Path(__file__).resolve().parent.parent


def test_registers_one_prefix_route_when_the_web_server_is_there() -> None:
    web = FakeWebServer()
    plugin.apply(FakeContext(webServer=web, connection=FakeConnection()))
    assert list(web.routes) == [("prefix", ROUTE_PREFIX)]


def test_inject_is_empty_so_a_host_without_a_web_server_never_waits() -> None:
    assert plugin.inject == []
    assert plugin.name == "dsh-task-gantt"


def test_registers_when_the_web_server_appears_and_leaves_when_it_goes() -> None:
    ctx = FakeContext(connection=FakeConnection())
    ctx.inject = lambda deps, cb: ctx.injected.append((deps, cb))  # type: ignore[attr-defined]
    plugin.apply(ctx)
    assert ctx.injected and ctx.injected[0][0] == ["webServer"]
    web = FakeWebServer()
    dispose = ctx.injected[0][1](FakeContext(webServer=web))
    assert ("prefix", ROUTE_PREFIX) in web.routes
    dispose()
    assert web.routes == {}


def test_warns_and_stays_dormant_without_web_server_or_inject() -> None:
    ctx = FakeContext(connection=FakeConnection())
    plugin.apply(ctx)
    assert any("no webServer" in w for w in ctx.warnings)


def test_a_failing_register_is_reported_and_raised() -> None:
    ctx = FakeContext(webServer=FakeWebServer(fail=True), connection=FakeConnection())
    with pytest.raises(RuntimeError):
        plugin.apply(ctx)
    assert any("registering" in w for w in ctx.warnings)


def test_dispose_removes_the_routes() -> None:
    web = FakeWebServer()
    mounted = plugin.apply(FakeContext(webServer=web, connection=FakeConnection()))
    mounted.dispose()
    assert web.routes == {}


def test_manifest_is_true_to_the_code() -> None:
    manifest: dict[str, Any] = json.loads((ROOT / "manifest.json").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert manifest["id"] == dsh_task_gantt.PLUGIN_ID == plugin.name
    assert manifest["version"] == project["version"]
    module, _, func = manifest["entry"].partition(":")
    assert module == plugin.__name__ and callable(getattr(plugin, func))
    assert manifest["routePrefix"] == ROUTE_PREFIX
    assert manifest["panel"]["path"].startswith(ROUTE_PREFIX + "/panel?session=")
    assert manifest["panel"]["title"] and manifest["panel"]["icon"]
    used = set(manifest["services"]["required"]) | set(manifest["services"]["optional"])
    assert used == {"webServer", "connection", "agents", "sessionPersistence", "agentTeams"}
    entry_points = project["entry-points"]["dsh.plugins"]
    assert entry_points == {"dsh-task-gantt": plugin.__name__}
