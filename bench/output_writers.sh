#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The output writers of a large sweep: configs/sweep_particle_mu0.toml at POINTS points of MEMBERS members, one thread;
# the process's wall time and peak memory, the pipeline's own time (summary.json), and how long each output took to
# write (from the opening of its temporary to the next one's, by strace), with its size.
# Usage: bench/output_writers.sh [build-dir] [points] [members]   (defaults: build, 2000, 20; about 1.5 minutes on
#        2 cores; needs strace and GNU time)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
points="${2:-2000}"
members="${3:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sed -e "s/^count = 9\$/count = $points/" -e "s/^trajectories = 1000\$/trajectories = $members/" \
    "$here/configs/sweep_particle_mu0.toml" >"$work/big.toml"
grep -q "^count = $points\$" "$work/big.toml" || { echo "output_writers.sh: the config's sweep count changed" >&2; exit 1; }
/usr/bin/time -v "$build/nhvk" run "$work/big.toml" --out "$work/a" -q --threads 1 2>"$work/time.txt"
echo "points $points, members per point $members, commit $(git -C "$here" rev-parse --short HEAD)"
grep -E "Elapsed|Maximum resident" "$work/time.txt" | sed 's/^\s*/  /'
python3 -c "import json,sys; print('  pipeline seconds', json.load(open(sys.argv[1]))['timing']['seconds'])" \
    "$work/a/summary.json"
strace -f -tt -e trace=openat -o "$work/strace.txt" "$build/nhvk" run "$work/big.toml" --out "$work/b" -q --threads 1
# each output's temporary, first opening only, in order, with the time it was opened
grep -oE '^[0-9]+ +[0-9:.]+ openat\(AT_FDCWD, "[^"]*/b/[a-z_.]+\.tmp\.[0-9]+"' "$work/strace.txt" |
    awk 'BEGIN { n = 0 } { split($2, t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]; f = $NF; sub(/.*\/b\//, "", f); sub(/\.tmp\..*/, "", f);
           if (!(f in seen)) { seen[f] = 1; name[n] = f; at[n++] = s } }
           END { for (i = 0; i + 1 < n; ++i) printf "  %-18s %7.2f s\n", name[i], at[i + 1] - at[i] }'
ls -l "$work/b" | awk 'NR > 1 { printf "  %-18s %12d bytes\n", $NF, $5 }'
