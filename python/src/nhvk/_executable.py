"""Locating the nhvk executable."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Union

from .errors import ExecutableNotFoundError

ENV_VAR = "NHVK_EXECUTABLE"

PathLike = Union[str, "os.PathLike[str]"]


def _resolve(candidate: str) -> str | None:
    """An executable file at `candidate` (a path) or found on PATH (a bare name), else None."""
    if os.sep in candidate or (os.altsep and os.altsep in candidate):
        path = Path(candidate).expanduser()
        return str(path.absolute()) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(candidate)


def find_executable(executable: PathLike | None = None) -> str:
    """The nhvk executable to run: `executable`, else ``$NHVK_EXECUTABLE``, else ``nhvk`` on ``PATH``.

    An explicit choice that does not point at an executable is an error, never a silent fall-back to the next
    source: running another nhvk than the one asked for would give results of another build without a word.
    """
    if executable is not None:
        found = _resolve(os.fspath(executable))
        if found is None:
            raise ExecutableNotFoundError(
                f"nhvk executable {os.fspath(executable)!r} (the executable= argument) is not an executable file"
            )
        return found
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        found = _resolve(from_env)
        if found is None:
            raise ExecutableNotFoundError(
                f"nhvk executable {from_env!r} (the environment variable {ENV_VAR}) is not an executable file"
            )
        return found
    found = shutil.which("nhvk")
    if found is None:
        raise ExecutableNotFoundError(
            "no nhvk executable found: pass executable='path/to/nhvk', set the environment variable "
            f"{ENV_VAR}=/path/to/nhvk, or put nhvk on PATH (e.g. the build folder's nhvk, or `cmake --install`)"
        )
    return found
