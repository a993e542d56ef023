#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Peer 4a: JAX, the closed-form RK4 of both nh_particle dynamics (the right-hand sides of peer_common.py) under
jax.vmap, 1000 steps of 1e-3 in a jax.lax.fori_loop, jit-compiled, float64 (jax_enable_x64).
integration_seconds: one call of the compiled function on states already on the device, up to block_until_ready,
after one untimed warm-up call; compilation is timed separately (compile_seconds). total_seconds: from the host
initial states to the checksums (transfer, integration, copy back, d_q on the host), compilation excluded.
Prints `skipped: jax not installed` and exits 0 when jax cannot be imported.
Usage: jax_peer.py [--n 100000] [--seed S]"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer_cli import argument_parser  # noqa: E402 (after the path)


def main():
    ap = argument_parser(__doc__, 100000)
    args = ap.parse_args()
    if args.n < 1:
        ap.error("--n must be >= 1")
    try:
        import jax
    except ImportError:
        print("skipped: jax not installed", flush=True)
        return 0
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np

    import peer_common as pc

    def integrate(f, x):
        return jax.lax.fori_loop(0, pc.STEPS, lambda i, s: pc.rk4_step(f, s, pc.DT, jnp), x)

    # one trajectory: a (6,) and a (7,) state; vmap over axis 1 of the (dim, n) arrays
    pair = jax.vmap(lambda nh, vk: (integrate(pc.rhs_nh, nh), integrate(pc.rhs_vk, vk)), in_axes=1, out_axes=1)

    nh0, vk0 = pc.start_states(args.n, args.seed)
    run = pc.DeviceRun(jax, pair, nh0, vk0)
    nh, vk = (np.asarray(a) for a in run.out)
    d_q, drift = pc.pair_results(nh0, vk0, nh, vk)
    total_seconds = time.perf_counter() - run.started
    print(pc.result("jax_vmap", "rk4", run.name, None, args.n, run.integration_seconds, total_seconds, d_q, drift,
                    seed=args.seed, compile_seconds=run.compile_seconds, jax_version=jax.__version__),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
