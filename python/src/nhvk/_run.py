"""``nhvk.run``: run an ensemble from a TOML config (a file or a dict) and return its Result."""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from ._executable import PathLike, find_executable
from ._process import run_streaming
from ._result import Result
from ._toml import toml_value, tomllib

Config = Union[PathLike, Mapping[str, Any]]

#: How often nhvk writes a progress line into the pipe (its minimum is 0.1 s): often enough for a live bar,
#: rarely enough that a long run's captured stderr stays small.
PROGRESS_EVERY_SECONDS = 0.5


def _settings(set_: Mapping[str, Any] | None, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The ``--set`` keys and values: `set_` as given, and every ``a__b=v`` keyword as ``a.b = v``."""
    settings: dict[str, Any] = {}
    for key, value in (set_ or {}).items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"set=: keys are dotted config keys such as 'run.trajectories', got {key!r}")
        settings[key] = value
    for name, value in overrides.items():
        if "__" not in name:
            raise TypeError(
                f"run() got an unexpected keyword argument {name!r}: a config key is written with double "
                f"underscores for its dots (run__trajectories=100) or given in set={{'run.trajectories': 100}}"
            )
        key = name.replace("__", ".")
        if key in settings:
            raise TypeError(f"config key {key!r} given twice: in set= and as the keyword {name}")
        settings[key] = value
    return settings


def _plain(value: Any) -> Any:
    """`value` with numpy scalars and arrays turned into Python ones, which tomli-w can write."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _plain(value.tolist())
    return value


def _config_from_dict(config: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a dict config with ``model.file`` made absolute.

    nhvk takes ``model.file`` relative to the config file; the dict is written to a temporary folder, so a
    relative path would be looked up there. Taking it relative to the current directory is what a user
    writing the dict in a script or notebook means.
    """
    data = _plain(copy.deepcopy(dict(config)))
    model = data.get("model")
    if isinstance(model, dict) and isinstance(model.get("file"), str):
        model["file"] = str(Path(model["file"]).expanduser().absolute())
    return data


def _read_toml(path: PathLike) -> dict[str, Any] | None:
    """The config file's content, or None when it cannot be read or parsed: nhvk then says why, better."""
    try:
        with Path(path).open("rb") as f:
            return tomllib.load(f)
    except (OSError, ValueError):
        return None


def _output_folder(out: PathLike | None, settings: Mapping[str, Any], data: Mapping[str, Any] | None) -> Path:
    """The folder the run writes: `out`, else a ``run.out`` override, else the config's ``run.out``, else a fresh
    temporary folder. Relative paths are taken from the current directory, as nhvk takes ``run.out``."""
    if out is None and isinstance(settings.get("run.out"), (str, os.PathLike)):
        out = settings["run.out"]
    if out is None and data is not None:
        run_table = data.get("run")
        if isinstance(run_table, Mapping) and isinstance(run_table.get("out"), str) and run_table["out"]:
            out = run_table["out"]
    if out is None:
        return Path(tempfile.mkdtemp(prefix="nhvk-run-"))
    return Path(out).expanduser().absolute()


def _option_args(
    trajectories: int | None,
    seed: int | None,
    backend: str | None,
    threads: int | None,
    chunk: int | None,
    shard: str | tuple[int, int] | None,
    resume: bool,
    save_samples: bool,
    save_members: bool,
    save_trajectories: int | None,
) -> list[str]:
    args: list[str] = []
    for flag, value in (
        ("--trajectories", trajectories),
        ("--seed", seed),
        ("--backend", backend),
        ("--threads", threads),
        ("--chunk", chunk),
        ("--save-trajectories", save_trajectories),
    ):
        if value is not None:
            if isinstance(value, bool):
                raise TypeError(f"{flag[2:].replace('-', '_')}= takes a number or a string, not a bool")
            args += [flag, str(value)]
    if shard is not None:
        if isinstance(shard, tuple):
            index, count = shard
            shard = f"{index}/{count}"
        args += ["--shard", str(shard)]
    if resume:
        args.append("--resume")
    if save_samples:
        args.append("--save-samples")
    if save_members:
        args.append("--save-members")
    return args


def run(
    config: Config,
    out: PathLike | None = None,
    executable: PathLike | None = None,
    progress: bool = True,
    *,
    set: Mapping[str, Any] | None = None,
    trajectories: int | None = None,
    seed: int | None = None,
    backend: str | None = None,
    threads: int | None = None,
    chunk: int | None = None,
    shard: str | tuple[int, int] | None = None,
    resume: bool = False,
    save_samples: bool = False,
    save_members: bool = False,
    save_trajectories: int | None = None,
    **overrides: Any,
) -> Result:
    """Run ``nhvk run`` on a config and return its outputs.

    Args:
        config: a TOML config file, or the config as a dict (written to a temporary TOML file with tomli-w;
            a relative ``model.file`` in it is taken from the current directory).
        out: the output folder (``--out``). By default the config's ``run.out`` (from the file, the dict or a
            ``run.out`` override), relative to the current directory, else a new temporary folder.
        executable: the nhvk executable; by default ``$NHVK_EXECUTABLE``, else ``nhvk`` on PATH.
        progress: show a progress bar (tqdm; a widget in Jupyter) and print nhvk's other stderr lines.
        set: config overrides, dotted key to value (``{"run.trajectories": 100}``), passed as ``--set key=value``
            with the value written as TOML (strings quoted, booleans lower case, lists as arrays, dicts as
            inline tables).
        trajectories, seed, backend, threads, chunk, save_trajectories: the CLI options of the same names.
        shard: ``"i/N"`` or ``(i, N)``: run part i of N (``--shard``) for ``nhvk merge``.
        resume: go on from the output folder's resume record (``--resume``), e.g. after an interruption.
        save_samples: write ``samples.csv`` (``--save-samples``).
        save_members: write ``members.nc``, every member's metrics at every output time (``--save-members``);
            the result's ``.members`` opens it.
        **overrides: config overrides with ``__`` for the dots: ``run__seed=3`` is ``set={"run.seed": 3}``.

    Returns:
        The :class:`Result` of the output folder; its ``stderr`` holds what nhvk printed.

    Raises:
        NhvkError: nhvk exited non-zero; the message is its error text.
        NhvkInterrupted: (an NhvkError) the run was stopped by a signal; ``resume=True`` goes on.
        KeyboardInterrupt: Ctrl-C in Python, passed on to nhvk as one SIGINT: raised once nhvk has stopped and
            written its resume record, with the NhvkInterrupted as its cause.
        ExecutableNotFoundError: no nhvk executable.
    """
    exe = find_executable(executable)
    settings = _settings(set, overrides)
    set_args: list[str] = []
    for key, value in settings.items():
        set_args += ["--set", f"{key}={toml_value(value)}"]
    options = _option_args(
        trajectories, seed, backend, threads, chunk, shard, resume, save_samples, save_members, save_trajectories
    )

    with tempfile.TemporaryDirectory(prefix="nhvk-config-") as tmp:
        if isinstance(config, Mapping):
            import tomli_w

            config_data = _config_from_dict(config)
            config_path = Path(tmp) / "config.toml"
            config_path.write_bytes(tomli_w.dumps(config_data).encode("utf-8"))
            data: dict[str, Any] | None = config_data
            config_arg = str(config_path)
        else:
            config_arg = os.fspath(config)
            data = _read_toml(config_arg)
            if config_arg.startswith("-"):  # not to be read as an option
                config_arg = os.path.join(".", config_arg)
        folder = _output_folder(out, settings, data)
        command = [exe, "run", config_arg, "--out", str(folder), *options, *set_args]
        if progress:
            command += ["--progress-every", str(PROGRESS_EVERY_SECONDS)]
        completed = run_streaming(command, progress=progress, out=str(folder))
    return Result(folder, stderr=completed.stderr)
