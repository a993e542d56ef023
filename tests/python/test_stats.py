"""nhvk.run on configs/quickstart.toml: summary.json and stats.nc, against stats.csv number for number."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import nhvk
import numpy as np
import pytest
from support import csv_float, read_csv

INTEGER_COLUMNS = ("count", "nonfinite", "outside_range")
# The columns of stats.csv that are not statistics over (time, metric).
ROW_KEYS = ("time_index", "t", "metric", "alive_fraction")


def test_run_returns_the_folder_and_its_summary(quickstart: nhvk.Result) -> None:
    assert quickstart.folder.is_dir()
    assert quickstart.summary["trajectories"]["requested"] == 200
    assert quickstart.summary["model"]["name"] == "nh_particle"
    assert quickstart.report == quickstart.folder / "report.html"
    assert quickstart.report.is_file()
    assert quickstart.sweep is None
    assert quickstart.sweep_axes == []
    assert "valid 200" in (quickstart.stderr or "")


def test_repr_names_the_folder_model_and_counts(quickstart: nhvk.Result) -> None:
    text = repr(quickstart)
    assert str(quickstart.folder) in text
    assert "nh_particle" in text and "200 trajectories" in text


@pytest.mark.netcdf
def test_stats_equal_stats_csv_exactly(quickstart: nhvk.Result) -> None:
    rows = read_csv(quickstart.folder / "stats.csv")
    ds = quickstart.stats
    metrics = list(dict.fromkeys(row["metric"] for row in rows))
    times = [csv_float(row["t"]) for row in rows if row["metric"] == metrics[0]]
    assert metrics[:2] == ["d_q", "d_v"] and len(metrics) == 10
    assert list(ds["metric"].values) == metrics
    assert ds.sizes == {"time": len(times), "metric": len(metrics)}
    np.testing.assert_array_equal(ds["time"].values, np.array(times))

    stat_columns = [c for c in rows[0] if c not in ROW_KEYS]
    assert len(stat_columns) == 3 + 11 + 27
    for column in stat_columns:
        assert ds[column].dims == ("time", "metric"), column
        if column in INTEGER_COLUMNS:
            assert ds[column].dtype == np.uint64, column
            expected = np.array([int(row[column]) for row in rows], dtype=np.uint64)
        else:
            assert ds[column].dtype == np.float64, column
            expected = np.array([csv_float(row[column]) for row in rows])
        got = ds[column].values.reshape(-1)  # (time, metric) in C order: the rows' order
        assert np.array_equal(got, expected, equal_nan=True), column
    # Some intervals are empty at 200 members (p01 and p99 need about 800): NaN in the Dataset.
    assert math.isnan(ds["p99_lo"].sel(metric="d_q").values[0])

    alive = [csv_float(row["alive_fraction"]) for row in rows if row["metric"] == metrics[0]]
    assert ds["alive_fraction"].dims == ("time",)
    np.testing.assert_array_equal(ds["alive_fraction"].values, np.array(alive))


@pytest.mark.netcdf
def test_stats_carries_units_definitions_and_provenance(quickstart: nhvk.Result) -> None:
    ds = quickstart.stats
    summary_metrics = quickstart.summary["metrics"]
    for metric, unit, definition in zip(ds["metric"].values, ds["metric_unit"].values, ds["metric_definition"].values):
        assert unit == summary_metrics[metric]["unit"]
        assert definition == summary_metrics[metric]["definition"]
    assert ds.attrs["model"] == "nh_particle"
    assert ds.attrs["nhvk_version"] == quickstart.summary["nhvk_version"]
    assert "trajectories" in ds.attrs["config"]
    import json

    assert json.loads(ds.attrs["summary_json"]) == quickstart.summary


@pytest.mark.netcdf
def test_datasets_are_loaded_once_and_their_files_closed(quickstart: nhvk.Result, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(quickstart.folder, copy)
    res = nhvk.open(copy)
    stats = res.stats
    assert res.stats is stats  # read on first access, then kept
    (copy / "stats.nc").unlink()  # the values are in memory: no open file is needed
    assert float(stats["p50"].sel(metric="d_q").values[-1]) == float(
        quickstart.stats["p50"].sel(metric="d_q").values[-1]
    )


def test_stats_of_a_folder_without_stats_nc_says_why(quickstart: nhvk.Result, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(quickstart.folder, copy)
    (copy / "stats.nc").unlink(missing_ok=True)
    with pytest.raises(nhvk.NhvkError, match="no stats.nc"):
        _ = nhvk.open(copy).stats
    assert nhvk.open(copy).members is None
