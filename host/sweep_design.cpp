// SPDX-License-Identifier: MIT
#include "sweep_design.hpp"

#include <nhvk/rng.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

namespace nhvk {

namespace {
std::string format_15(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", x);
    return buf;
}
} // namespace

std::string sweep_value_text(double x) {
    char buf[64];
    std::string best;
    for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, x);
        if (std::strtod(buf, nullptr) == x) {
            best = buf;
            break;
        }
    }
    if (best.find('e') == std::string::npos || !(std::fabs(x) < 1e15)) return best;
    for (int decimals = 0; decimals <= 17; ++decimals) {
        std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
        if (std::strtod(buf, nullptr) == x) return std::string(buf).size() <= best.size() ? buf : best;
    }
    return best;
}

std::vector<double> sweep_range(double low, double high, int count, bool log) {
    if (count < 2) throw std::invalid_argument("sweep_range: count must be >= 2");
    std::vector<double> v(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        const double u = static_cast<double>(i) / static_cast<double>(count - 1);
        v[static_cast<std::size_t>(i)] = sweep_scale(u, low, high, log);
    }
    // NOTE: the inner values rounded to 15 significant digits, so that a log range from 0.25 to 8 takes 2 rather
    // than 1.9999999999999998 (what a user would type for a point, and what its --set repeats); the ends exactly as
    // written
    for (double& x : v) x = std::strtod(format_15(x).c_str(), nullptr);
    v.front() = low;
    v.back() = high;
    return v;
}

double sweep_scale(double u, double low, double high, bool log) {
    if (log) return std::exp(std::log(low) + u * (std::log(high) - std::log(low)));
    return low + u * (high - low);
}

namespace {

/** Joe and Kuo's primitive polynomials (degree s, coefficients a) and initial direction numbers m for dimensions 2
 *  to 10 (new-joe-kuo-6.21201); dimension 1 is van der Corput's. */
struct SobolPolynomial {
    unsigned s, a;
    unsigned m[5];
};
constexpr SobolPolynomial sobol_table[sobol_max_dimensions - 1] = {
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
    {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},
};

/** The 32 direction numbers V[k] (as 32-bit fractions) of dimension d. */
std::vector<std::uint32_t> directions(std::size_t d) {
    std::vector<std::uint32_t> V(32);
    if (d == 0) {
        for (unsigned k = 0; k < 32; ++k) V[k] = 1u << (31 - k);
        return V;
    }
    const SobolPolynomial& p = sobol_table[d - 1];
    for (unsigned k = 0; k < 32; ++k) {
        if (k < p.s) {
            V[k] = p.m[k] << (31 - k);
            continue;
        }
        std::uint32_t v = V[k - p.s] ^ (V[k - p.s] >> p.s);
        for (unsigned j = 1; j < p.s; ++j)
            if ((p.a >> (p.s - 1 - j)) & 1u) v ^= V[k - j];
        V[k] = v;
    }
    return V;
}

/** Member `index` of draw stream `sweep` of the run's seed: the designs' own random numbers, apart from every
 *  member's draws. */
double design_uniform(std::uint64_t seed, std::uint64_t index, std::uint32_t k) {
    return uniform01(make_draw_key(seed, index, Stream::sweep), k);
}

} // namespace

std::vector<std::vector<double>> sobol_design(std::size_t points, std::size_t dims, std::uint64_t seed, bool shift) {
    if (dims > sobol_max_dimensions)
        throw std::invalid_argument("sobol_design: at most " + std::to_string(sobol_max_dimensions) + " dimensions");
    if (points > (std::size_t{1} << 32)) throw std::invalid_argument("sobol_design: at most 2^32 points");
    std::vector<std::vector<double>> x(points, std::vector<double>(dims));
    for (std::size_t d = 0; d < dims; ++d) {
        const std::vector<std::uint32_t> V = directions(d);
        const std::uint32_t s =
            shift ? static_cast<std::uint32_t>(design_uniform(seed, 0, static_cast<std::uint32_t>(d)) * 4294967296.0)
                  : 0u;
        for (std::size_t i = 0; i < points; ++i) {
            std::uint32_t c = s;
            for (unsigned b = 0; b < 32; ++b)
                if ((static_cast<std::uint64_t>(i) >> b) & 1u) c ^= V[b];
            x[i][d] = (static_cast<double>(c) + 0.5) / 4294967296.0;
        }
    }
    return x;
}

std::vector<std::vector<double>> latin_hypercube_design(std::size_t points, std::size_t dims, std::uint64_t seed) {
    std::vector<std::vector<double>> x(points, std::vector<double>(dims));
    std::vector<std::size_t> perm(points);
    for (std::size_t d = 0; d < dims; ++d) {
        for (std::size_t i = 0; i < points; ++i) perm[i] = i;
        // Fisher–Yates with the design's own draws (index 1 + d; index 0 keys Sobol's shifts)
        for (std::size_t i = points; i > 1; --i) {
            const double u = design_uniform(seed, 1 + d, static_cast<std::uint32_t>(2 * i));
            std::size_t j = static_cast<std::size_t>(u * static_cast<double>(i));
            if (j >= i) j = i - 1;
            std::swap(perm[i - 1], perm[j]);
        }
        for (std::size_t i = 0; i < points; ++i) {
            const double u = design_uniform(seed, 1 + d, static_cast<std::uint32_t>(2 * i + 1));
            x[i][d] = (static_cast<double>(perm[i]) + u) / static_cast<double>(points);
        }
    }
    return x;
}

} // namespace nhvk
