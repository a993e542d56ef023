"""``nhvk models`` and ``nhvk inspect`` as Python data."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ._executable import PathLike, find_executable
from ._process import run_simple
from .errors import NhvkError

def models_from_json(text: str) -> list[dict[str, Any]]:
    """The models of ``nhvk models --json``, in the package's shape (see :func:`models`)."""
    try:
        raw = json.loads(text)
    except ValueError as e:
        raise NhvkError(f"`nhvk models --json` printed no JSON: {e}") from e
    if not isinstance(raw, list):
        raise NhvkError("`nhvk models --json` printed something other than a list of models")
    return [
        {
            "name": m["name"],
            "n": m["n"],
            "k": m["k"],
            "coordinates": [{"name": c, "angle": bool(a)} for c, a in zip(m["coordinates"], m["angles"])],
            "parameters": [
                {
                    "name": p["name"],
                    "type": "bool" if p["boolean"] else "number",
                    "default": p["default"],
                    "range": p["range"],
                }
                for p in m["parameters"]
            ],
            "description": m["description"],
        }
        for m in raw
    ]


def models(executable: PathLike | None = None) -> list[dict[str, Any]]:
    """The built-in models, as ``nhvk models --json`` lists them, in its order.

    Each is a dict: ``name``, ``n`` (coordinates), ``k`` (constraints), ``coordinates`` (a list of
    ``{"name", "angle"}``), ``parameters`` (a list of ``{"name", "type": "number" | "bool", "default",
    "range": "> 0" | ">= 0" | None}``; ``None`` is any finite number; defaults in full precision) and
    ``description``.
    """
    exe = find_executable(executable)
    return models_from_json(run_simple([exe, "models", "--json"]).stdout)


def _param_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def inspect(
    model: str | os.PathLike[str],
    params: Mapping[str, Any] | None = None,
    executable: PathLike | None = None,
) -> dict[str, Any]:
    """The classification of a model's constraints: ``nhvk inspect MODEL --json [--param name=value ...]``.

    Args:
        model: a built-in model's name or a model file (``*.toml``).
        params: model parameters, name to value (booleans as ``True``/``False``).

    Returns:
        The JSON object nhvk prints (``model``, ``params``, ``constraints``, ``system``, ``statements``, ...),
        the same as every run's ``summary["classification"]``.
    """
    exe = find_executable(executable)
    command = [exe, "inspect", os.fspath(model), "--json"]
    for name, value in (params or {}).items():
        command += ["--param", f"{name}={_param_text(value)}"]
    completed = run_simple(command)
    try:
        return json.loads(completed.stdout)
    except ValueError as e:
        raise NhvkError(
            f"`nhvk inspect --json` printed no JSON object: {e}",
            returncode=completed.returncode,
            stderr=completed.stderr,
            command=completed.command,
        ) from e
