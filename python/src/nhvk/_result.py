"""A finished nhvk output folder: summary.json, and the NetCDF files as xarray Datasets."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._executable import PathLike
from .errors import NhvkError

if TYPE_CHECKING:  # xarray takes a second to import: only when a Dataset is asked for
    import xarray


def _load_dataset(path: Path) -> xarray.Dataset:
    """The whole file in memory, the file closed again (no handle left open on a cluster file system).

    Times are model time units, not calendar times or durations: nothing is decoded as a date or timedelta.
    """
    import xarray as xr

    with xr.open_dataset(path, engine="netcdf4", decode_times=False, decode_timedelta=False) as ds:
        return ds.load()


class Result:
    """The outputs of one ``nhvk run`` (or ``nhvk merge``): a folder holding ``summary.json``.

    The Datasets are read on first access and kept; the statistics are loaded whole into memory and their files
    closed, ``members`` is opened lazily.

    Attributes:
        folder: the output folder.
        stderr: what ``nhvk run`` wrote to stderr (progress, notes, the summary) for a result of :func:`nhvk.run`;
            ``None`` for one of :func:`nhvk.open`.
    """

    def __init__(self, folder: PathLike, *, stderr: str | None = None) -> None:
        self.folder: Path = Path(folder)
        self.stderr: str | None = stderr
        summary_path = self.folder / "summary.json"
        if not self.folder.is_dir():
            raise NhvkError(f"{str(self.folder)!r} is not a folder: no nhvk outputs there")
        if not summary_path.is_file():
            raise NhvkError(
                f"{str(self.folder)!r} holds no summary.json, so no finished nhvk run: nhvk writes summary.json "
                "last, once every output is in place (a run still going, interrupted or failed leaves none; an "
                "interrupted one goes on with nhvk.run(..., resume=True))"
            )
        try:
            self.summary: dict[str, Any] = json.loads(summary_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise NhvkError(f"cannot read {str(summary_path)!r}: {e}") from e

    # --- files ------------------------------------------------------------------------------------------------
    @property
    def report(self) -> Path:
        """The path of ``report.html`` (open it in a browser)."""
        return self.folder / "report.html"

    def _require(self, name: str, what: str) -> Path:
        path = self.folder / name
        if not path.is_file():
            version = self.summary.get("nhvk_version", "unknown")
            raise NhvkError(
                f"{str(self.folder)!r} has no {name} ({what}): the nhvk that wrote it (version {version}) wrote no "
                "NetCDF files, as an nhvk built without the netCDF library does (CMake option NHVK_ENABLE_NETCDF, "
                "Debian's libnetcdf-dev) or one older than its NetCDF output; the same numbers are in the CSV files"
            )
        return path

    @cached_property
    def stats(self) -> xarray.Dataset:
        """``stats.nc``: every statistic of every metric over (time, metric), as ``stats.csv`` holds them."""
        return _load_dataset(self._require("stats.nc", "the statistics per output time and metric"))

    @cached_property
    def sweep(self) -> xarray.Dataset | None:
        """``sweep.nc``: the statistics per sweep point over (point, time, metric), and the per-point results
        of ``sweep_points.csv``; ``None`` for a run without a ``[sweep]``."""
        if "sweep" not in self.summary and not (self.folder / "sweep.nc").is_file():
            return None
        return _load_dataset(self._require("sweep.nc", "the statistics per sweep point"))

    @cached_property
    def members(self) -> xarray.Dataset | None:
        """``members.nc`` (every member's metrics at every output time), or ``None`` when the run wrote none.

        Opened lazily, unlike the statistics: it can be larger than memory (712 MB for 10^6 members at 40 output
        times and two metrics). Values are read as they are used; ``.load()`` reads them all, ``.close()`` closes
        the file.
        """
        path = self.folder / "members.nc"
        if not path.is_file():
            return None
        import xarray as xr

        return xr.open_dataset(path, engine="netcdf4", decode_times=False, decode_timedelta=False)

    # --- conveniences from summary.json -----------------------------------------------------------------------
    @property
    def sweep_axes(self) -> list[str]:
        """The names of the sweep axes' coordinates in :attr:`sweep` (along ``point``), in the sweep's axis order;
        ``[]`` without a sweep.

        Read from sweep.nc rather than summary.json: an axis whose name is not a plain NetCDF name (or is taken by
        a variable) is stored as ``axis_<name>``, with its ``name`` and ``sweep_key`` as attributes.
        """
        sweep = self.sweep
        if sweep is None:
            return []
        along_point = [str(n) for n, c in sweep.coords.items() if c.dims == ("point",) and n != "point"]
        keyed = [n for n in along_point if "sweep_key" in sweep[n].attrs]
        axes = keyed or along_point
        order = [axis.get("key") for axis in (self.summary.get("sweep") or {}).get("axes", [])]
        rank = {key: i for i, key in enumerate(order)}
        return sorted(axes, key=lambda n: rank.get(sweep[n].attrs.get("sweep_key"), len(order)))

    @property
    def model(self) -> str | None:
        """The model's name."""
        return (self.summary.get("model") or {}).get("name")

    def __repr__(self) -> str:
        s = self.summary
        traj = s.get("trajectories") or {}
        failed = traj.get("failed")
        failed_total = failed.get("total") if isinstance(failed, dict) else failed
        diverged = (traj.get("diverged") or {}).get("count") if isinstance(traj.get("diverged"), dict) else None
        times = s.get("times") or []
        lines = [f"<nhvk.Result {str(self.folder)!r}"]
        counts = f"valid {traj.get('valid')}, failed {failed_total}"
        if diverged:
            counts += f", diverged {diverged}"
        head = f"  model {self.model}, {traj.get('requested')} trajectories ({counts})"
        if times:
            head += f", {len(times)} output times up to t = {times[-1]:g}"
        lines.append(head)
        growth = s.get("growth_exponent") or {}
        amplitude = (growth.get("amplitude") or {}).get("q")
        coincidence = s.get("coincidence") or {}
        if coincidence.get("coincide"):  # then p and C describe rounding noise, if anything
            lines.append(
                f"  the two dynamics coincide for this ensemble ({coincidence.get('basis')}: summary['coincidence'])"
            )
        elif growth.get("q") is not None and amplitude is not None:
            lines.append(f"  median d_q ~ C t^p: p = {growth['q']:.4g}, C = {amplitude:.4g}")
        sweep = s.get("sweep") or {}
        if sweep:  # from summary.json, not to read sweep.nc for a repr
            names = ", ".join(str(axis.get("name")) for axis in sweep.get("axes", []))
            lines.append(f"  sweep: {len(sweep.get('points', []))} points over {names}")
        present = [n for n in ("stats.nc", "sweep.nc", "members.nc", "report.html") if (self.folder / n).is_file()]
        lines.append(f"  files: summary.json, {', '.join(present)}>" if present else "  files: summary.json>")
        return "\n".join(lines)


def open(folder: PathLike) -> Result:
    """The results in a finished nhvk output folder (one that holds ``summary.json``).

    Raises:
        NhvkError: the folder does not exist or holds no (readable) summary.json.
    """
    return Result(folder)
