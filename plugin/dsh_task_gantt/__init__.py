"""dsh-task-gantt: a live Gantt chart of a DSH agent team.

The host calls :func:`dsh_task_gantt.plugin.apply`; everything else is reachable
from there. See README.md for the layout.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dsh-task-gantt")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0"

PLUGIN_ID = "dsh-task-gantt"
ROUTE_PREFIX = "/plugins/dsh-task-gantt"
