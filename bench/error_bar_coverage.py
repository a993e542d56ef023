#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Coverage of nhvk's 95 % intervals over many seeds (README "Error bars").

Runs `nhvk run CONFIG --seed S` for S = 1 .. SEEDS into OUT/seed_S (skipping folders already there), then prints,
for the growth exponent and amplitude of d_q and d_v and for the mean, std, median and p95 of d_q and d_v at three
output times, the seed-to-seed standard deviation, the mean half-width of the interval, and the fraction of seeds
whose interval covers the mean over all seeds.

    python3 bench/error_bar_coverage.py build/nhvk configs/quickstart.toml 200 /tmp/coverage

Results: bench/results/2026-11-24-error-bars.md.
"""
import json
import os
import statistics as st
import subprocess
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    nhvk, config, seeds, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    runs = []
    for s in range(1, seeds + 1):
        d = os.path.join(out, f"seed_{s}")
        if not os.path.exists(os.path.join(d, "summary.json")):
            subprocess.run([nhvk, "run", config, "--seed", str(s), "--out", d, "-q"], check=True)
        with open(os.path.join(d, "summary.json")) as f:
            runs.append(json.load(f))

    def coverage(name, get):
        vals = [get(j) for j in runs]
        if any(v[1] is None or v[2] is None for v in vals):
            print(f"{name}: no interval")
            return
        m = st.mean(v[0] for v in vals)
        inside = sum(1 for v in vals if v[1] <= m <= v[2])
        print(f"| {name} | {st.stdev(v[0] for v in vals):.4g} | {st.mean((v[2] - v[1]) / 2 for v in vals):.4g} "
              f"| {inside / len(vals):.3f} |")

    print(f"{len(runs)} seeds of {config}\n")
    print("| statistic | sd over seeds | mean half-width | coverage of the many-seed mean |\n|---|---|---|---|")
    for k in "qv":
        g = lambda j, k=k: j["growth_exponent"]
        coverage(f"exponent d_{k}", lambda j, k=k: (g(j)[k], *g(j)["sampling"][k]["ci95"]))
        coverage(f"amplitude d_{k}",
                 lambda j, k=k: (g(j)["amplitude"][k], *g(j)["sampling"][k]["amplitude_ci95"]))
    nt = len(runs[0]["times"])
    for k in "qv":
        for i in (nt // 8, nt // 2, nt - 1):
            s = lambda j, k=k: j["divergence"][k]
            for stat in ("mean", "std", "p50", "p95"):
                coverage(f"{stat} d_{k} t[{i}]",
                         lambda j, i=i, stat=stat, s=s: (s(j)[stat][i], s(j)["intervals"][stat + "_lo"][i],
                                                         s(j)["intervals"][stat + "_hi"][i]))


if __name__ == "__main__":
    main()
