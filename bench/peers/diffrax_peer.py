#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Peer 4b: diffrax Dopri5 (PIDController rtol 1e-10, atol 1e-12, first step chosen by diffrax) under jax.vmap, both
nh_particle dynamics (the right-hand sides of peer_common.py), t 0 -> 5 (--t-end), float64: the adaptive comparison
(nhvk's dopri5, scipy_peer.py's RK45). Under vmap the batch steps together until its slowest member is done.
integration_seconds: one call of the compiled function on states already on the device, up to block_until_ready,
after one untimed warm-up call; compile_seconds apart. traj_steps_per_second counts accepted steps (steps_mean).
Prints `skipped: jax not installed` (or diffrax) and exits 0 when the import fails.
Usage: diffrax_peer.py [--n 100000] [--seed S] [--t-end 5]"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer_cli import argument_parser  # noqa: E402 (after the path)


def main():
    ap = argument_parser(__doc__, 100000)
    ap.add_argument("--t-end", type=float, default=5.0)
    ap.add_argument("--max-steps", type=int, default=100000)
    args = ap.parse_args()
    if args.n < 1 or not args.t_end > 0.0:
        ap.error("--n must be >= 1 and --t-end > 0")
    try:
        import jax
    except ImportError:
        print("skipped: jax not installed", flush=True)
        return 0
    try:
        import diffrax
    except ImportError:
        print("skipped: diffrax not installed", flush=True)
        return 0
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np

    import peer_common as pc

    solver = diffrax.Dopri5()
    controller = diffrax.PIDController(rtol=1e-10, atol=1e-12)

    def solve(f, y0):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, args: f(y, jnp)), solver, t0=0.0, t1=args.t_end,
                                  dt0=None, y0=y0, stepsize_controller=controller, saveat=diffrax.SaveAt(t1=True),
                                  max_steps=args.max_steps, throw=False)
        return sol.ys[-1], sol.stats["num_accepted_steps"], sol.result == diffrax.RESULTS.successful

    pair = jax.vmap(lambda nh, vk: (solve(pc.rhs_nh, nh), solve(pc.rhs_vk, vk)), in_axes=1, out_axes=-1)

    nh0, vk0 = pc.start_states(args.n, args.seed)
    run = pc.DeviceRun(jax, pair, nh0, vk0)
    (nh, nh_steps, nh_ok), (vk, vk_steps, vk_ok) = jax.tree_util.tree_map(np.asarray, run.out)
    d_q, drift = pc.pair_results(nh0, vk0, nh, vk)
    total_seconds = time.perf_counter() - run.started
    steps = np.concatenate([nh_steps, vk_steps]).astype(np.float64)
    print(pc.result("diffrax_dopri5", "dopri5 rtol=1e-10 atol=1e-12", run.name, None, args.n, run.integration_seconds,
                    total_seconds, d_q, drift, seed=args.seed, steps=None, t_end=args.t_end,
                    steps_mean=float(steps.mean()), steps_max=int(steps.max()),
                    failed=int(args.n - np.count_nonzero(nh_ok & vk_ok)), compile_seconds=run.compile_seconds,
                    jax_version=jax.__version__, diffrax_version=diffrax.__version__), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
