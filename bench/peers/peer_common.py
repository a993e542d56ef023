# SPDX-License-Identifier: MIT
"""Shared by the Python peers of bench/peers.sh: the initial states of peer_common.hpp (the same splitmix64 stream,
the same draws; Box-Muller's log/cos/sin may differ from libm in the last bit), the right-hand sides, and the JSON
result line. Needs numpy only."""

import json
import time

import numpy as np

from peer_cli import DEFAULT_SEED

DRAWS_PER_TRAJECTORY = 5  # y0, then two Box-Muller pairs: (vx, vy) and (vz, mu0)
DT = 1e-3
STEPS = 1000
MU_STD = 0.1
METRIC = "traj_steps_per_second = trajectories * steps * 2 dynamics / integration_seconds"


def _splitmix64(seed, k):
    """Output number k (uint64 array) of the splitmix64 stream that starts at state seed; wraps like C++."""
    z = np.uint64(seed) + (k + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _uniform_open(bits):
    """Uniform in (0, 1): (top 52 bits + 1/2) / 2^52, exact in float64."""
    return ((bits >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52


def initial_states(n, seed=DEFAULT_SEED):
    """Arrays y0, vx, vy, vz, mu0 of trajectories 0..n-1, as peers::initial_state in peer_common.hpp."""
    k = np.arange(n, dtype=np.uint64) * np.uint64(DRAWS_PER_TRAJECTORY)
    u = [_uniform_open(_splitmix64(seed, k + np.uint64(j))) for j in range(DRAWS_PER_TRAJECTORY)]
    two_pi = 6.283185307179586
    y = -1.0 + 2.0 * u[0]
    r1, th1 = np.sqrt(-2.0 * np.log(u[1])), two_pi * u[2]
    r2, th2 = np.sqrt(-2.0 * np.log(u[3])), two_pi * u[4]
    vx, vy = r1 * np.cos(th1), r1 * np.sin(th1)
    vz, mu = r2 * np.cos(th2), MU_STD * (r2 * np.sin(th2))
    s = (-y * vx + vz) / (1.0 + y * y)  # v <- v - J^T (J v)/(J J^T), J = (-y, 0, 1)
    return y, vx + y * s, vy, vz - s, mu


def start_states(n, seed=DEFAULT_SEED):
    """(6, n) nonholonomic and (7, n) vakonomic start states, q0 = (0, y0, 0)."""
    y, vx, vy, vz, mu = initial_states(n, seed)
    zero = np.zeros_like(y)
    nh = np.stack([zero, y, zero, vx, vy, vz])
    return nh, np.concatenate([nh, mu[None, :]])


def rhs_nh(s, xp=np):
    """Nonholonomic: a = (-y lambda, 0, lambda), lambda = vx vy / (1 + y^2). s: (6, ...) array of module xp."""
    y, vx, vy, vz = s[1], s[3], s[4], s[5]
    lam = vx * vy / (1.0 + y * y)
    return xp.stack([vx, vy, vz, -y * lam, xp.zeros_like(y), lam])


def rhs_vk(s, xp=np):
    """Vakonomic: mudot = (vx vy - mu y vy)/(1+y^2), a = (-y mudot - mu vy, mu vx, mudot). s: (7, ...) array."""
    y, vx, vy, vz, mu = s[1], s[3], s[4], s[5], s[6]
    mudot = (vx * vy - mu * y * vy) / (1.0 + y * y)
    return xp.stack([vx, vy, vz, -y * mudot - mu * vy, mu * vx, mudot, mudot])


def rk4_step(f, x, dt, xp=np):
    """Classical RK4 with the sums in Boost.Odeint's order, as peers::rk4_step."""
    h2, b16, b13 = 0.5 * dt, (1.0 / 6.0) * dt, (1.0 / 3.0) * dt
    k1 = f(x, xp)
    k2 = f(x + h2 * k1, xp)
    k3 = f(x + h2 * k2, xp)
    k4 = f(x + dt * k3, xp)
    return x + b16 * k1 + b13 * k2 + b13 * k3 + b16 * k4


def pair_results(nh0, vk0, nh, vk):
    """d_q = |q_NH - q_VK| and the invariant drift per trajectory (as peers::finish), numpy arrays."""
    nh0, vk0, nh, vk = (np.asarray(a) for a in (nh0, vk0, nh, vk))
    d_q = np.sqrt(((nh[:3] - vk[:3]) ** 2).sum(axis=0))
    c = lambda s: s[3] * np.sqrt(1.0 + s[1] * s[1])  # noqa: E731 (C = vx sqrt(1 + y^2), nonholonomic)
    drift = np.max(
        np.stack([
            np.abs(c(nh) - c(nh0)),
            np.abs(nh[5] - nh[1] * nh[3]),
            np.abs((vk[3] + vk[6] * vk[1]) - (vk0[3] + vk0[6] * vk0[1])),
            np.abs((vk[5] - vk[6]) - (vk0[5] - vk0[6])),
            np.abs(vk[5] - vk[1] * vk[3]),
        ]),
        axis=0,
    )
    return d_q, drift


class DeviceRun:
    """`pair` (a jax.vmap of both dynamics over the (dim, n) start states) compiled and run on the first jax device,
    as the JAX peers time it: compile_seconds for lowering and compiling; one untimed warm-up call; then the start
    states put on the device (`started`: before that) and one call up to block_until_ready (integration_seconds).
    `out`: that call's outputs, still on the device."""

    def __init__(self, jax, pair, nh0, vk0):
        self.device = jax.devices()[0]
        self.name = f"{self.device.platform}:{self.device.device_kind}"
        t0 = time.perf_counter()
        compiled = jax.jit(pair).lower(nh0, vk0).compile()
        self.compile_seconds = time.perf_counter() - t0
        jax.block_until_ready(compiled(jax.device_put(nh0, self.device), jax.device_put(vk0, self.device)))  # warm-up
        self.started = time.perf_counter()
        d_nh0, d_vk0 = jax.device_put(nh0, self.device), jax.device_put(vk0, self.device)
        jax.block_until_ready((d_nh0, d_vk0))
        t1 = time.perf_counter()
        self.out = jax.block_until_ready(compiled(d_nh0, d_vk0))
        self.integration_seconds = time.perf_counter() - t1


def result(peer, method, device, threads, n, integration_seconds, total_seconds, d_q, drift, seed=DEFAULT_SEED,
           steps=STEPS, t_end=STEPS * DT, **extra):
    """The JSON result line, with the keys of peers::print_result. For adaptive methods steps is None and
    traj_steps_per_second is computed from the mean number of accepted steps (extra key steps_mean)."""
    d_q = np.asarray(d_q)
    pairs = n * (steps if steps is not None else extra.get("steps_mean", float("nan"))) * 2.0
    out = {
        "peer": peer, "method": method, "device": device, "threads": threads, "trajectories": int(n),
        "steps": steps, "dt": DT if steps is not None else None, "t_end": t_end, "seed": seed,
        "integration_seconds": integration_seconds, "total_seconds": total_seconds,
        "traj_steps_per_second": pairs / integration_seconds,
        "trajectories_per_second": n / integration_seconds, "metric": METRIC,
        "mean_dq": float(np.mean(d_q)), "median_dq": float(np.median(d_q)), "max_dq": float(np.max(d_q)),
        "max_invariant_drift": float(np.max(drift)),
    }
    out.update(extra)
    return json.dumps(out)

