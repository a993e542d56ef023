// SPDX-License-Identifier: MIT
#include "stats/fit_law.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nhvk::stats {

double fit_statistic(const SeriesSummary& s, const std::string& name) {
    if (name == "mean") return s.mean;
    if (name == "p05") return s.p05;
    if (name == "p25") return s.p25;
    if (name == "p75") return s.p75;
    if (name == "p95") return s.p95;
    return s.p50;
}

GrowthFit fit_law(const std::vector<double>& t, const std::vector<double>& y_in, const FitSpec& spec) {
    if (t.size() != y_in.size()) throw std::invalid_argument("fit: t and the statistic differ in length");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const bool power = spec.law == FitLaw::power;
    GrowthFit f;
    f.slope = f.amplitude = f.r_squared = f.standard_error = f.ci_low = f.ci_high = nan;
    f.amplitude_ci_low = f.amplitude_ci_high = nan;
    std::vector<double> x, y;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (spec.holds(t[i]) && y_in[i] > 0.0 && std::isfinite(y_in[i])) {
            x.push_back(power ? std::log(t[i]) : t[i]);
            y.push_back(std::log(y_in[i]));
            f.max_median = std::max(f.max_median, y_in[i]);
        }
    }
    f.points = x.size();
    const bool fixed = spec.fixed();
    if (x.size() < (fixed ? 1u : 2u)) return f;
    // sums centred on the means for accuracy; sequential, hence deterministic
    double mx = 0.0, my = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        mx += x[i];
        my += y[i];
    }
    const double n = static_cast<double>(x.size());
    mx /= n;
    my /= n;
    double sxy = 0.0, sxx = 0.0, syy = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (fixed) {
        // log C = ȳ − p·x̄ with p given; RSS = Σ(y − ȳ − p(x − x̄))² = Syy − 2p·Sxy + p²·Sxx; se(log C)² = RSS/(n − 1)/n
        f.slope = spec.fixed_slope;
        const double intercept = my - f.slope * mx;
        f.amplitude = std::exp(intercept);
        const double rss = std::max(0.0, syy - 2.0 * f.slope * sxy + f.slope * f.slope * sxx);
        f.r_squared = syy > 0.0 ? 1.0 - rss / syy : (rss > 0.0 ? nan : 1.0);
        f.standard_error = 0.0;
        f.ci_low = f.ci_high = f.slope;
        if (x.size() >= 2u) {
            const std::size_t dof = x.size() - 1u;
            const double ha = student_t975(dof) * std::sqrt(rss / static_cast<double>(dof) / n);
            f.amplitude_ci_low = std::exp(intercept - ha);
            f.amplitude_ci_high = std::exp(intercept + ha);
        }
        return f;
    }
    if (!(sxx > 0.0)) return f;
    f.slope = sxy / sxx;
    // the least-squares line passes through (x̄, ȳ): log C = ȳ − p·x̄
    const double intercept = my - f.slope * mx;
    f.amplitude = std::exp(intercept);
    // residual sum of squares Σ(y − ȳ − p(x − x̄))² = Syy − p·Sxy, never below 0 by rounding
    const double rss = std::max(0.0, syy - f.slope * sxy);
    f.r_squared = syy > 0.0 ? 1.0 - rss / syy : 1.0;
    if (x.size() >= 3u) {
        const std::size_t dof = x.size() - 2u;
        f.standard_error = std::sqrt(rss / static_cast<double>(dof) / sxx);
        const double h = student_t975(dof) * f.standard_error;
        f.ci_low = f.slope - h;
        f.ci_high = f.slope + h;
        const double ha = student_t975(dof) * std::sqrt(rss / static_cast<double>(dof) * (1.0 / n + mx * mx / sxx));
        f.amplitude_ci_low = std::exp(intercept - ha);
        f.amplitude_ci_high = std::exp(intercept + ha);
    }
    return f;
}

} // namespace nhvk::stats
