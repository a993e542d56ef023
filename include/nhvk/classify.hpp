// SPDX-License-Identifier: MIT
/** @file
 *  @brief Classification of a model's constraints φ_ν(q, v, t) = 0 from the model's own `constraints` function
 *         (`nhvk inspect`, and `classification` in every run's summary.json). Host only.
 *
 *  Checked at `samples` random states (seeded, deterministic) drawn in a box (|q_i| ≤ box, angles in [−π, π],
 *  |v_j| ≤ box · scale_j with the model's own velocity scales, `detail::velocity_scales`; t in [0, box]),
 *  rejecting states outside the model's charts (`in_chart`, `in_velocity_chart`, also at the scaled velocities s·v
 *  the homogeneity test uses, and states where φ or its derivatives are not finite). Every derivative is exact
 *  (nested duals, nhvk/dual.hpp); a property holds when it holds at every sample to the relative tolerance `tol`,
 *  relative to the size of the terms that make up the quantity tested (Σ_i |J_i v_i| rather than |J|·|v|), so that
 *  no verdict depends on the scale of a parameter or a coordinate, and nothing is squared that could overflow:
 *  - velocity dependence: ∂²φ/∂v² ≡ 0 → affine, and then φ(q, 0, t) = φ − J·v ≡ 0 → linear; else nonlinear;
 *  - positive homogeneity φ(q, s v, t) = s^σ φ(q, v, t) for s > 0 (Talamucci (45)–(46)), σ from Euler's relation
 *    J·v = σ φ, then checked at s = 0.5, 2, 3.5;
 *  - time dependence: ∂φ/∂t ≢ 0;
 *  - for a linear constraint ω = a(q)·dq with M_AB = ∂_A a_B − ∂_B a_A: exact when M ≡ 0 (Cronström–Raita (29)),
 *    integrable after an integrating factor when dω vanishes on ker ω (their (33), ω ∧ dω = 0), else non-integrable;
 *  - the system (all constraints linear or affine): D = ker J is involutive iff every dω_ν vanishes on D × D
 *    (Frobenius); the constant combinations c with Σ c_ν dω_ν|D×D ≡ 0, beyond those with Σ c_ν a_ν ≡ 0, count the
 *    integrable combinations (Talamucci Ex. 2 (vi): two non-integrable constraints whose difference is exact).
 *    Both tests are one computation (`curvature_rows`, in coordinates scaled so that every column of J has the same
 *    largest entry): for one constraint the system's verdict is the constraint's. A set of constraints each exact
 *    or integrable after a factor is integrable (an intersection of foliations), whatever the rounding says.
 *  Consequences: the Četaev reactions R = Σ λ_ν ∂φ_ν/∂v do no work when every φ_ν is positively homogeneous
 *  (R·v = Σ λ_ν σ_ν φ_ν = 0 on the constraints, Talamucci (41)); the nonholonomic energy E = v·L_v − L is conserved
 *  when, in addition, ∂L/∂t ≡ 0 and the applied force (if the model declares one) does no work, F·v ≡ 0 (checked
 *  at the same states); both dynamics must coincide when the system is integrable (holonomic).
 */
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nhvk/dual.hpp"
#include "nhvk/dynamics.hpp"

