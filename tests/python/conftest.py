"""Shared fixtures: the nhvk executable under test and two small runs the tests read.

The executable is the one the package would find: ``$NHVK_EXECUTABLE`` (run_pytest.sh sets it to the build's
nhvk), else ``nhvk`` on PATH.
"""

from __future__ import annotations

from pathlib import Path

import nhvk
import pytest
from support import CONFIGS


@pytest.fixture(scope="session")
def executable() -> str:
    try:
        return nhvk.find_executable()
    except nhvk.ExecutableNotFoundError as e:
        pytest.exit(f"tests/python need an nhvk executable: {e}", returncode=2)


@pytest.fixture(scope="session")
def quickstart(executable: str, tmp_path_factory: pytest.TempPathFactory) -> nhvk.Result:
    """configs/quickstart.toml with 200 trajectories."""
    out = tmp_path_factory.mktemp("quickstart") / "out"
    return nhvk.run(CONFIGS / "quickstart.toml", out=out, trajectories=200, progress=False)


@pytest.fixture(scope="session")
def sweep_folder(executable: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """configs/sweep_particle_mu0.toml with 100 trajectories per point (9 points), written by the CLI itself."""
    out = tmp_path_factory.mktemp("sweep") / "out"
    nhvk.run(CONFIGS / "sweep_particle_mu0.toml", out=out, set={"run.trajectories": 100}, progress=False)
    return out
