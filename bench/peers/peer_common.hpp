// SPDX-License-Identifier: MIT
// Shared by the C++ and CUDA peers of bench/peers.sh: the workload (nh_particle, both dynamics, RK4), the initial
// states (one counter-based splitmix64 stream, reproduced bit for bit by peer_common.py), and the report line.
// Self-contained on purpose: nothing from include/nhvk, so that the peers measure what a hand-written code costs.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define PEERS_HD __host__ __device__
#else
#define PEERS_HD
#endif

namespace peers {

constexpr int draws_per_trajectory = 5; // y0, then two Box-Muller pairs: (vx, vy) and (vz, mu0)
constexpr std::uint64_t default_seed = 2026;
constexpr double default_dt = 1e-3;
constexpr int default_steps = 1000;
constexpr double mu_std = 0.1;

/** @brief splitmix64 output number k of the stream that starts at state `seed` (k = 0, 1, ...). */
PEERS_HD inline std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t k) {
    std::uint64_t z = seed + (k + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/** @brief Uniform in (0, 1), never 0 or 1: (top 52 bits + 1/2) / 2^52, exact in double. */
PEERS_HD inline double uniform_open(std::uint64_t bits) { return (static_cast<double>(bits >> 12) + 0.5) * 0x1p-52; }

/** @brief Initial state of one trajectory, the same for both dynamics (x0 = z0 = 0). */
struct InitialState {
    double y, vx, vy, vz, mu;
};

/**
 * @brief Draw number i of the ensemble: y0 ~ U(-1, 1), trial v ~ N(0, 1)^3, mu0 ~ N(0, 0.1), then v projected
 *        onto the constraint zdot = y xdot in the Euclidean metric.
 */
PEERS_HD inline InitialState initial_state(std::uint64_t seed, std::uint64_t i) {
    const std::uint64_t k = i * draws_per_trajectory;
    const double two_pi = 6.283185307179586;
    const double y = -1.0 + 2.0 * uniform_open(splitmix64(seed, k));
    // Box-Muller: r = sqrt(-2 ln u1), theta = 2 pi u2 -> (r cos theta, r sin theta)
    const double r1 = std::sqrt(-2.0 * std::log(uniform_open(splitmix64(seed, k + 1))));
    const double th1 = two_pi * uniform_open(splitmix64(seed, k + 2));
    const double r2 = std::sqrt(-2.0 * std::log(uniform_open(splitmix64(seed, k + 3))));
    const double th2 = two_pi * uniform_open(splitmix64(seed, k + 4));
    double vx = r1 * std::cos(th1);
    const double vy = r1 * std::sin(th1);
    double vz = r2 * std::cos(th2);
    const double mu = mu_std * (r2 * std::sin(th2));
    // v <- v - J^T (J v) / (J J^T), J = (-y, 0, 1)
    const double s = (-y * vx + vz) / (1.0 + y * y);
    vx = vx + y * s;
    vz = vz - s;
    return {y, vx, vy, vz, mu};
}

/** @brief Nonholonomic nh_particle, state (x, y, z, vx, vy, vz): a = (-y lambda, 0, lambda), lambda = vx vy/(1+y^2). */
struct Nonholonomic {
    static constexpr int dim = 6;
    PEERS_HD void operator()(const double* s, double* d) const {
        const double y = s[1], vx = s[3], vy = s[4], vz = s[5];
        const double lambda = vx * vy / (1.0 + y * y);
        d[0] = vx;
        d[1] = vy;
        d[2] = vz;
        d[3] = -y * lambda;
        d[4] = 0.0;
        d[5] = lambda;
    }
};

/**
 * @brief Vakonomic nh_particle, state (x, y, z, vx, vy, vz, mu): mudot = (vx vy - mu y vy)/(1+y^2),
 *        a = (-y mudot - mu vy, mu vx, mudot).
 */
struct Vakonomic {
    static constexpr int dim = 7;
    PEERS_HD void operator()(const double* s, double* d) const {
        const double y = s[1], vx = s[3], vy = s[4], vz = s[5], mu = s[6];
        const double mudot = (vx * vy - mu * y * vy) / (1.0 + y * y);
        d[0] = vx;
        d[1] = vy;
        d[2] = vz;
        d[3] = -y * mudot - mu * vy;
        d[4] = mu * vx;
        d[5] = mudot;
        d[6] = mudot;
    }
};

/**
 * @brief One classical RK4 step in place. The sums are written in Boost.Odeint's order (x + (dt/2) k1, ...,
 *        x + (dt/6) k1 + (dt/3) k2 + (dt/3) k3 + (dt/6) k4, left to right) so that without FMA contraction the
 *        odeint peer gives the same bits.
 */
template <class Rhs> PEERS_HD inline void rk4_step(const Rhs& f, double* x, double dt) {
    constexpr int n = Rhs::dim;
    const double h2 = 0.5 * dt, b16 = (1.0 / 6.0) * dt, b13 = (1.0 / 3.0) * dt;
    double k1[n], k2[n], k3[n], k4[n], tmp[n];
    f(x, k1);
    for (int j = 0; j < n; ++j) tmp[j] = x[j] + h2 * k1[j];
    f(tmp, k2);
    for (int j = 0; j < n; ++j) tmp[j] = x[j] + h2 * k2[j];
    f(tmp, k3);
    for (int j = 0; j < n; ++j) tmp[j] = x[j] + dt * k3[j];
    f(tmp, k4);
    for (int j = 0; j < n; ++j) x[j] = x[j] + b16 * k1[j] + b13 * k2[j] + b13 * k3[j] + b16 * k4[j];
}

/** @brief What one trajectory pair leaves: d_q at the end, and the largest drift of the checked invariants. */
struct PairResult {
    double d_q;
    double drift;
};

/** @brief Start states of both dynamics, q0 = (0, y0, 0). */
PEERS_HD inline void start_states(const InitialState& s, double* nh, double* vk) {
    const double q_v[6] = {0.0, s.y, 0.0, s.vx, s.vy, s.vz};
    for (int j = 0; j < 6; ++j) nh[j] = vk[j] = q_v[j];
    vk[6] = s.mu;
}

/**
 * @brief d_q = |q_NH - q_VK| and the invariant drift: max of |C - C0| (C = vx sqrt(1+y^2)) and |vz - y vx| along
 *        the nonholonomic motion, |(vx + mu y) - ...0|, |(vz - mu) - ...0| and |vz - y vx| along the vakonomic one.
 */
PEERS_HD inline PairResult finish(const double* nh0, const double* vk0, const double* nh, const double* vk) {
    const double dx = nh[0] - vk[0], dy = nh[1] - vk[1], dz = nh[2] - vk[2];
    const double c0 = nh0[3] * std::sqrt(1.0 + nh0[1] * nh0[1]), c = nh[3] * std::sqrt(1.0 + nh[1] * nh[1]);
    double drift = std::fabs(c - c0);
    drift = std::fmax(drift, std::fabs(nh[5] - nh[1] * nh[3]));
    drift = std::fmax(drift, std::fabs((vk[3] + vk[6] * vk[1]) - (vk0[3] + vk0[6] * vk0[1])));
    drift = std::fmax(drift, std::fabs((vk[5] - vk[6]) - (vk0[5] - vk0[6])));
    drift = std::fmax(drift, std::fabs(vk[5] - vk[1] * vk[3]));
    return {std::sqrt(dx * dx + dy * dy + dz * dz), drift};
}

/** @brief Both dynamics of one trajectory, `steps` RK4 steps of `dt` each, hand-written. */
PEERS_HD inline PairResult integrate_pair(const InitialState& s, double dt, int steps) {
    double nh0[6], vk0[7], nh[6], vk[7];
    start_states(s, nh0, vk0);
    start_states(s, nh, vk);
    for (int i = 0; i < steps; ++i) rk4_step(Nonholonomic{}, nh, dt);
    for (int i = 0; i < steps; ++i) rk4_step(Vakonomic{}, vk, dt);
    return finish(nh0, vk0, nh, vk);
}

} // namespace peers

// Host side: options, checksums, the result line.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace peers {

/** @brief Command line shared by the peers: --n N, --threads T, --seed S, --steps K. */
struct Options {
    long long n = 100000;
    int threads = 1;
    std::uint64_t seed = default_seed;
    int steps = default_steps;
};

inline Options parse_options(int argc, char** argv, const char* usage) {
    Options o;
    auto value = [&](int& i) -> const char* {
        if (i + 1 >= argc) {
            std::fprintf(stderr, "error: %s needs a value\nusage: %s\n", argv[i], usage);
            std::exit(2);
        }
        return argv[++i];
    };
    auto number = [&](const char* name, const char* text, long long lo) {
        char* end = nullptr;
        const long long v = std::strtoll(text, &end, 10);
        if (!end || *end || v < lo) {
            std::fprintf(stderr, "error: %s expects an integer >= %lld, got '%s'\nusage: %s\n", name, lo, text, usage);
            std::exit(2);
        }
        return v;
    };
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (!std::strcmp(a, "--n")) o.n = number(a, value(i), 1);
        else if (!std::strcmp(a, "--threads")) o.threads = static_cast<int>(number(a, value(i), 0));
        else if (!std::strcmp(a, "--seed")) o.seed = static_cast<std::uint64_t>(number(a, value(i), 0));
        else if (!std::strcmp(a, "--steps")) o.steps = static_cast<int>(number(a, value(i), 1));
        else if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
            std::printf("usage: %s\n", usage);
            std::exit(0);
        } else {
            std::fprintf(stderr, "error: unknown argument '%s'\nusage: %s\n", a, usage);
            std::exit(2);
        }
    }
    return o;
}

