"""The host entry point: ``apply(ctx)`` mounts the routes on the host's web server.

``inject`` is empty on purpose: a plugin that waited for ``webServer`` would hang
on a host without one. The web server is used when it is there at ``apply`` time,
or when it appears (``ctx.inject(['webServer'], callback)`` where the host has
it); the routes go when it goes. With neither, the plugin logs one warning and
stays dormant. A failing ``register`` is logged and raised: set-up errors are loud.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import PLUGIN_ID, ROUTE_PREFIX, host
from .resources import resource_path
from .service import TimelineService
from .web import GanttApp, connection_guard

name = PLUGIN_ID
inject: list[str] = []

_fallback_log = logging.getLogger("dsh_task_gantt")


@dataclass(slots=True)
class MountedPlugin:
    """What ``apply`` returns: the ASGI app, its service, and how to take it down."""

    app: GanttApp
    service: TimelineService
    logger: host.Logger
    _disposers: list[Callable[[], Any]] = field(default_factory=list)

    def register_on(self, web_server: host.WebServer | None) -> Callable[[], None]:
        register = host.service_method(web_server, "register")
        if register is None:
            raise TypeError("the host's webServer has no register()")
        route: host.Route = {"kind": "prefix", "path": ROUTE_PREFIX, "handler": self.app}
        try:
            dispose = register(route)
        except Exception:
            self.logger.error("dsh-task-gantt: registering %s failed", ROUTE_PREFIX)
            raise
        remove = dispose if callable(dispose) else (lambda: None)

        def unregister() -> None:
            if remove in self._disposers:
                self._disposers.remove(remove)
            remove()

        self._disposers.append(remove)
        return unregister

    def dispose(self) -> None:
        while self._disposers:
            self._disposers.pop()()


def apply(ctx: host.PluginContext) -> MountedPlugin:
    get: Callable[[str], Any] = ctx.get
    logger: host.Logger = getattr(ctx, "logger", None) or _fallback_log
    service = TimelineService(get)
    app = GanttApp(
        service, connection_guard(get), prefix=ROUTE_PREFIX, static_dir=resource_path("static")
    )
    mounted = MountedPlugin(app=app, service=service, logger=logger)

    web_server: host.WebServer | None = get(host.WEB_SERVER)
    if web_server is not None:
        mounted.register_on(web_server)
        return mounted

    inject_fn = getattr(ctx, "inject", None)
    if callable(inject_fn):

        def on_web_server(sub_ctx: host.PluginContext) -> Callable[[], None]:
            return mounted.register_on(sub_ctx.get(host.WEB_SERVER))

        inject_fn([host.WEB_SERVER], on_web_server)
        return mounted

    logger.warning(
        "dsh-task-gantt: the host has no webServer service and no inject(); the panel stays off"
    )
    return mounted
