"""nhvk.models, nhvk.inspect, nhvk.__version__ and the TOML values of --set."""

from __future__ import annotations

import math
import subprocess

import nhvk
import pytest
from nhvk._cli import models_from_json
from nhvk._toml import toml_value, tomllib


def test_models_lists_nh_particle(executable: str) -> None:
    models = {m["name"]: m for m in nhvk.models()}
    particle = models["nh_particle"]
    assert (particle["n"], particle["k"]) == (3, 1)
    assert [c["name"] for c in particle["coordinates"]] == ["x", "y", "z"]
    assert particle["parameters"] == []
    assert "z' = y x'" in particle["description"]


def test_models_reads_angles_parameters_defaults_and_ranges(executable: str) -> None:
    models = {m["name"]: m for m in nhvk.models()}
    disc = models["rolling_disc"]
    assert [(c["name"], c["angle"]) for c in disc["coordinates"]] == [
        ("x", False),
        ("y", False),
        ("theta", True),
        ("phi", True),
    ]
    params = {p["name"]: p for p in disc["parameters"]}
    assert params["m"] == {"name": "m", "type": "number", "default": 1.0, "range": "> 0"}
    assert params["alpha"]["range"] is None and params["g"]["default"] == 9.81
    heisenberg = {p["name"]: p for p in models["heisenberg"]["parameters"]}
    assert heisenberg["sub_riemannian"] == {
        "name": "sub_riemannian",
        "type": "bool",
        "default": False,
        "range": None,
    }
    spring = {p["name"]: p for p in models["equal_speeds"]["parameters"]}
    assert spring["kappa"]["range"] == ">= 0"


def test_models_agrees_with_the_text_line_count(executable: str) -> None:
    text = subprocess.run([executable, "models"], capture_output=True, text=True, check=True).stdout
    headers = [line for line in text.splitlines() if line and not line.startswith(" ")]
    assert [m["name"] for m in nhvk.models()] == [line.split()[0] for line in headers]


def test_models_refuses_output_that_is_not_its_json() -> None:
    with pytest.raises(nhvk.NhvkError, match="printed no JSON"):
        models_from_json("nh_particle n=3 k=1 q=(x, y, z)\n    a description\n")
    with pytest.raises(nhvk.NhvkError, match="other than a list"):
        models_from_json("{}")


def test_inspect_returns_the_classification(executable: str) -> None:
    info = nhvk.inspect("nh_particle")
    assert isinstance(info, dict)
    assert info["model"] == "nh_particle"
    assert info["constraints"][0]["velocity_dependence"] == "linear"
    assert info["system"]["integrable"] is False
    assert info["statements"]


def test_inspect_passes_parameters(executable: str) -> None:
    assert nhvk.inspect("heisenberg", {"sub_riemannian": True})["params"] == {"sub_riemannian": True}
    assert nhvk.inspect("rolling_disc", {"alpha": 0.25})["params"]["alpha"] == 0.25


def test_inspect_unknown_model_raises_with_the_cli_text(executable: str) -> None:
    with pytest.raises(nhvk.NhvkError, match="unknown model 'no_such_model'") as info:
        nhvk.inspect("no_such_model")
    assert info.value.returncode == 2


def test_version_matches_the_cli(executable: str) -> None:
    cli = subprocess.run([executable, "--version"], capture_output=True, text=True, check=True).stdout
    assert nhvk.__version__ == cli.split()[-1]


@pytest.mark.parametrize(
    "value",
    [
        1,
        -3,
        0.1,
        1e-10,
        1e300,
        True,
        False,
        "cuda",
        'a "quoted" \\ string\twith\ncontrols',
        "ünïcødé ✓",
        [1, 2.5, 3],
        ["a", "b"],
        [],
        {"dist": "normal", "mean": 0.0, "std": 1.0},
        {"odd key": [1, {"x": True}]},
    ],
)
def test_toml_value_round_trips(value: object) -> None:
    parsed = tomllib.loads(f"v = {toml_value(value)}")["v"]
    assert parsed == value and type(parsed) is type(value)


def test_toml_value_special_cases() -> None:
    import numpy as np

    assert toml_value(True) == "true" and toml_value("x") == '"x"'
    assert toml_value(np.float64(0.5)) == "0.5" and toml_value(np.arange(3)) == "[0, 1, 2]"
    assert toml_value(math.inf) == "inf" and toml_value(-math.inf) == "-inf"
    assert math.isnan(tomllib.loads(f"v = {toml_value(math.nan)}")["v"])
    with pytest.raises(TypeError, match="None"):
        toml_value(None)
    with pytest.raises(TypeError):
        toml_value(object())