/** @brief Checksums over the ensemble: mean (summed in index order, deterministic), median (type 7), max of d_q. */
struct Checksums {
    double mean_dq, median_dq, max_dq, max_drift;
};

inline Checksums checksums(const std::vector<double>& d_q, const std::vector<double>& drift) {
    const std::size_t n = d_q.size();
    double sum = 0.0, mx = 0.0, mdrift = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        sum += d_q[i];
        mx = std::max(mx, d_q[i]);
        mdrift = std::max(mdrift, drift[i]);
    }
    std::vector<double> s(d_q);
    std::nth_element(s.begin(), s.begin() + n / 2, s.end());
    double median = s[n / 2];
    if (n % 2 == 0) median = 0.5 * (*std::max_element(s.begin(), s.begin() + n / 2) + median);
    return {sum / static_cast<double>(n), median, mx, mdrift};
}

/** @brief The one machine-readable result line (JSON) every peer prints on stdout. */
inline void print_result(const char* peer, const char* method, const std::string& device, int threads, const Options& o,
                         double integration_seconds, double total_seconds, const Checksums& c) {
    const double pairs = static_cast<double>(o.n) * o.steps * 2.0;
    std::printf("{\"peer\":\"%s\",\"method\":\"%s\",\"device\":\"%s\",\"threads\":%d,\"trajectories\":%lld,"
                "\"steps\":%d,\"dt\":%.17g,\"t_end\":%.17g,\"seed\":%llu,"
                "\"integration_seconds\":%.6g,\"total_seconds\":%.6g,\"traj_steps_per_second\":%.6g,"
                "\"trajectories_per_second\":%.6g,"
                "\"metric\":\"traj_steps_per_second = trajectories * steps * 2 dynamics / integration_seconds\","
                "\"mean_dq\":%.17g,\"median_dq\":%.17g,\"max_dq\":%.17g,\"max_invariant_drift\":%.3g}\n",
                peer, method, device.c_str(), threads, o.n, o.steps, default_dt, default_dt * o.steps,
                static_cast<unsigned long long>(o.seed), integration_seconds, total_seconds,
                pairs / integration_seconds, static_cast<double>(o.n) / integration_seconds, c.mean_dq, c.median_dq,
                c.max_dq, c.max_drift);
}

} // namespace peers