namespace nhvk {

/** @brief Whether `model` gives an applied force: `M::has_force`, or, for a model whose parts are known only at run
 *         time (an interpreted model file declares every optional part), its `declares_force()`. */
template <class M, class = void> struct DeclaresForce {
    static bool get(const M&) { return M::has_force; }
};
template <class M> struct DeclaresForce<M, std::void_t<decltype(std::declval<const M&>().declares_force())>> {
    static bool get(const M& m) { return m.declares_force(); }
};

enum class VelocityDependence { linear, affine, nonlinear };
enum class Integrability { exact, integrating_factor, non_integrable, not_applicable };

inline const char* to_string(VelocityDependence d) {
    return d == VelocityDependence::linear ? "linear" : d == VelocityDependence::affine ? "affine" : "nonlinear";
}
inline const char* to_string(Integrability i) {
    switch (i) {
    case Integrability::exact:
        return "exact";
    case Integrability::integrating_factor:
        return "integrating_factor";
    case Integrability::non_integrable:
        return "non_integrable";
    default:
        return "not_applicable";
    }
}

/** @brief Where and how strictly the classification is checked. */
struct ClassifyOptions {
    int samples = 256;      ///< accepted random states
    std::uint64_t seed = 1; ///< of the state generator (the same classification every time)
    double box = 2.0;       ///< |q_i|, |v_i| ≤ box (angles in [−π, π]), t in [0, box]
    double tol = 1e-8;      ///< relative tolerance of every identity
};

/** @brief The class of one constraint φ_ν. */
struct ConstraintClass {
    int index = 0;
    VelocityDependence velocity = VelocityDependence::nonlinear;
    bool homogeneous = false;
    std::optional<double> degree; ///< σ when homogeneous
    bool time_dependent = false;
    Integrability integrability = Integrability::not_applicable;
};

/** @brief The class of the whole set of constraints and its consequences. */
struct SystemClass {
    std::optional<bool> integrable;                ///< null: not decided (nonlinear constraints, or affine ones
                                                   ///<   whose linear part is involutive)
    std::optional<int> integrable_combinations;    ///< all constraints linear only
    std::vector<std::vector<double>> combinations; ///< a basis of those combinations (largest |c_ν| = 1)
    bool lagrangian_time_dependent = false;
    bool has_force = false;
    bool force_does_no_work = true; ///< F·v ≡ 0 at the samples (true without a force)
    bool energy_conserved = false;
    bool reactions_do_no_work = false;
    bool dynamics_must_coincide = false;
};

struct Classification {
    std::string model;
    int samples = 0;
    ClassifyOptions options;
    std::vector<double> velocity_scales; ///< |v_j| ≤ box · velocity_scales[j] (detail::velocity_scales)
    std::vector<ConstraintClass> constraints;
    SystemClass system;
    std::vector<std::string> statements; ///< the consequences in words, one sentence each
};

namespace detail {

/** @brief Gram–Schmidt: appends to the orthonormal `basis` the part of `x` orthogonal to it when that part is longer
 *         than `rel` · |x|; true when it did. */
inline bool add_direction(std::vector<std::vector<double>>& basis, std::vector<double> x, double rel) {
    double xmax = 0.0; // NOTE: x scaled to a largest entry of 1 first: its squares neither overflow nor underflow
    for (double e : x) xmax = std::max(xmax, std::fabs(e));
    if (!(xmax > 0.0) || !std::isfinite(xmax)) return false;
    for (double& e : x) e /= xmax;
    double n0 = 0.0;
    for (double e : x) n0 += e * e;
    n0 = std::sqrt(n0);
    if (!(n0 > 0.0)) return false;
    for (int pass = 0; pass < 2; ++pass) // NOTE: twice, for orthogonality to rounding
        for (const auto& b : basis) {
            double d = 0.0;
            for (std::size_t i = 0; i < x.size(); ++i) d += b[i] * x[i];
            for (std::size_t i = 0; i < x.size(); ++i) x[i] -= d * b[i];
        }
    double n1 = 0.0;
    for (double e : x) n1 += e * e;
    n1 = std::sqrt(n1);
    if (!(n1 > rel * n0)) return false;
    for (double& e : x) e /= n1;
    basis.push_back(std::move(x));
    return true;
}

/** @brief An orthonormal basis of the orthogonal complement of the span of `basis` in R^dim. */
inline std::vector<std::vector<double>> complement(std::vector<std::vector<double>> basis, int dim, double rel) {
    const std::size_t first = basis.size();
    for (int i = 0; i < dim; ++i) {
        std::vector<double> e(dim, 0.0);
        e[i] = 1.0;
        add_direction(basis, e, rel);
    }
    return {basis.begin() + static_cast<std::ptrdiff_t>(first), basis.end()};
}

/** @brief Exact derivatives of φ at one state. */
template <int n, int k> struct ConstraintDerivs {
    double phi[k];
    double J[k][n];       ///< ∂φ/∂v
    double Hv[k][n][n];   ///< ∂²φ/∂v_a∂v_i
    double dJdq[k][n][n]; ///< [ν][j][i] = ∂J_i/∂q_j
    double phi_t[k];      ///< ∂φ/∂t
};

/** @brief One nested dual pass: inner tangents seed v; outer tangents seed v (0..n−1), q (n..2n−1) and t (2n). */
template <class M>
ConstraintDerivs<M::n, M::k> constraint_derivs(const M& model, const double* q, const double* v, double t) {
    constexpr int n = M::n, k = M::k;
    using S1 = Dual<double, n>;
    using S2 = Dual<S1, 2 * n + 1>;
    S2 qq[n], vv[n];
    for (int j = 0; j < n; ++j) {
        qq[j] = S2(S1(q[j]));
        qq[j].d[n + j] = S1(1.0);
        vv[j] = S2(S1(v[j]));
        vv[j].val.d[j] = 1.0;
        vv[j].d[j] = S1(1.0);
    }
    S2 tt = S2(S1(t));
    tt.d[2 * n] = S1(1.0);
    S2 ph[k];
    model.constraints(qq, vv, tt, ph);
    ConstraintDerivs<n, k> out;
    for (int a = 0; a < k; ++a) {
        out.phi[a] = ph[a].val.val;
        out.phi_t[a] = ph[a].d[2 * n].val;
        for (int i = 0; i < n; ++i) {
            out.J[a][i] = ph[a].val.d[i];
            for (int j = 0; j < n; ++j) {
                out.Hv[a][j][i] = ph[a].d[j].d[i];
                out.dJdq[a][j][i] = ph[a].d[n + j].d[i];
            }
        }
    }
    return out;
}

/** @brief ∂L/∂t and L at one state. */
template <class M>
void lagrangian_time_derivative(const M& model, const double* q, const double* v, double t, double& L, double& Lt) {
    constexpr int n = M::n;
    using S = Dual<double, 1>;
    S qq[n], vv[n];
    for (int j = 0; j < n; ++j) {
        qq[j] = S(q[j]);
        vv[j] = S(v[j]);
    }
    S tt = S(t);
    tt.d[0] = 1.0;
    const S l = model.lagrangian(qq, vv, tt);
    L = l.val;
    Lt = l.d[0];
}

/**
 * @brief The curvature of the distribution D = ker J of the constraints `rows` (indices into `d`) at one state: for
 *        each pair of an orthonormal basis of D, the vector over the constraints ν of dω_ν(D_p, D_r), with the
 *        entries that are within `tol` of the size of their terms (Σ |D_p,i| |∂_i a_j| |D_r,j| over both orders)
 *        set to 0. Computed in coordinates scaled per column of J (its largest |J_νj| over `rows` made 1): the basis
 *        of D, and so the verdict, does not depend on the units of the coordinates.
 */
template <int n, int k>
std::vector<std::vector<double>> curvature_rows(const ConstraintDerivs<n, k>& d, const std::vector<int>& rows,
                                                double tol, double rel) {
    double s[n];
    for (int j = 0; j < n; ++j) {
        double m = 0.0;
        for (int a : rows) m = std::max(m, std::fabs(d.J[a][j]));
        // NOTE: within [1e-150, 1e150], so that no product s_i s_j ∂_i a_j overflows
        s[j] = m > 0.0 ? 1.0 / std::min(std::max(m, 1e-150), 1e150) : 1.0;
    }
    std::vector<std::vector<double>> basis;
    for (int a : rows) {
        std::vector<double> r(n);
        double m = 0.0;
        for (int j = 0; j < n; ++j) m = std::max(m, std::fabs(r[j] = d.J[a][j] * s[j]));
        if (m > 0.0)
            for (double& e : r) e /= m; // NOTE: largest entry 1 before add_direction squares them
        add_direction(basis, r, rel);
    }
    const std::vector<std::vector<double>> D = complement(basis, n, rel);
    std::vector<std::vector<double>> out;
    for (std::size_t p = 0; p < D.size(); ++p)
        for (std::size_t r = p + 1; r < D.size(); ++r) {
            std::vector<double> row(rows.size(), 0.0);
            bool any = false;
            for (std::size_t b = 0; b < rows.size(); ++b) {
                const int a = rows[b];
                double sum = 0.0, size = 0.0;
                for (int i = 0; i < n; ++i)
                    for (int j = 0; j < n; ++j) {
                        // dω(x, y) = Σ_ij (∂_i a_j − ∂_j a_i) x_i y_j, in the scaled coordinates
                        const double x = D[p][i] * s[i], y = D[r][j] * s[j];
                        const double t1 = x * d.dJdq[a][i][j] * y, t2 = x * d.dJdq[a][j][i] * y;
                        sum += t1 - t2;
                        size += std::fabs(t1) + std::fabs(t2);
                    }
                if (std::fabs(sum) > tol * size) {
                    row[b] = sum;
                    any = true;
                }
            }
            if (any) out.push_back(row);
        }
    return out;
}

/** @brief The first derivatives J = ∂φ/∂v and the values φ at one state (a cheaper pass than constraint_derivs). */
template <class M>
bool constraint_jacobian(const M& model, const double* q, const double* v, double t, double (*J)[M::n], double* phi) {
    constexpr int n = M::n, k = M::k;
    using S = Dual<double, n>;
    S qq[n], vv[n], ph[k];
    for (int j = 0; j < n; ++j) {
        qq[j] = S(q[j]);
        vv[j] = S(v[j]);
        vv[j].d[j] = 1.0;
    }
    model.constraints(qq, vv, S(t), ph);
    bool finite = true;
    for (int a = 0; a < k; ++a) {
        phi[a] = ph[a].val;
        finite = finite && std::isfinite(phi[a]);
        for (int i = 0; i < n; ++i) finite = finite && std::isfinite(J[a][i] = ph[a].d[i]);
    }
    return finite;
}

inline double median(std::vector<double> x) {
    if (x.empty()) return 0.0;
    std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(x.size() / 2), x.end());
    return x[x.size() / 2];
}

/**
 * @brief The model's own velocity scale per coordinate: |v_j| is sampled up to box · scale_j. Found at `pilots`
 *        random states (a generator of their own) in two steps, both measured on the terms of φ, so that neither
 *        depends on the units of a parameter or a coordinate:
 *        - the ratios between coordinates make the terms J_νj v_j of every constraint of one size (the median over
 *          the states and constraints of |J_νj| u_j / max_i |J_νi| u_i is driven to 1; three rounds, as J may
 *          depend on v, each going only as far as the model's charts allow): a constraint ż − a|v_h| with
 *          a = 1e-12 is then sampled where both terms count;
 *        - one common factor λ makes the terms that do not vanish with v, |φ_ν(q, 0, t)|, and the first-order terms
 *          Σ_i |J_νi v_i| of one size (bisection in log λ on their median ratio); homogeneous constraints of positive
 *          degree have φ(q, 0) = 0 and keep λ = 1: ẋ − a ω_y + Ω y is then sampled where Ω y and ẋ are comparable,
 *          whatever Ω and a.
 *        Every scale within [1e-100, 1e100], so that no product of a few of them overflows.
 */
template <class M>
std::vector<double> velocity_scales(const M& model, const ClassifyOptions& opt, const double* homogeneity_s,
                                    int count_s) {
    constexpr int n = M::n, k = M::k;
    constexpr double lo = 1e-100, hi = 1e100;
    const int pilots = 64;
    struct Pilot {
        double q[n], xi[n], t;
    };
    std::mt19937_64 rng(opt.seed ^ 0x9e3779b97f4a7c15ULL);
    std::uniform_real_distribution<double> unit(-1.0, 1.0), angle(-M_PI, M_PI), time(0.0, opt.box);
    std::vector<Pilot> ps(static_cast<std::size_t>(pilots));
    for (Pilot& p : ps) {
        for (int j = 0; j < n; ++j) {
            p.q[j] = M::angles[j] ? angle(rng) : opt.box * unit(rng);
            p.xi[j] = opt.box * unit(rng);
        }
        p.t = time(rng);
    }
    std::vector<double> u(n, 1.0);
    double J[k][n], phi[k];
    auto at = [&](const Pilot& p, double lambda, double* v) {
        for (int j = 0; j < n; ++j) v[j] = lambda * u[j] * p.xi[j];
        if (!in_charts(model, p.q, v)) return false;
        for (int m = 0; m < count_s; ++m) { // NOTE: the states the homogeneity test will use must be in the chart too
            double sv[n];
            for (int j = 0; j < n; ++j) sv[j] = homogeneity_s[m] * v[j];
            if (!model.in_velocity_chart(p.q, sv)) return false;
        }
        return constraint_jacobian(model, p.q, v, p.t, J, phi);
    };
    for (int round = 0; round < 3; ++round) {
        std::vector<std::vector<double>> col(n);
        for (const Pilot& p : ps) {
            double v[n];
            if (!at(p, 1.0, v)) continue;
            for (int a = 0; a < k; ++a) {
                double rmax = 0.0;
                for (int i = 0; i < n; ++i) rmax = std::max(rmax, std::fabs(J[a][i]) * u[i]);
                if (!(rmax > 0.0)) continue;
                for (int j = 0; j < n; ++j)
                    if (J[a][j] != 0.0) col[j].push_back(std::fabs(J[a][j]) * u[j] / rmax);
            }
        }
        std::vector<double> target = u;
        bool any = false;
        for (int j = 0; j < n; ++j) {
            const double c = median(col[j]);
            if (c > 0.0 && std::isfinite(c)) {
                target[j] = std::min(std::max(u[j] / c, lo), hi);
                any = true;
            }
        }
        if (!any) break;
        double tmin = hi;
        for (int j = 0; j < n; ++j) tmin = std::min(tmin, target[j]);
        for (double& e : target) e = std::min(std::max(e / tmin, lo), hi);
        // NOTE: a model's velocity chart need not be invariant under these scalings (appell_hamel's asks
        // |v_h| > 1.5e-8 max_j |v_j|): go from u towards the target (geometrically) only as far as keeps at least half
        // of the pilot states that u keeps inside the charts
        auto accepted = [&](const std::vector<double>& w) {
            const std::vector<double> keep = u;
            u = w;
            int count = 0;
            for (const Pilot& p : ps) {
                double v[n];
                count += at(p, 1.0, v) ? 1 : 0;
            }
            u = keep;
            return count;
        };
        const int need = std::max(1, accepted(u) / 2);
        auto between = [&](double f) {
            std::vector<double> w(n);
            for (int j = 0; j < n; ++j) w[j] = u[j] * std::pow(target[j] / u[j], f);
            return w;
        };
        if (accepted(target) >= need) {
            u = target;
        } else {
            double a = 0.0, b = 1.0;
            for (int it = 0; it < 30; ++it) {
                const double mid = 0.5 * (a + b);
                (accepted(between(mid)) >= need ? a : b) = mid;
            }
            u = between(a);
        }
    }
    // log10 of the median over the pilots of max_ν |φ_ν(q, 0)| / Σ_i |J_νi v_i| at the velocities λ u ξ
    auto log_ratio = [&](double lambda) -> std::optional<double> {
        std::vector<double> r;
        for (const Pilot& p : ps) {
            double v[n], zero[n] = {}, phi0[k];
            if (!at(p, lambda, v) || !in_charts(model, p.q, zero)) continue;
            model.constraints(p.q, zero, p.t, phi0);
            double best = 0.0;
            for (int a = 0; a < k; ++a) {
                double first = 0.0;
                for (int i = 0; i < n; ++i) first += std::fabs(J[a][i] * v[i]);
                if (std::isfinite(phi0[a]) && first > 0.0) best = std::max(best, std::fabs(phi0[a]) / first);
            }
            r.push_back(best);
        }
        const double m = median(r);
        if (!(m > 0.0) || !std::isfinite(m)) return std::nullopt;
        return std::log10(m);
    };
    double lambda = 1.0;
    if (const std::optional<double> r1 = log_ratio(1.0)) {
        double a = -100.0, b = 100.0; // log10 λ; the ratio falls as λ grows (first-order terms grow)
        if (*r1 > 0.0) a = 0.0;
        else b = 0.0;
        for (int it = 0; it < 60; ++it) {
            const double mid = 0.5 * (a + b);
            const std::optional<double> r = log_ratio(std::pow(10.0, mid));
            // NOTE: no ratio there (an overflow at large λ, first-order terms that underflow at small λ): back
            // towards λ = 1
            const bool smaller = r ? *r < 0.0 : mid > 0.0;
            (smaller ? b : a) = mid;
        }
        lambda = std::pow(10.0, 0.5 * (a + b));
    }
    for (double& e : u) e = std::min(std::max(lambda * e, lo), hi);
    return u;
}

inline std::string format_coefficient(double c) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", c);
    return buf;
}

} // namespace detail

