"""``nhvk models`` and ``nhvk inspect`` as Python data."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from ._executable import PathLike, find_executable
from ._process import run_simple
from .errors import NhvkError

# `rolling_disc  n=4 k=2  q=(x, y, theta (a), phi (a))  params: m=1 (> 0) R=0.5 (> 0) alpha=0 g=9.81`
_MODEL_LINE = re.compile(
    r"^(?P<name>\S+)  n=(?P<n>\d+) k=(?P<k>\d+)  q=\((?P<coords>.*?)\)(?:  params: (?P<params>.*))?$"
)
# `m=1 (> 0)`, `alpha=0`, `sub_riemannian=false`; the domain is `> 0` or `>= 0`, absent for any finite number.
_PARAM = re.compile(r"(?P<name>[^\s=]+)=(?P<default>\S+)(?: \((?P<range>[^)]*)\))?")
_COORD = re.compile(r"^(?P<name>.+?)(?P<angle> \(a\))?$")


def _parse_params(text: str, line: str) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _PARAM.match(text, pos)
        if m is None:
            raise NhvkError(f"cannot read the parameters in this line of `nhvk models`: {line!r}")
        raw = m["default"]
        if raw in ("true", "false"):
            default: bool | float = raw == "true"
            kind = "bool"
        else:
            try:
                default = float(raw)
            except ValueError:
                raise NhvkError(f"cannot read the default {raw!r} in this line of `nhvk models`: {line!r}") from None
            kind = "number"
        params.append({"name": m["name"], "type": kind, "default": default, "range": m["range"]})
        pos = m.end()
        while pos < len(text) and text[pos] == " ":
            pos += 1
    return params


def parse_models(text: str) -> list[dict[str, Any]]:
    """The models of ``nhvk models``' text: a header line per model, then its description indented by 4 spaces."""
    models: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("    "):
            if not models:
                raise NhvkError(f"`nhvk models` printed a description before any model: {line!r}")
            current = models[-1]
            desc = line.strip()
            current["description"] = f"{current['description']} {desc}".strip() if current["description"] else desc
            continue
        m = _MODEL_LINE.match(line)
        if m is None:
            raise NhvkError(f"cannot read this line of `nhvk models` (has its format changed?): {line!r}")
        coords = []
        for item in m["coords"].split(", "):
            c = _COORD.match(item)
            assert c is not None  # `.+?` matches any non-empty item
            coords.append({"name": c["name"], "angle": c["angle"] is not None})
        models.append(
            {
                "name": m["name"],
                "n": int(m["n"]),
                "k": int(m["k"]),
                "coordinates": coords,
                "parameters": _parse_params(m["params"], line) if m["params"] else [],
                "description": "",
            }
        )
    return models


def models(executable: PathLike | None = None) -> list[dict[str, Any]]:
    """The built-in models, as ``nhvk models`` lists them, in its order.

    Each is a dict: ``name``, ``n`` (coordinates), ``k`` (constraints), ``coordinates`` (a list of
    ``{"name", "angle"}``), ``parameters`` (a list of ``{"name", "type": "number" | "bool", "default",
    "range": "> 0" | ">= 0" | None}``; ``None`` is any finite number) and ``description``.

    Note: ``nhvk models`` prints the defaults with 6 significant digits.
    """
    exe = find_executable(executable)
    return parse_models(run_simple([exe, "models"]).stdout)


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
