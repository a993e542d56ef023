#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Work–precision of the adaptive methods on the CPU (issue 43): for each model, `nhvk run configs/<model>.toml` samples
# M members (its parameters, output times and sampler); bench/work_precision.cpp integrates both dynamics of each
# with dopri5, tsit5 and dop853 at each rtol (atol = rtol / 100) and prints the right-hand sides counted, the steps,
# the CPU time of one core and the largest error against DOP853 at rtol 1e-14. One CSV table per model on stdout.
# Usage: bench/work_precision.sh [build-dir] [members] [model ...]
#   (default: build, 16 members, every model of configs/ that `nhvk models` lists)
# Environment: RTOLS (default "1e-6 1e-8 1e-10 1e-11 1e-12 5e-13 2e-13 1e-13"), CXX (default g++); WITH_RODAS=1 adds
# rodas5p (the stiff method; the last column counts its Jacobians' evaluations in dual numbers).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
members="${2:-16}"
shift $(($# < 2 ? $# : 2))
rtols="${RTOLS:-1e-6 1e-8 1e-10 1e-11 1e-12 5e-13 2e-13 1e-13}"
cxx="${CXX:-g++}"
[[ "$members" =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/work_precision.sh [build-dir] [members] [model ...]" >&2; exit 2; }
[ -x "$build/nhvk" ] || { echo "work_precision.sh: no $build/nhvk (build it first)" >&2; exit 2; }
[ -d "$build/gen/include/nhvk/generated" ] || { echo "work_precision.sh: no generated equations in $build/gen" >&2; exit 2; }
if (($# == 0)); then
    mapfile -t models < <("$build/nhvk" models --json | python3 -c 'import json,sys; [print(m["name"]) for m in json.load(sys.stdin)]')
else
    models=("$@")
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "work_precision.sh: compiling bench/work_precision.cpp" >&2
"$cxx" -std=c++17 -O3 -I"$here/include" -I"$build/gen/include" "$here/bench/work_precision.cpp" -o "$tmp/work_precision"

for model in "${models[@]}"; do
    config="$here/configs/$model.toml"
    if [ ! -f "$config" ]; then
        echo "work_precision.sh: no configs/$model.toml, skipped" >&2
        continue
    fi
    echo "work_precision.sh: $model" >&2
    "$build/nhvk" run "$config" --trajectories "$members" --save-samples --out "$tmp/$model" -q >/dev/null
    python3 - "$tmp/$model" "$rtols" >"$tmp/$model.in" <<'PY'
import csv, json, sys
out, rtols = sys.argv[1], sys.argv[2]
s = json.load(open(out + "/summary.json"))
print("model", s["config"]["model"]["name"])
for name, value in s["config"]["model"]["params"].items():
    if isinstance(value, bool): value = 1.0 if value else 0.0
    if isinstance(value, (int, float)): print("param", name, repr(float(value)))
print("times", " ".join(repr(t) for t in s["times"]))
for row in csv.DictReader(open(out + "/samples.csv")):
    if row["sample_status"] != "ok": continue
    cols = [c for c in row if c.startswith("q0_")] + [c for c in row if c.startswith("v0_")] + \
           [c for c in row if c.startswith("mu0_")]
    print("member", " ".join(row[c] for c in cols))
print("rtols", rtols)
PY
    "$tmp/work_precision" "$tmp/$model.in"
done
