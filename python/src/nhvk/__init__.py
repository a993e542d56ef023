"""Run the nhvk ensemble integrator (nonholonomic vs vakonomic mechanics) from Python and read its outputs.

The package drives the ``nhvk`` command-line program (found through ``executable=``, ``$NHVK_EXECUTABLE`` or
``PATH``) and reads its output folders: ``summary.json`` as a dict, ``stats.nc``, ``sweep.nc`` and
``members.nc`` as xarray Datasets.

    >>> import nhvk
    >>> res = nhvk.run("configs/quickstart.toml", trajectories=200)
    >>> res.stats["p50"].sel(metric="d_q")
"""

from ._cli import inspect, models
from ._executable import ENV_VAR, find_executable
from ._result import Result, open
from ._run import run
from ._version import __version__
from .errors import ExecutableNotFoundError, NhvkError, NhvkInterrupted

__all__ = [
    "ENV_VAR",
    "ExecutableNotFoundError",
    "NhvkError",
    "NhvkInterrupted",
    "Result",
    "__version__",
    "find_executable",
    "inspect",
    "models",
    "open",
    "run",
]
