"""nhvk.open: the errors, and a sweep folder's sweep.nc against sweep.csv and sweep_points.csv."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import nhvk
import numpy as np
import pytest
from support import CONFIGS, EXAMPLES, csv_float, read_csv

UNSIGNED = ("count", "nonfinite", "outside_range")


def test_open_refuses_a_folder_without_summary(tmp_path: Path) -> None:
    (tmp_path / "stats.csv").write_text("")
    with pytest.raises(nhvk.NhvkError, match="no summary.json"):
        nhvk.open(tmp_path)
    with pytest.raises(nhvk.NhvkError, match="not a folder"):
        nhvk.open(tmp_path / "missing")


def test_open_reads_the_summary(sweep_folder: Path) -> None:
    res = nhvk.open(sweep_folder)
    assert res.folder == sweep_folder and res.stderr is None
    assert res.summary["trajectories"]["requested"] == 900
    assert res.sweep_axes == ["mu_scale"]
    assert "sweep: 9 points over mu_scale" in repr(res)


@pytest.mark.netcdf
def test_sweep_axis_and_per_point_results_equal_sweep_points_csv(sweep_folder: Path) -> None:
    rows = read_csv(sweep_folder / "sweep_points.csv")
    sweep = nhvk.open(sweep_folder).sweep
    assert sweep is not None
    assert sweep["point"].dtype == np.int64
    np.testing.assert_array_equal(sweep["point"].values, [int(r["point"]) for r in rows])
    assert sweep["mu_scale"].dims == ("point",)
    np.testing.assert_array_equal(sweep["mu_scale"].values, [float(r["mu_scale"]) for r in rows])
    for column in rows[0]:
        if column in ("point", "mu_scale"):
            continue
        assert sweep[column].dims == ("point",), column
        if column == "quantiles":
            assert list(sweep[column].values) == [r[column] for r in rows]
        elif sweep[column].dtype.kind in "iu":
            assert list(sweep[column].values) == [int(r[column]) for r in rows], column
        else:
            expected = np.array([csv_float(r[column]) for r in rows])
            assert np.array_equal(sweep[column].values, expected, equal_nan=True), column


@pytest.mark.netcdf
def test_sweep_statistics_equal_sweep_csv(sweep_folder: Path) -> None:
    rows = read_csv(sweep_folder / "sweep.csv")
    sweep = nhvk.open(sweep_folder).sweep
    assert sweep is not None
    shape = (sweep.sizes["point"], sweep.sizes["time"], sweep.sizes["metric"])
    assert shape == (9, 40, 10) and len(rows) == np.prod(shape)
    assert list(sweep["metric"].values) == list(dict.fromkeys(r["metric"] for r in rows))
    np.testing.assert_array_equal(sweep["time"].values, [float(r["t"]) for r in rows[: shape[1] * shape[2] : shape[2]]])
    skip = {"point", "mu_scale", "time_index", "t", "metric", "alive_fraction"}
    for column in (c for c in rows[0] if c not in skip):
        assert sweep[column].dims == ("point", "time", "metric"), column
        if column in UNSIGNED:
            assert sweep[column].dtype == np.uint64
            expected = np.array([int(r[column]) for r in rows], dtype=np.uint64)
        else:
            expected = np.array([csv_float(r[column]) for r in rows])
        assert np.array_equal(sweep[column].values.reshape(-1), expected, equal_nan=True), column
    alive = np.array([csv_float(r["alive_fraction"]) for r in rows]).reshape(shape)[:, :, 0]
    assert sweep["alive_fraction"].dims == ("point", "time")
    np.testing.assert_array_equal(sweep["alive_fraction"].values, alive)


@pytest.mark.netcdf
def test_sweep_axes_name_the_coordinates_in_axis_order(executable: str, tmp_path: Path) -> None:
    from nhvk._toml import tomllib

    with (CONFIGS / "sweep_particle_mu0.toml").open("rb") as f:
        config = tomllib.load(f)
    config["run"]["trajectories"] = 20
    config["times"]["count"] = 8
    config["sweep"]["axes"] = [
        {"key": "initial.v.x.std", "name": "v_std", "values": [0.5, 1.0]},
        {"key": "initial.mu.std", "name": "mu scale/0", "values": [0.01, 0.1, 1.0]},  # not a plain NetCDF name
    ]
    res = nhvk.run(config, out=tmp_path / "out", progress=False)
    axes = res.sweep_axes
    assert res.sweep is not None and len(axes) == 2 and axes[0] == "v_std"
    assert res.sweep[axes[1]].attrs["name"] == "mu scale/0"
    rows = read_csv(tmp_path / "out" / "sweep_points.csv")
    for axis, column in zip(axes, ["v_std", "mu scale/0"]):
        np.testing.assert_array_equal(res.sweep[axis].values, [float(r[column]) for r in rows])


def count_code_lines(path: Path) -> int:
    """Lines of the example that are not blank, not comments and not part of an import statement."""
    source = path.read_text(encoding="utf-8")
    import_lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            import_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    count = 0
    for number, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and number not in import_lines:
            count += 1
    return count


def test_sweep_figure_example_is_at_most_8_lines() -> None:
    assert count_code_lines(EXAMPLES / "sweep_figure.py") <= 8


@pytest.mark.netcdf
def test_sweep_figure_example_writes_a_png(sweep_folder: Path, tmp_path: Path) -> None:
    png = tmp_path / "sweep.png"
    subprocess.run(
        [sys.executable, str(EXAMPLES / "sweep_figure.py"), str(sweep_folder), str(png)],
        check=True,
        timeout=120,
    )
    data = png.read_bytes()
    assert len(data) > 10_000 and data.startswith(b"\x89PNG\r\n\x1a\n")
