"""Exceptions raised by the nhvk package."""

from __future__ import annotations

from collections.abc import Sequence


class NhvkError(RuntimeError):
    """nhvk failed: a non-zero exit of the CLI, an interrupted run, or an output folder that cannot be read.

    For a failed command the message is the CLI's own error text (its ``nhvk: error: ...`` lines), which names
    the option or the ``FILE:LINE:COL: dotted.key`` at fault; the full output is kept in :attr:`stderr`.

    Attributes:
        returncode: the exit status of the command, or ``None`` when no command was involved (:func:`nhvk.open`).
        stderr: everything the command wrote to stderr (and stdout), or ``None``.
        command: the command line as a list of arguments, or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        returncode: int | None = None,
        stderr: str | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.command = list(command) if command is not None else None


class NhvkInterrupted(NhvkError):
    """An ``nhvk run`` stopped by a signal (SIGINT, SIGTERM, SIGHUP) after writing its resume record.

    The same call with ``resume=True`` goes on from that record.
    """


class ExecutableNotFoundError(FileNotFoundError):
    """No nhvk executable: not given as ``executable=``, not in ``NHVK_EXECUTABLE``, not on ``PATH``."""
