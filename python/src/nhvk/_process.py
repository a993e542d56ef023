"""Running the nhvk executable: output capture, progress lines, error text, interruption."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import NhvkError, NhvkInterrupted

# `[nhvk] progress 8192/12000 ( 68.3%)  recorded 4096  2.8e+04 traj/s  ETA 0.1s`: the plain line `nhvk run` writes
# every --progress-every seconds when stderr is not a terminal (always the case here: it is a pipe).
PROGRESS_LINE = re.compile(
    r"^\[nhvk\] progress (?P<done>\d+)/(?P<total>\d+) \(\s*[0-9.]+%\)"
    r"(?:\s+recorded (?P<recorded>\d+))?(?:\s+(?P<rate>\S+) traj/s)?(?:\s+ETA (?P<eta>\S+))?"
)

# 128 + the signal's number: how `nhvk run` exits after SIGHUP, SIGINT or SIGTERM once its resume record is written.
# Spelled out, not from the signal module, which lacks SIGHUP where nhvk does not run (Windows) but nhvk.open may.
_INTERRUPTED_CODES = {129: "SIGHUP", 130: "SIGINT", 143: "SIGTERM"}


@dataclass
class Completed:
    """A finished command: its arguments, exit status and everything it wrote (stdout, stderr)."""

    command: list[str]
    returncode: int
    stdout: str
    stderr: str


def error_text(stderr: str, returncode: int, command: Sequence[str]) -> str:
    """The CLI's own error lines (``nhvk: error: ...``), or the last lines of its output when it wrote none."""
    lines = stderr.splitlines()
    errors = [line for line in lines if line.startswith("nhvk: error:")]
    if errors:
        return "\n".join(errors)
    tail = [line for line in lines if line.strip() and not PROGRESS_LINE.match(line)][-10:]
    name = os.path.basename(command[0]) if command else "nhvk"
    sub = command[1] if len(command) > 1 else ""
    head = f"{name} {sub} exited with status {returncode}".replace("  ", " ")
    return head + (":\n" + "\n".join(tail) if tail else " and wrote nothing to stderr")


def check(result: Completed) -> Completed:
    """`result`, or NhvkError with the CLI's error text when it exited non-zero."""
    if result.returncode != 0:
        raise NhvkError(
            error_text(result.stderr, result.returncode, result.command),
            returncode=result.returncode,
            stderr=result.stderr,
            command=result.command,
        )
    return result


def run_simple(command: Sequence[str]) -> Completed:
    """Run a short command (``models``, ``inspect``) to completion, capturing stdout and stderr apart."""
    proc = subprocess.run(list(command), check=False, capture_output=True, encoding="utf-8", errors="replace")
    return check(Completed(list(command), proc.returncode, proc.stdout, proc.stderr))


def run_streaming(command: Sequence[str], progress: bool, out: str) -> Completed:
    """Run ``nhvk run``, showing its progress lines as a tqdm bar (when `progress`) and echoing its other lines.

    stdout and stderr go through one pipe, read line by line, so neither can fill up and block the child.
    The child gets a process group of its own: a Ctrl-C at a terminal then reaches only Python, which passes
    exactly one SIGINT on (nhvk's first signal stops it gracefully with a resume record; a second, which the
    terminal would otherwise deliver directly as well, would end it at once).
    """
    command = list(command)
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        encoding="utf-8",
        errors="replace",
        bufsize=1,
        start_new_session=os.name == "posix",
    )
    lines: list[str] = []
    bar: Any = None  # a tqdm bar once the first progress line came
    user_interrupt = False
    try:
        assert proc.stdout is not None
        while True:
            try:
                line = proc.stdout.readline()
                if not line:  # nhvk closed its output: it is exiting
                    proc.wait()
                    break
                line = line.rstrip("\n")
                lines.append(line)
                match = PROGRESS_LINE.match(line)
                if match:
                    if progress:
                        bar = _advance(bar, match)
                elif progress:
                    _echo(line, bar)
            except KeyboardInterrupt:
                # Pass the interrupt on: nhvk stops gracefully at the first SIGINT (finishing the chunk in flight
                # and writing its resume record) and at once at the second, as at a terminal; then go on reading
                # its last lines.
                user_interrupt = True
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
    finally:
        if proc.poll() is None:  # an exception other than KeyboardInterrupt: do not leave the run behind
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if bar is not None:
            if proc.returncode == 0:
                bar.update(bar.total - bar.n)
            bar.close()
    text = "\n".join(lines) + ("\n" if lines else "")
    error = _run_error(proc.returncode, lines, text, command, out)
    if user_interrupt:
        # Ctrl-C in Python stays a KeyboardInterrupt (an `except NhvkError` around a loop of runs must not swallow
        # it), raised once nhvk has stopped and written its resume record, or finished if it was faster.
        raise KeyboardInterrupt(
            str(error) if error is not None else f"interrupted; nhvk run had finished, its outputs are in {out!r}"
        ) from error
    if error is not None:
        raise error
    return Completed(command, proc.returncode, "", text)


def _signal_name(returncode: int) -> str | None:
    """The signal that ended nhvk: its exit status 128 + n after a graceful stop, or a negative status."""
    if returncode in _INTERRUPTED_CODES:
        return _INTERRUPTED_CODES[returncode]
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return None


def _run_error(returncode: int, lines: list[str], text: str, command: list[str], out: str) -> NhvkError | None:
    if returncode == 0:
        return None
    name = _signal_name(returncode)
    if name is None:
        return NhvkError(error_text(text, returncode, command), returncode=returncode, stderr=text, command=command)
    if returncode > 0:  # nhvk's own stop: every finished member is in the record
        kept = f"every finished member is in its resume record in {out!r}"
    else:  # killed outright (kill -9): only the latest periodic record survives, if there was one
        kept = f"the latest resume record in {out!r}, if it wrote one, holds what is kept"
    stopped = [line for line in lines if line.startswith("nhvk: stopped by")]
    return NhvkInterrupted(
        f"nhvk run was interrupted ({name}, exit status {returncode}) before it finished; {kept}: call nhvk.run "
        "again with the same arguments and resume=True to go on from there"
        + ("\n" + "\n".join(stopped) if stopped else ""),
        returncode=returncode,
        stderr=text,
        command=command,
    )


def _advance(bar: Any, match: re.Match[str]) -> Any:
    """Create the bar at the first progress line, move it at the next ones (tqdm computes its own rate)."""
    from tqdm.auto import tqdm

    done, total = int(match["done"]), int(match["total"])
    # `recorded`: how many finished members the latest resume record holds, what a kill -9 would keep.
    postfix = {"recorded": int(match["recorded"])} if match["recorded"] is not None else None
    if bar is None:
        return tqdm(
            total=total,
            initial=done,
            desc="nhvk run",
            unit="traj",
            dynamic_ncols=True,
            file=sys.stderr,
            postfix=postfix,
        )
    bar.total = total
    if postfix is not None:
        bar.set_postfix(postfix, refresh=False)
    if done != bar.n:
        bar.update(done - bar.n)
    else:
        bar.refresh()
    return bar


def _echo(line: str, bar: Any) -> None:
    if bar is not None:
        bar.write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr, flush=True)
