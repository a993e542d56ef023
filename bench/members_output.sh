#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# members.nc's cost (issue 42's target: at >= 90 % of the throughput of the same run without it, peak memory within
# 10 %): bench/configs/nh_particle_bench.toml (40 output times) at N members, without and with --save-members (the
# default d_q and d_v), alternating, REPEATS times each: process wall time and peak resident memory (GNU time), the
# run's own time and integration time (summary.json), members.nc's size, and the ratios of the medians.
# Usage: bench/members_output.sh [build] [N] [repeats]   (defaults: build, 1000000, 2; BACKEND=cpu|cuda|auto,
#        default auto; THREADS for --threads; OUT: a folder on the file system to measure, default a temporary one;
#        about 4 × 50 s at 10^6 on the 2-core development machine, under a minute on a GPU)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
n="${2:-1000000}"
repeats="${3:-2}"
backend="${BACKEND:-auto}"
work="${OUT:-$(mktemp -d)}"
[ -n "${OUT:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
threads=()
[ -z "${THREADS:-}" ] || threads=(--threads "$THREADS")

one() { # label, extra args...
    local label="$1"
    shift
    rm -rf "$work/$label"
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$build/nhvk" run "$here/bench/configs/nh_particle_bench.toml" \
        --trajectories "$n" --backend "$backend" --out "$work/$label" -q "${threads[@]}" "$@"
    python3 - "$work/$label" "$work/time.txt" "$label" <<'EOF'
import json, os, sys
folder, timing, label = sys.argv[1:4]
wall, rss_kb = open(timing).read().split()
s = json.load(open(os.path.join(folder, "summary.json")))
t = s["timing"]
path = os.path.join(folder, "members.nc")
size = os.path.getsize(path) if os.path.exists(path) else 0
print(f"{label} {wall} {int(rss_kb) / 1024:.0f} {t['seconds']:.2f} {t['integration_seconds']:.2f} {size}")
EOF
}

echo "members_output.sh: N $n, backend $backend, commit $(git -C "$here" rev-parse --short HEAD), $(nproc) cores"
echo "label wall_s peak_rss_MiB run_s integration_s members_nc_bytes"
for ((i = 0; i < repeats; ++i)); do
    one plain
    one members --save-members
done | tee "$work/lines.txt"
python3 - "$work/lines.txt" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = lambda label, col: statistics.median(float(r[col]) for r in rows if r[0] == label)
print(f"throughput with/without members.nc (median wall): {med('plain', 1) / med('members', 1):.3f} (target >= 0.9)")
print(f"peak memory with/without (median): {med('members', 2) / med('plain', 2):.3f} (target <= 1.1)")
EOF
