#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Peer 5: SciPy and numpy on a small sample (default 200 trajectories), one JSON line per method:
  - numpy_rk4: the fixed-step RK4 (dt 1e-3, t 0 -> 1) vectorised over the sample, one numpy array op per stage;
  - scipy_rk45: solve_ivp RK45, rtol 1e-10, atol 1e-12, one trajectory at a time, t 0 -> 5 (--t-end-adaptive),
    the adaptive comparison of diffrax_peer.py; traj_steps_per_second there counts accepted steps (steps_mean).
Per-trajectory time is seconds_per_trajectory = integration_seconds / trajectories (both dynamics).
Prints `skipped: scipy not installed` and exits 0 when numpy or scipy is missing.
Usage: scipy_peer.py [--n 200] [--seed S] [--t-end-adaptive 5] [--method numpy_rk4|scipy_rk45|both]"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer_cli import argument_parser  # noqa: E402 (after the path)


def main():
    ap = argument_parser(__doc__, 200)
    ap.add_argument("--t-end-adaptive", type=float, default=5.0)
    ap.add_argument("--method", choices=["numpy_rk4", "scipy_rk45", "both"], default="both")
    args = ap.parse_args()
    if args.n < 1:
        ap.error("--n must be >= 1")
    try:
        import numpy as np
        from scipy.integrate import solve_ivp
    except ImportError:
        print("skipped: scipy not installed", flush=True)
        return 0
    import peer_common as pc

    if args.method in ("numpy_rk4", "both"):
        t0 = time.perf_counter()
        nh0, vk0 = pc.start_states(args.n, args.seed)
        t1 = time.perf_counter()
        nh, vk = nh0.copy(), vk0.copy()
        for _ in range(pc.STEPS):
            nh = pc.rk4_step(pc.rhs_nh, nh, pc.DT)
        for _ in range(pc.STEPS):
            vk = pc.rk4_step(pc.rhs_vk, vk, pc.DT)
        t2 = time.perf_counter()
        d_q, drift = pc.pair_results(nh0, vk0, nh, vk)
        t3 = time.perf_counter()
        print(pc.result("numpy_rk4", "rk4", "cpu", 1, args.n, t2 - t1, t3 - t0, d_q, drift, seed=args.seed,
                        seconds_per_trajectory=(t2 - t1) / args.n), flush=True)

    if args.method in ("scipy_rk45", "both"):
        t_end = args.t_end_adaptive
        t0 = time.perf_counter()
        nh0, vk0 = pc.start_states(args.n, args.seed)
        nh, vk = np.empty_like(nh0), np.empty_like(vk0)
        steps = 0
        failed = 0
        t1 = time.perf_counter()
        for i in range(args.n):
            for f, x0, out in ((pc.rhs_nh, nh0, nh), (pc.rhs_vk, vk0, vk)):
                sol = solve_ivp(lambda t, s, f=f: f(s), (0.0, t_end), x0[:, i], method="RK45", rtol=1e-10,
                                atol=1e-12)
                failed += sol.status != 0
                steps += len(sol.t) - 1
                out[:, i] = sol.y[:, -1]
        t2 = time.perf_counter()
        d_q, drift = pc.pair_results(nh0, vk0, nh, vk)
        t3 = time.perf_counter()
        print(pc.result("scipy_rk45", "rk45 rtol=1e-10 atol=1e-12", "cpu", 1, args.n, t2 - t1, t3 - t0, d_q, drift,
                        seed=args.seed, steps=None, t_end=t_end, steps_mean=steps / (2.0 * args.n),
                        failed=int(failed), seconds_per_trajectory=(t2 - t1) / args.n), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
