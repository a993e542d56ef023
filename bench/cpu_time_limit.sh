#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 44 on the CPU: how long a SIGTERM waits and what the record then holds, on runs of the sizes a batch job has.
# Each run is sent SIGTERM once its progress line shows a third done (no test hook: the machine's own speed); the
# table gives what run.log's stop line says (the chunks finished after the signal, the seconds from the signal to the
# written record, the members it holds) and the record's size, then the resume's exit code and whether its stats.csv
# equals an uninterrupted run's (when COMPARE=1; that doubles the time).
# Usage: bench/cpu_time_limit.sh [build-dir]     (about 3 minutes on 2 cores; COMPARE=1: about 5)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "| run | members | quantiles | done when signalled | record holds | chunks after the signal | signal → record s | record MB | resume | same stats.csv |"
echo "|---|---|---|---|---|---|---|---|---|---|"
case_() { # label members config args...
    local label="$1" n="$2" cfg="$3"
    shift 3
    local d="$out/run"
    rm -rf "$d" "$out/clean"
    "$build/nhvk" run "$cfg" --backend cpu --trajectories "$n" --out "$d" --progress-every 0.1 "$@" 2>"$out/err" &
    local pid=$! seen="" total=""
    while kill -0 "$pid" 2>/dev/null; do
        read -r seen total < <(grep -o 'progress [0-9]*/[0-9]*' "$out/err" | tail -1 | tr -c '0-9\n' ' ')
        if [ -n "$seen" ] && [ "$((3 * seen))" -ge "$total" ]; then break; fi
        sleep 0.05
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"
    local line mb q
    line=$(grep "stopped by SIGTERM" "$d/run.log")
    mb=$(python3 -c "import os; print(f'{os.path.getsize(\"$d/resume.nhvk\") / 2**20:.1f}')" 2>/dev/null || echo "-")
    local chunks secs holds
    chunks=$(sed -E 's/.*; ([0-9]+) chunks? finished after.*/\1/' <<<"$line")
    secs=$(sed -E 's/.*written ([0-9.]+) s after.*/\1/' <<<"$line")
    holds=$(sed -E 's/.* holds ([0-9]+) of .*/\1/' <<<"$line")
    "$build/nhvk" run "$cfg" --backend cpu --trajectories "$n" --out "$d" -q --resume "$@"
    local rc=$? same="-"
    q=$(python3 -c "import json; print(json.load(open('$d/summary.json'))['statistics']['quantiles'])" 2>/dev/null)
    if [ "${COMPARE:-0}" = 1 ]; then
        "$build/nhvk" run "$cfg" --backend cpu --trajectories "$n" --out "$out/clean" -q "$@"
        cmp -s "$out/clean/stats.csv" "$d/stats.csv" && same=yes || same=NO
    fi
    echo "| $label | $total | $q | $seen | $holds | $chunks | $secs | $mb | $rc | $same |"
}
case_ "DOPRI5 bench" 1000000 "$here/bench/configs/nh_particle_bench.toml"
case_ "nh_particle" 300000 "$here/configs/nh_particle.toml"
case_ "rolling_disc" 20000 "$here/configs/rolling_disc.toml"
case_ "sweep_particle_mu0 (per point)" 20000 "$here/configs/sweep_particle_mu0.toml"
