"""nhvk.run: configs as files and dicts, overrides, CLI options, errors, progress, interruption and resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import nhvk
import pytest
from nhvk._process import PROGRESS_LINE
from nhvk._toml import tomllib
from support import CONFIGS, REPO


def quickstart_dict() -> dict[str, Any]:
    with (CONFIGS / "quickstart.toml").open("rb") as f:
        return tomllib.load(f)


def test_dict_config_runs_with_its_own_settings(executable: str, tmp_path: Path) -> None:
    config = quickstart_dict()
    config["run"]["trajectories"] = 60
    config["times"]["count"] = 12
    res = nhvk.run(config, out=tmp_path / "out", progress=False)
    assert res.folder == tmp_path / "out"
    assert res.summary["trajectories"]["requested"] == 60
    assert len(res.summary["times"]) == 12


def test_dict_config_run_out_is_taken_from_the_current_directory(
    executable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = quickstart_dict()
    config["run"].update(trajectories=20, out="relative/out")
    monkeypatch.chdir(tmp_path)
    res = nhvk.run(config, progress=False)
    assert res.folder == tmp_path / "relative" / "out"
    assert (tmp_path / "relative" / "out" / "summary.json").is_file()


def test_without_any_out_the_run_goes_to_a_fresh_temporary_folder(executable: str) -> None:
    config = quickstart_dict()
    del config["run"]["out"]
    config["run"]["trajectories"] = 20
    res = nhvk.run(config, progress=False)
    try:
        assert res.folder.is_dir() and res.folder.name.startswith("nhvk-run-")
        assert res.summary["trajectories"]["requested"] == 20
    finally:
        import shutil

        shutil.rmtree(res.folder)


def test_config_file_run_out_is_relative_to_the_current_directory(
    executable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # quickstart.toml says out = "out/quickstart"
    res = nhvk.run(CONFIGS / "quickstart.toml", trajectories=20, progress=False)
    assert res.folder == tmp_path / "out" / "quickstart"
    assert res.summary["config"]["run"]["out"] == str(tmp_path / "out" / "quickstart")


def test_dict_config_model_file_is_taken_from_the_current_directory(
    executable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = quickstart_dict()
    config["model"] = {"file": "models/nh_particle.toml"}  # relative to the repository, the current directory
    config["run"]["trajectories"] = 20
    config["times"]["count"] = 5
    monkeypatch.chdir(REPO)
    res = nhvk.run(config, out=tmp_path / "out", progress=False)
    assert res.summary["model_file"]["source"] == str(REPO / "models" / "nh_particle.toml")


def test_set_and_double_underscore_overrides_reach_the_run(executable: str, tmp_path: Path) -> None:
    res = nhvk.run(
        CONFIGS / "quickstart.toml",
        out=tmp_path / "out",
        progress=False,
        set={"run.trajectories": 40, "divergence.onset_threshold": 0.05},
        run__seed=7,
        initial__mu={"dist": "normal", "mean": 0.0, "std": 0.25},
        divergence__metric="kinetic",
        times__count=9,
    )
    config = res.summary["config"]
    assert res.summary["trajectories"]["requested"] == 40
    assert config["run"]["seed"] == 7
    assert config["divergence"]["onset_threshold"] == 0.05
    assert config["initial"]["mu"] == [{"dist": "normal", "mean": 0.0, "std": 0.25}]
    assert config["divergence"]["metric"] == "kinetic"
    assert len(res.summary["times"]) == 9


def test_cli_options_as_keywords(executable: str, tmp_path: Path) -> None:
    res = nhvk.run(
        CONFIGS / "quickstart.toml",
        out=tmp_path / "out",
        progress=False,
        trajectories=30,
        seed=11,
        threads=1,
        chunk=16,
        backend="cpu",
        save_samples=True,
        save_trajectories=2,
    )
    assert res.summary["trajectories"]["requested"] == 30
    assert res.summary["config"]["run"]["seed"] == 11
    assert res.summary["threads"] == 1
    assert res.summary["backend"] == "cpu"
    assert res.summary["config"]["run"]["chunk"] == 16
    assert (res.folder / "samples.csv").is_file()
    assert sorted(p.name for p in (res.folder / "trajectories").iterdir()) == [
        "trajectory_000000.csv",
        "trajectory_000001.csv",
    ]


@pytest.mark.netcdf
def test_save_members_gives_every_members_series_as_a_dataset(executable: str, tmp_path: Path) -> None:
    res = nhvk.run(
        CONFIGS / "quickstart.toml",
        out=tmp_path / "out",
        progress=False,
        trajectories=40,
        save_members=True,
        save_samples=True,
    )
    members = res.members
    assert members is not None
    assert dict(members["d_q"].sizes) == {"member": 40, "time": len(res.stats["time"])}
    assert list(members["member"].values) == list(range(40))
    # the last output time's d_q of each member is samples.csv's d_q_final (17 digits: the same double)
    lines = (res.folder / "samples.csv").read_text().splitlines()
    column = lines[0].split(",").index("d_q_final")
    finals = [line.split(",")[column] for line in lines[1:]]
    assert sum(1 for text in finals if text) > 30
    for j, text in enumerate(finals):
        if text:
            assert float(members["d_q"].values[j, -1]) == float(text)


def test_bad_key_raises_nhvk_error_with_the_cli_text(executable: str, tmp_path: Path) -> None:
    with pytest.raises(nhvk.NhvkError) as info:
        nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out", progress=False, run__bogus=1)
    e = info.value
    assert isinstance(e, RuntimeError)
    assert "unknown key" in str(e) and "run.bogus" in str(e)
    assert str(e).startswith("nhvk: error:")
    assert e.returncode == 2
    assert e.command is not None and e.command[1] == "run" and "run.bogus=1" in e.command
    assert e.stderr is not None and "unknown key" in e.stderr


def test_bad_value_names_the_config_file_position(executable: str, tmp_path: Path) -> None:
    with pytest.raises(nhvk.NhvkError, match=r"times\.t_first"):
        nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out", progress=False, times__t_end=1e-9)


def test_keyword_without_double_underscore_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="run__trajectories"):
        nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out", trajectory=10)


def test_missing_executable_names_all_three_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NHVK_EXECUTABLE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no nhvk on PATH
    with pytest.raises(nhvk.ExecutableNotFoundError) as info:
        nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out")
    message = str(info.value)
    assert "executable=" in message and "NHVK_EXECUTABLE" in message and "PATH" in message
    with pytest.raises(FileNotFoundError):
        nhvk.models()


def test_explicit_executable_that_does_not_exist_is_an_error_not_a_fallback(
    executable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(nhvk.ExecutableNotFoundError, match="executable= argument"):
        nhvk.models(executable=tmp_path / "no-such-nhvk")
    monkeypatch.setenv("NHVK_EXECUTABLE", str(tmp_path / "no-such-nhvk"))
    with pytest.raises(nhvk.ExecutableNotFoundError, match="NHVK_EXECUTABLE"):
        nhvk.models()
    assert nhvk.models(executable=executable)  # the argument comes before the environment


def test_progress_bar_and_other_lines_go_to_stderr(
    executable: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    res = nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out", trajectories=100)
    err = capsys.readouterr().err
    assert "nhvk run" in err and "100/100" in err  # the bar at its end
    assert "valid 100, failed 0" in err  # nhvk's summary, echoed
    assert "[nhvk] progress" not in err  # the progress lines became the bar
    assert "[nhvk] progress" in (res.stderr or "")  # and are kept in the result


def test_progress_off_prints_nothing(executable: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out", trajectories=30, progress=False)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_progress_line_format() -> None:
    m = PROGRESS_LINE.match("[nhvk] progress 8192/12000 ( 68.3%)  recorded 4096  2.8e+04 traj/s  ETA 0.1s")
    assert m is not None
    assert (m["done"], m["total"], m["recorded"], m["rate"], m["eta"]) == ("8192", "12000", "4096", "2.8e+04", "0.1s")
    assert PROGRESS_LINE.match("[nhvk] progress 32/2000 (  1.6%)  recorded 0  8575 traj/s  ETA 0.2s")


def fake_nhvk(tmp_path: Path, body: str) -> Path:
    """An executable standing in for nhvk, for the exits a real run cannot be made to give on demand."""
    path = tmp_path / "fake-nhvk"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_exit_143_is_an_interruption_that_says_resume(tmp_path: Path) -> None:
    fake = fake_nhvk(
        tmp_path,
        'echo "[nhvk] progress 10/100 ( 10.0%)  recorded 0  1e+03 traj/s  ETA 0.1s" >&2\n'
        'echo "nhvk: stopped by SIGTERM after 10 of 100 trajectories" >&2\n'
        "exit 143\n",
    )
    with pytest.raises(nhvk.NhvkInterrupted) as info:
        nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out", executable=fake, progress=False)
    e = info.value
    assert isinstance(e, nhvk.NhvkError)
    assert e.returncode == 143
    assert "interrupted" in str(e) and "resume=True" in str(e) and "SIGTERM" in str(e)


def test_a_kill_is_an_interruption_too(tmp_path: Path) -> None:
    fake = fake_nhvk(tmp_path, "kill -9 $$\n")
    with pytest.raises(nhvk.NhvkInterrupted, match="SIGKILL") as info:
        nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out", executable=fake, progress=False)
    assert info.value.returncode == -9


def test_nonzero_exit_without_error_lines_keeps_the_last_lines(tmp_path: Path) -> None:
    fake = fake_nhvk(tmp_path, 'echo "something went wrong" >&2\nexit 4\n')
    with pytest.raises(nhvk.NhvkError, match=r"(?s)status 4.*something went wrong") as info:
        nhvk.run(CONFIGS / "quickstart.toml", out=tmp_path / "out", executable=fake, progress=False)
    assert info.value.returncode == 4
    assert not isinstance(info.value, nhvk.NhvkInterrupted)


def child_pids_with(argument: str) -> list[int]:
    """The processes of this user whose command line holds `argument` (here: a unique output folder)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argument.encode() in args and int(entry.name) != os.getpid():
                pids.append(int(entry.name))
    return pids