/** @brief Classifies the constraints of `model` (see the file comment). Throws std::runtime_error when no state in
 *         the box lies inside the model's charts. */
template <class M> Classification classify(const M& model, const ClassifyOptions& opt = {}) {
    constexpr int n = M::n, k = M::k;
    const double tol = opt.tol;
    const double scales[3] = {0.5, 2.0, 3.5};
    const double curvature_rel = 1e-6; // a direction counts when it keeps more than this part of its length
    Classification out;
    out.model = M::name;
    out.options = opt;

    // ---- the states ----
    struct State {
        double q[n], v[n], t;
    };
    std::vector<State> states;
    std::vector<detail::ConstraintDerivs<n, k>> der;
    out.velocity_scales = detail::velocity_scales(model, opt, scales, 3);
    std::mt19937_64 rng(opt.seed);
    std::uniform_real_distribution<double> box(-opt.box, opt.box), angle(-M_PI, M_PI), time(0.0, opt.box);
    const long max_tries = 100L * opt.samples;
    for (long tries = 0; static_cast<int>(states.size()) < opt.samples && tries < max_tries; ++tries) {
        State s;
        for (int j = 0; j < n; ++j) {
            s.q[j] = M::angles[j] ? angle(rng) : box(rng);
            s.v[j] = out.velocity_scales[static_cast<std::size_t>(j)] * box(rng);
        }
        s.t = time(rng);
        bool ok = in_charts(model, s.q, s.v);
        for (double sc : scales) {
            double sv[n], ph[k];
            for (int j = 0; j < n; ++j) sv[j] = sc * s.v[j];
            ok = ok && model.in_velocity_chart(s.q, sv);
            if (ok) model.constraints(s.q, sv, s.t, ph);
            for (int a = 0; a < k && ok; ++a) ok = std::isfinite(ph[a]);
        }
        if (ok) {
            // NOTE: a state whose derivatives overflow (huge parameters) can decide nothing: left out
            der.push_back(detail::constraint_derivs(model, s.q, s.v, s.t));
            const double* x = &der.back().phi[0];
            const std::size_t count = sizeof(detail::ConstraintDerivs<n, k>) / sizeof(double);
            if (std::all_of(x, x + count, [](double e) { return std::isfinite(e); })) states.push_back(s);
            else der.pop_back();
        }
    }
    if (states.empty())
        throw std::runtime_error(std::string("classification of '") + M::name +
                                 "': no random state lies inside the model's charts with finite constraints");
    out.samples = static_cast<int>(states.size());

    // |φ| + Σ_i |J_i v_i|: the size of the terms of φ at a state (what each identity is measured against)
    auto size_of = [&](std::size_t m, int a) {
        double x = std::fabs(der[m].phi[a]);
        for (int i = 0; i < n; ++i) x += std::fabs(der[m].J[a][i] * states[m].v[i]);
        return x;
    };

    for (int a = 0; a < k; ++a) {
        ConstraintClass c;
        c.index = a;
        bool affine = true, linear = true;
        for (std::size_t m = 0; m < states.size(); ++m) {
            const auto& d = der[m];
            const double size = size_of(m, a);
            double second = 0.0, Jv = 0.0; // Σ_ij |H_ij v_i v_j|: the size of φ's second-order terms
            for (int i = 0; i < n; ++i) {
                Jv += d.J[a][i] * states[m].v[i];
                for (int j = 0; j < n; ++j) second += std::fabs(states[m].v[i] * d.Hv[a][i][j] * states[m].v[j]);
            }
            if (!(second <= tol * size)) affine = false;
            if (!(std::fabs(d.phi[a] - Jv) <= tol * size)) linear = false;
            // NOTE: φ_t times the time span sampled, against the terms of φ (both in the units of φ)
            if (!(std::fabs(d.phi_t[a]) * opt.box <= tol * size)) c.time_dependent = true;
        }
        c.velocity = !affine  ? VelocityDependence::nonlinear
                     : linear ? VelocityDependence::linear
                              : VelocityDependence::affine;

        // homogeneity: σ from Euler's relation J·v = σ φ where φ is not small, then φ(q, s v) = s^σ φ(q, v)
        std::vector<double> sigma;
        for (std::size_t m = 0; m < states.size(); ++m) {
            double Jv = 0.0;
            for (int i = 0; i < n; ++i) Jv += der[m].J[a][i] * states[m].v[i];
            if (std::fabs(der[m].phi[a]) > 1e-3 * size_of(m, a)) sigma.push_back(Jv / der[m].phi[a]);
        }
        if (!sigma.empty()) {
            std::nth_element(sigma.begin(), sigma.begin() + sigma.size() / 2, sigma.end());
            double s0 = sigma[sigma.size() / 2];
            if (std::fabs(s0 - std::round(s0)) <= 1e-6) s0 = std::round(s0);
            bool hom = true;
            for (std::size_t m = 0; m < states.size() && hom; ++m)
                for (double sc : scales) {
                    double sv[n], ph[k];
                    for (int j = 0; j < n; ++j) sv[j] = sc * states[m].v[j];
                    model.constraints(states[m].q, sv, states[m].t, ph);
                    const double want = std::pow(sc, s0) * der[m].phi[a];
                    if (!(std::fabs(ph[a] - want) <= tol * std::pow(sc, s0) * size_of(m, a))) hom = false;
                }
            c.homogeneous = hom;
            if (hom) c.degree = s0;
        }

        // integrability of a linear constraint: Cronström–Raita (29) and (33)
        if (c.velocity == VelocityDependence::linear) {
            bool exact = true, factor = true;
            for (std::size_t m = 0; m < states.size(); ++m) {
                const auto& d = der[m];
                for (int i = 0; i < n; ++i)
                    for (int j = 0; j < n; ++j) // M_ij = ∂_i a_j − ∂_j a_i against its two terms
                        if (!(std::fabs(d.dJdq[a][i][j] - d.dJdq[a][j][i]) <=
                              tol * (std::fabs(d.dJdq[a][i][j]) + std::fabs(d.dJdq[a][j][i]))))
                            exact = false;
                if (!detail::curvature_rows(d, {a}, tol, curvature_rel).empty()) factor = false;
            }
            factor = factor || exact; // NOTE: dω = 0 vanishes on ker ω too, whatever the rounding of the two tests
            c.integrability = exact    ? Integrability::exact
                              : factor ? Integrability::integrating_factor
                                       : Integrability::non_integrable;
        }
        out.constraints.push_back(c);
    }

    // ---- the system: involutivity of D = ker J and the integrable combinations ----
    SystemClass& sys = out.system;
    const bool all_linear = std::all_of(out.constraints.begin(), out.constraints.end(), [](const ConstraintClass& c) {
        return c.velocity == VelocityDependence::linear;
    });
    const bool no_nonlinear =
        std::none_of(out.constraints.begin(), out.constraints.end(),
                     [](const ConstraintClass& c) { return c.velocity == VelocityDependence::nonlinear; });
    if (no_nonlinear) {
        const double rel = curvature_rel;
        std::vector<int> all(k);
        for (int a = 0; a < k; ++a) all[a] = a;
        std::vector<std::vector<double>> curvature_span, form_span;
        for (std::size_t m = 0; m < states.size(); ++m) {
            const auto& d = der[m];
            for (const auto& row : detail::curvature_rows(d, all, tol, rel))
                detail::add_direction(curvature_span, row, rel);
            for (int i = 0; i < n; ++i) {
                std::vector<double> col(k);
                double cmax = 0.0;
                for (int a = 0; a < k; ++a) cmax = std::max(cmax, std::fabs(col[a] = d.J[a][i]));
                if (cmax > 0.0)
                    for (double& e : col) e /= cmax; // NOTE: largest entry 1 before add_direction squares them
                detail::add_direction(form_span, col, rel);
            }
        }
        // NOTE: constraints each integrable (after a factor) make an integrable set: ker of the set is the
        // intersection of their foliations' tangent spaces
        if (all_linear && std::all_of(out.constraints.begin(), out.constraints.end(), [](const ConstraintClass& c) {
                return c.integrability != Integrability::non_integrable;
            }))
            curvature_span.clear();
        const bool involutive = curvature_span.empty();
        if (!involutive) sys.integrable = false;
        else if (all_linear) sys.integrable = true;
        if (all_linear) {
            // S = {c : Σ c_ν dω_ν|D×D ≡ 0} = complement of curvature_span; T = {c : Σ c_ν a_ν ≡ 0} ⊂ S
            const std::vector<std::vector<double>> S = detail::complement(curvature_span, k, rel);
            std::vector<std::vector<double>> basis = detail::complement(form_span, k, rel); // T
            const std::size_t trivial = basis.size();
            for (const auto& c : S) detail::add_direction(basis, c, rel);
            sys.integrable_combinations = static_cast<int>(basis.size() - trivial);
            for (std::size_t b = trivial; b < basis.size(); ++b) {
                std::vector<double> c = basis[b];
                double cmax = 0.0, sign = 1.0;
                for (double e : c)
                    if (std::fabs(e) > cmax) cmax = std::fabs(e);
                for (double e : c)
                    if (std::fabs(e) > 1e-12 * cmax) {
                        sign = e > 0 ? 1.0 : -1.0;
                        break;
                    }
                for (double& e : c) {
                    e = sign * e / cmax;
                    if (std::fabs(e - std::round(e)) < 1e-9) e = std::round(e);
                    if (e == 0.0) e = 0.0; // no −0
                }
                sys.combinations.push_back(c);
            }
        }
    }

    // ---- consequences ----
    for (const State& s : states) {
        double L = 0.0, Lt = 0.0;
        detail::lagrangian_time_derivative(model, s.q, s.v, s.t, L, Lt);
        // NOTE: ∂L/∂t times the time span sampled against L (one unit); an overflowed L decides nothing
        if (std::isfinite(L) && std::isfinite(Lt) && !(std::fabs(Lt) * opt.box <= tol * std::fabs(L)))
            sys.lagrangian_time_dependent = true;
    }
    sys.has_force = DeclaresForce<M>::get(model);
    if constexpr (M::has_force)
        for (const State& s : states) {
            double F[n] = {}, Fv = 0.0, size = 0.0; // F·v against Σ_j |F_j v_j|
            model.force(s.q, s.v, s.t, F);
            for (int j = 0; j < n; ++j) {
                Fv += F[j] * s.v[j];
                size += std::fabs(F[j] * s.v[j]);
            }
            if (std::isfinite(size) && !(std::fabs(Fv) <= tol * size)) sys.force_does_no_work = false;
        }
    const bool all_homogeneous = std::all_of(out.constraints.begin(), out.constraints.end(),
                                             [](const ConstraintClass& c) { return c.homogeneous; });
    sys.reactions_do_no_work = all_homogeneous;
    sys.energy_conserved = all_homogeneous && !sys.lagrangian_time_dependent && sys.force_does_no_work;
    sys.dynamics_must_coincide = sys.integrable.value_or(false);

    // ---- the statements ----
    auto phi_name = [](int a) { return "phi" + std::to_string(a); };
    std::vector<std::string>& st = out.statements;
    for (const ConstraintClass& c : out.constraints) {
        std::string s = phi_name(c.index) + " is " + to_string(c.velocity) + " in the velocities";
        if (c.homogeneous) s += ", positively homogeneous of degree " + detail::format_coefficient(*c.degree);
        else s += ", not homogeneous";
        s += c.time_dependent ? ", and depends on time explicitly (rheonomic)" : ", and does not depend on time";
        switch (c.integrability) {
        case Integrability::exact:
            s += "; as a 1-form it is exact (dω = 0, Cronström–Raita (29)): a holonomic constraint";
            break;
        case Integrability::integrating_factor:
            s += "; as a 1-form it is integrable after an integrating factor (ω ∧ dω = 0, Cronström–Raita (33))";
            break;
        case Integrability::non_integrable:
            s +=
                "; as a 1-form it is not integrable, not even after an integrating factor (Cronström–Raita (33) fails)";
            break;
        default:
            break;
        }
        st.push_back(s + ".");
    }
    if (sys.integrable.has_value() && *sys.integrable)
        st.push_back("The constraint distribution is involutive: the system is holonomic, and the nonholonomic and "
                     "vakonomic motions must coincide.");
    else if (sys.integrable.has_value())
        st.push_back(std::string("The constraint distribution ker J is not involutive (Frobenius): the system is truly "
                                 "nonholonomic") +
                     (all_linear ? "" : " (its linear part already is not integrable)") +
                     ", and the nonholonomic and vakonomic motions need not coincide.");
    else
        st.push_back(no_nonlinear ? "The linear part of the affine constraints is involutive; whether the affine "
                                    "constraints come from holonomic ones is not decided here."
                                  : "Integrability is not decided for constraints nonlinear in the velocities; the "
                                    "two dynamics need not coincide.");
    if (sys.integrable_combinations.has_value() && *sys.integrable_combinations > 0 && !*sys.integrable) {
        std::string s = std::to_string(*sys.integrable_combinations) +
                        " independent combination(s) of the constraints with constant coefficients are integrable "
                        "(Σ c_ν dω_ν vanishes on the constraint distribution), although the set is not:";
        for (const auto& c : sys.combinations) {
            std::string comb;
            for (int a = 0; a < k; ++a)
                if (c[a] != 0.0)
                    comb += (comb.empty() ? (c[a] < 0 ? "-" : "") : (c[a] < 0 ? " - " : " + ")) +
                            (std::fabs(c[a]) == 1.0 ? "" : detail::format_coefficient(std::fabs(c[a])) + " ") +
                            phi_name(a);
            s += " " + comb + ";";
        }
        s.back() = '.';
        st.push_back(s);
    }
    if (all_homogeneous)
        st.push_back("Every constraint is positively homogeneous in the velocities (Talamucci (45)-(46)): the Četaev "
                     "reactions do no work on the constrained motions (R·v = Σ λ_ν σ_ν φ_ν = 0).");
    else
        st.push_back("Not every constraint is homogeneous in the velocities: the Četaev reactions do work "
                     "(R·v = Σ λ_ν (J_ν·v) ≠ 0 in general).");
    std::string e = sys.energy_conserved ? "The nonholonomic energy E = v·L_v − L is conserved (Talamucci (41)-(44))"
                                         : "The nonholonomic energy E = v·L_v − L is not conserved in general";
    std::vector<std::string> why;
    if (!all_homogeneous) why.push_back("a constraint is not homogeneous");
    if (sys.lagrangian_time_dependent) why.push_back("L depends on time");
    if (!sys.force_does_no_work) why.push_back("the applied force does work");
    if (!why.empty()) {
        e += ": ";
        for (std::size_t i = 0; i < why.size(); ++i) e += (i ? ", " : "") + why[i];
    } else {
        e += ": L does not depend on time and ";
        e += sys.has_force ? "the applied force does no work (F·v = 0 at every sample)"
                           : "the model declares no applied force besides the potential in L (assumed complete)";
    }
    st.push_back(e + ".");
    return out;
}

} // namespace nhvk
