#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Work–precision on stiff configurations (issue 43 item 3): for each config, `nhvk run` samples M members (its model,
# parameters, output times and sampler); each is integrated by `nhvk trajectory --steps` with dopri5, dop853 and
# rodas5p at each rtol (atol = rtol / 100). Per (method, rtol) this prints the attempted and rejected steps of both
# dynamics summed over the members, the wall seconds of the trajectory commands, and the largest error of any state
# component at any output time against a reference (dop853 at rtol 1e-13, checked against rodas5p at 1e-12).
# One CSV table per config on stdout. Through the product's own commands, so a model file's config works too.
# Usage: bench/stiff.sh [build-dir] [members] [config ...]
#   (default: build, 4 members, configs/stiff_spring_pair.toml and configs/perpendicular_velocities.toml with
#    kappa = 1e4, the undamped stiff spring)
# Environment: RTOLS (default "1e-4 1e-6 1e-8 1e-10"), METHODS (default "dopri5 dop853 rodas5p"); SET: extra
# `--set` overrides for every config, separated by blanks.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
members="${2:-4}"
shift $(($# < 2 ? $# : 2))
[[ "$members" =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/stiff.sh [build-dir] [members] [config ...]" >&2; exit 2; }
[ -x "$build/nhvk" ] || { echo "stiff.sh: no $build/nhvk (build it first)" >&2; exit 2; }
if (($# == 0)); then
    set -- "$here/configs/stiff_spring_pair.toml" "$here/configs/perpendicular_velocities.toml:model.params.kappa=1e4"
fi
export NHVK_BIN="$build/nhvk" RTOLS="${RTOLS:-1e-4 1e-6 1e-8 1e-10}" METHODS="${METHODS:-dopri5 dop853 rodas5p}"
export MEMBERS="$members"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for spec in "$@"; do
    # CONFIG[:SET[,SET...]]: overrides for this config alone
    config="${spec%%:*}"
    sets=()
    if [[ "$spec" == *:* ]]; then IFS=, read -r -a sets <<<"${spec#*:}"; fi
    for s in ${SET:-}; do sets+=("$s"); done
    args=()
    for s in "${sets[@]}"; do args+=(--set "$s"); done
    echo "stiff.sh: $config ${sets[*]}" >&2
    rm -rf "$tmp/run"
    "$build/nhvk" run "$config" "${args[@]}" --trajectories "$members" --save-samples --out "$tmp/run" -q >/dev/null
    python3 - "$tmp/run" "$config" "${sets[*]}" <<'PY'
import csv, json, os, subprocess, sys, time
out, config, sets = sys.argv[1], sys.argv[2], sys.argv[3]
nhvk = os.environ["NHVK_BIN"]
rtols = os.environ["RTOLS"].split()
methods = os.environ["METHODS"].split()
s = json.load(open(os.path.join(out, "summary.json")))
model = s["config"]["model"]
# a model file's run records the file as the run named it (model_file.source, relative to the working directory)
name = s["model_file"]["source"] if s.get("model_file") else model["name"]
params = [f"{k}={float(v) if not isinstance(v, bool) else int(v)!r}" for k, v in model.get("params", {}).items()
          if isinstance(v, (bool, int, float))]
times = s["times"]
rows = [r for r in csv.DictReader(open(os.path.join(out, "samples.csv"))) if r["sample_status"] == "ok"]
label = os.path.basename(config) + (" " + sets if sets else "")

def trajectory(row, method, rtol):
    q0 = ",".join(row[c] for c in row if c.startswith("q0_"))
    v0 = ",".join(row[c] for c in row if c.startswith("v0_"))
    mu0 = ",".join(row[c] for c in row if c.startswith("mu0_"))
    cmd = [nhvk, "trajectory", "--model", name, "--q0", q0, "--v0", v0, "--t-end", repr(times[-1]),
           "--times", ",".join(repr(t) for t in times), "--method", method, "--rtol", repr(float(rtol)),
           "--atol", repr(float(rtol) / 100), "--steps", "--max-steps", "100000000"]
    if mu0: cmd += ["--mu0", mu0]
    for p in params: cmd += ["--param", p]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.perf_counter() - t0
    steps = rejected = 0
    for line in r.stderr.splitlines():
        if line.startswith("nhvk trajectory: steps"):
            parts = line.replace("(", " ").replace(")", " ").replace(",", " ").split()
            nums = [int(x) for x in parts if x.lstrip("-").isdigit()]
            steps, rejected = nums[0] + nums[2], nums[1] + nums[3]
    if r.returncode != 0:
        return None, steps, rejected, secs, r.stderr.strip().splitlines()[-1]
    data = list(csv.reader(r.stdout.splitlines()))
    head = data[0]
    cols = [i for i, h in enumerate(head) if h.split("[")[0][:4] in ("nh_q", "nh_v", "vk_q", "vk_v") or h.startswith("vk_mu")]
    return [[float(x[i]) for i in cols] for x in data[1:]], steps, rejected, secs, ""

def error(a, b):
    e = 0.0
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            e = max(e, abs(x - y) / max(1.0, abs(y)))
    return e

ref = [trajectory(r, "dop853", "1e-13") for r in rows]
if any(x[0] is None for x in ref): sys.exit(f"stiff.sh: the reference failed: {[x[4] for x in ref if x[0] is None]}")
check = [trajectory(r, "rodas5p", "1e-12") for r in rows]
agree = max(error(c[0], f[0]) for c, f in zip(check, ref)) if all(c[0] is not None for c in check) else float("inf")
print(f"# {label}: {len(rows)} members, {len(times)} output times up to t = {times[-1]:g}; reference dop853 rtol "
      f"1e-13 ({sum(x[1] for x in ref)} steps), rodas5p at rtol 1e-12 within {agree:.2e} of it")
print("config,method,rtol,steps,rejected,failed,seconds,max_error")
for rtol in rtols:
    for method in methods:
        res = [trajectory(r, method, rtol) for r in rows]
        failed = sum(x[0] is None for x in res)
        err = max((error(x[0], f[0]) for x, f in zip(res, ref) if x[0] is not None), default=float("nan"))
        print(f"{label},{method},{rtol},{sum(x[1] for x in res)},{sum(x[2] for x in res)},{failed},"
              f"{sum(x[3] for x in res):.3f},{err if not failed else float('inf'):.3e}", flush=True)
PY
done