def running_nhvk(out: Path, cpu_seconds: float = 0.3, timeout: float = 60) -> int:
    """The pid of the nhvk writing to `out`, once it has used `cpu_seconds` of CPU time.

    A signal must reach nhvk after its start-up (before it installs its handlers a signal just kills it, and a
    wrapper script may still be exec'ing it); CPU time, unlike a sleep, says so also on a loaded machine.
    """
    ticks = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in child_pids_with(str(out)):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if (int(fields[11]) + int(fields[12])) / ticks >= cpu_seconds:  # utime + stime
                return pid
        time.sleep(0.02)
    raise AssertionError(f"no nhvk run writing {out} got going within {timeout} s")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the child process through /proc")
def test_sigterm_interrupts_and_resume_true_finishes(executable: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    trajectories = 60000  # a few seconds on two cores: long enough to be stopped half-way
    error: list[BaseException | None] = [None]

    def target() -> None:
        try:
            nhvk.run(CONFIGS / "quickstart.toml", out=out, trajectories=trajectories, threads=2, progress=False)
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread
            error[0] = e

    worker = threading.Thread(target=target)
    worker.start()
    os.kill(running_nhvk(out), signal.SIGTERM)
    worker.join(60)
    assert isinstance(error[0], nhvk.NhvkInterrupted), error[0]
    assert error[0].returncode == 143
    assert not (out / "summary.json").exists()

    res = nhvk.run(
        CONFIGS / "quickstart.toml", out=out, trajectories=trajectories, threads=2, resume=True, progress=False
    )
    assert res.summary["trajectories"]["requested"] == trajectories
    assert res.summary["job"]["resumed_at"], res.summary["job"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the child process through /proc")
def test_ctrl_c_in_python_stops_nhvk_gracefully_and_stays_a_keyboard_interrupt(executable: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    script = (
        "import nhvk, sys\n"
        f"nhvk.run({str(CONFIGS / 'quickstart.toml')!r}, out={str(out)!r}, trajectories=200000, threads=2,"
        " progress=False)\n"
    )
    python = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    running_nhvk(out)
    python.send_signal(signal.SIGINT)  # what Ctrl-C at a terminal or Jupyter's interrupt sends to Python
    _, err = python.communicate(timeout=60)
    assert python.returncode != 0
    assert "KeyboardInterrupt: nhvk run was interrupted (SIGINT, exit status 130)" in err
    assert "resume=True" in err
    assert (out / "resume.nhvk").is_file()  # nhvk's graceful stop wrote its record
    assert not (out / "summary.json").exists()
