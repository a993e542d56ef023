#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MPI scaling of `nhvk run`: wall time and peak memory per rank count on bench/configs/nh_particle_bench.toml (histogram
# quantiles), and whether the statistics equal those of the 1-rank run (they must: exact merge).
# Usage: bench/mpi_ranks.sh [build-dir] [trajectories] [ranks...]   (default: build 200000 1 2)
# Row "plain": `nhvk run` without mpirun (all cores). The ranks run with --bind-to none, so that one rank may use every
# core (OpenMPI binds each rank to one core by default when np <= 2); each rank takes cores/ranks threads
# (run.threads = 0). Writes a Markdown table to stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
n="${2:-200000}"
shift 2 || shift $# || true
ranks=("$@")
((${#ranks[@]})) || ranks=(1 2)
command -v mpirun >/dev/null || { echo "needs mpirun (Debian package openmpi-bin)" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
echo "| ranks | trajectories | threads per rank | wall s | traj/s | peak RSS MiB (largest process) | stats.csv equal to the plain run |"
echo "|---|---|---|---|---|---|---|"
for r in plain "${ranks[@]}"; do
    launch=(mpirun "${root[@]}" --oversubscribe --bind-to none -np "$r")
    [ "$r" = plain ] && launch=()
    /usr/bin/time -f "%e %M" -o "$out/time" "${launch[@]}" "$build/nhvk" run \
        "$here/bench/configs/nh_particle_bench.toml" -q --trajectories "$n" --out "$out/run$r" --set run.exact_memory_mb=0
    read -r wall rss_kb <"$out/time"
    same="yes"
    cmp -s "$out/runplain/stats.csv" "$out/run$r/stats.csv" || same="NO"
    python3 - "$out/run$r/summary.json" "$n" "$wall" "$rss_kb" "$r" "$same" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); n = int(sys.argv[2]); wall = float(sys.argv[3]); rss = int(sys.argv[4]) / 1024
print(f"| {sys.argv[5]} | {n} | {s['threads']} | {wall:.2f} | {n / wall:.0f} | {rss:.0f} | {sys.argv[6]} |")
PY
done
