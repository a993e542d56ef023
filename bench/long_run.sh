#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Long runs: the energy error of the structure-preserving method midpoint against DOPRI5 (projected after every step)
# over 10^4 periods, with the CPU time of each run (issue 43 item 4; docs/numerics.md §2.7). `nhvk trajectory` runs one
# initial state, both dynamics, 200 output times; the table gives, per run, the largest |E − E(0)| over the first tenth
# of the output times and over all of them (E of the plain L for the nonholonomic motion; E − μ·(J·v), the conserved
# energy of the vakonomic one) and the wall time of the command.
# Problems: models/particle_in_well.toml, reversible (g = c = 0) and without a reversing symmetry (g = 0.3, c = 0.2),
# period 2π. (Not the knife edge: its vakonomic motion spins up, so a long run of both dynamics fails on it; the
# nonholonomic knife edge is in tests/core/test_midpoint.cpp.)
# Usage: bench/long_run.sh [build-dir] [periods]   (default: build, 10000)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
periods="${2:-10000}"
[[ "$periods" =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/long_run.sh [build-dir] [periods]" >&2; exit 2; }
[ -x "$build/nhvk" ] || { echo "long_run.sh: no $build/nhvk (build it first)" >&2; exit 2; }

python3 - "$build/nhvk" "$here" "$periods" <<'PY'
import csv, io, math, subprocess, sys, time
nhvk, here, periods = sys.argv[1], sys.argv[2], int(sys.argv[3])

problems = [
    # name, model, params, q0, v0, mu0, period
    ("well, reversible", here + "/models/particle_in_well.toml", [], "0.5,0.2,0", "0.3,-0.4,0.06", "0.1", 2 * math.pi),
    ("well, g=0.3 c=0.2", here + "/models/particle_in_well.toml", ["g=0.3", "c=0.2"], "0.5,0.2,0", "0.3,-0.4,0.06",
     "0.1", 2 * math.pi),
]
runs = [("midpoint", ["--method", "midpoint"], 20), ("midpoint", ["--method", "midpoint"], 40),
        ("dopri5", ["--method", "dopri5", "--project", "--rtol", "1e-4", "--atol", "1e-6"], 0),
        ("dopri5", ["--method", "dopri5", "--project", "--rtol", "1e-6", "--atol", "1e-8"], 0),
        ("dopri5", ["--method", "dopri5", "--project", "--rtol", "1e-8", "--atol", "1e-10"], 0)]

print("| problem | method | setting | NH: first tenth | NH: all | VK: first tenth | VK: all | seconds |")
print("|---|---|---|---|---|---|---|---|")
for name, model, params, q0, v0, mu0, period in problems:
    t_end = periods * period
    for method, args, per_period in runs:
        cmd = [nhvk, "trajectory", "--model", model, "--q0", q0, "--v0", v0, "--mu0", mu0, "--t-end", repr(t_end),
               "--times", "200", "--max-steps", "100000000"] + args
        for p in params:
            cmd += ["--param", p]
        setting = " ".join(args[2:]) if method == "dopri5" else "dt = T/%d" % per_period
        if per_period:
            cmd += ["--dt", repr(period / per_period)]
        start = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if out.returncode != 0:
            print("| %s | %s | %s | failed: %s | | | | %.1f |" % (name, method, setting,
                  out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode, seconds))
            continue
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        def record(col):
            e0 = float(rows[0][col])
            errs = [abs(float(r[col]) - e0) for r in rows[1:] if r[col] not in ("", "nan")]
            tenth = max(errs[: max(1, len(errs) // 10)])
            return tenth, max(errs), len(errs)
        a, b = record("nh_E"), record("vk_E_tilde")
        note = "" if a[2] == len(rows) - 1 and b[2] == len(rows) - 1 else " (a dynamics stopped early)"
        print("| %s | %s | %s | %.2e | %.2e | %.2e | %.2e | %.1f%s |" % (name, method, setting, a[0], a[1], b[0], b[1],
              seconds, note))
        sys.stdout.flush()
PY
