// SPDX-License-Identifier: MIT
/** @file
 *  @brief The one description of the per-time metrics that the ensemble observer writes (`DivergenceObserver`,
 *         member.hpp): the `Metric` enum and `metric_count` for the core (host and device), and for the host the
 *         name that stats.csv and summary.json use, where summary.json holds the statistics, the unit, the group
 *         (which plot of report.html), the plot label and the definition. Every output, the report, the README's
 *         metric table and the tests read them from here.
 */
#pragma once

#include <cstddef>

namespace nhvk {

/** @brief What a metric is measured in: metrics of one unit can share an axis, no others. */
enum class MetricUnit : int { coordinate, velocity, energy, dimensionless };

/** @brief The group of a metric: the report draws one plot per group (one per metric for `divergence`). */
enum class MetricGroup : int {
    divergence,
    residual,
    energy_drift,
    relative_energy_drift,
    energy_balance,
    reaction_work
};

/** @brief Metrics per output time written by the ensemble observer (the order of the `metric_*` indices); each is
 *         described by its row of `metric_table`, in this order. */
enum Metric : int {
    metric_dq,
    metric_dv,
    metric_res_nh,
    metric_res_vk,
    metric_energy_nh,
    metric_energy_vk,
    metric_energy_rel_nh,
    metric_energy_rel_vk,
    metric_balance_nh,
    metric_work_nh,
    metric_count
};

/** @brief A metric's unit: `key` in summary.json, `description` in axis titles and the README. */
struct MetricUnitInfo {
    MetricUnit unit;
    const char* key;
    const char* description;
};

/** @brief A metric group: `key` in summary.json and the report's plot ids, `heading` of its plot, `quantity` in the
 *         plot's axis title, before the unit's description (the divergences are plotted one by one, each under its
 *         name). */
struct MetricGroupInfo {
    MetricGroup group;
    const char* key;
    const char* heading;
    const char* quantity;
};

/** @brief The description of one metric. */
struct MetricInfo {
    Metric id;
    const char* name;       ///< stats.csv's `metric`, the key of summary.json's `metrics`
    const char* statistics; ///< the dotted path of its statistics in summary.json
    const char* max;        ///< the dotted path of its largest value over all times in summary.json (nullptr: none)
    MetricUnit unit;
    MetricGroup group;
    const char* label;      ///< the report's legend and heading
    const char* definition; ///< what the observer computes, as summary.json and the README state it
};

// NOTE: host tables (strings); device code uses only the enum.
inline constexpr MetricUnitInfo metric_units[] = {
    {MetricUnit::coordinate, "coordinate", "model coordinate units, mixed over the coordinates"},
    {MetricUnit::velocity, "velocity", "coordinate units per time unit, mixed over the coordinates"},
    {MetricUnit::energy, "energy", "model energy units"},
    {MetricUnit::dimensionless, "dimensionless", "dimensionless"},
};

inline constexpr MetricGroupInfo metric_groups[] = {
    {MetricGroup::divergence, "divergence", "Divergence", "divergence"},
    {MetricGroup::residual, "residual", "Constraint residuals", "constraint residual"},
    {MetricGroup::energy_drift, "energy", "Energy drift", "energy drift"},
    {MetricGroup::relative_energy_drift, "energy_rel", "Relative energy drift", "relative energy drift"},
    {MetricGroup::energy_balance, "balance", "Energy balance residual", "energy balance residual"},
    {MetricGroup::reaction_work, "reaction_work", "Reaction work", "work of the reaction forces"},
};

// NOTE: one row per metric, in the order of `Metric` (the static_asserts below hold it to that): stats.csv's rows,
// summary.json's series and definitions, the report's plots and the README's metric table all come from here, and
// the definitions say what `DivergenceObserver` (member.hpp) computes.
inline constexpr MetricInfo metric_table[] = {
    // id, name, statistics, max, unit, group, label, definition
    {metric_dq, "d_q", "divergence.q", nullptr, MetricUnit::coordinate, MetricGroup::divergence, "d_q = |q_NH − q_VK|",
     "|q_NH − q_VK| over the divergence coordinates, each difference (angles wrapped to (−π, π]) times its weight, "
     "Euclidean or in the kinetic metric W(q_NH) of the plain Lagrangian (divergence.metric)"},
    {metric_dv, "d_v", "divergence.v", nullptr, MetricUnit::velocity, MetricGroup::divergence, "d_v = |v_NH − v_VK|",
     "|v_NH − v_VK| over the divergence coordinates, in the metric of d_q"},
    {metric_res_nh, "res_nh", "constraint_residual.nh", "constraint_residual.max.nh", MetricUnit::velocity,
     MetricGroup::residual, "res_nh: nonholonomic max_ν |φ_ν| / |∂φ_ν/∂v|",
     "max_ν |φ_ν(q, v, t)| / |∂φ_ν/∂v| along the nonholonomic motion, each constraint divided by the Euclidean norm of "
     "its gradient in the velocities (to first order the distance of v from φ_ν = 0; the same whatever factor a "
     "constraint is written with)"},
    {metric_res_vk, "res_vk", "constraint_residual.vk", "constraint_residual.max.vk", MetricUnit::velocity,
     MetricGroup::residual, "res_vk: vakonomic max_ν |φ_ν| / |∂φ_ν/∂v|",
     "max_ν |φ_ν(q, v, t)| / |∂φ_ν/∂v| along the vakonomic motion, as for res_nh"},
    {metric_energy_nh, "energy_nh", "energy_drift.nh", "energy_drift.max.nh", MetricUnit::energy,
     MetricGroup::energy_drift, "energy_nh: |E(t) − E(t0)|",
     "|E(t) − E(t0)| along the nonholonomic motion, E = v·L_v − L"},
    {metric_energy_vk, "energy_vk", "energy_drift.vk", "energy_drift.max.vk", MetricUnit::energy,
     MetricGroup::energy_drift, "energy_vk: |Ẽ(t) − Ẽ(t0)|, Ẽ = E − μ·(J·v)",
     "|Ẽ(t) − Ẽ(t0)| along the vakonomic motion, Ẽ = E − μ·(J·v) (conserved for autonomous systems)"},
    {metric_energy_rel_nh, "energy_rel_nh", "energy_drift.relative.nh", "energy_drift.relative.max.nh",
     MetricUnit::dimensionless, MetricGroup::relative_energy_drift, "energy_rel_nh: nonholonomic drift / energy scale",
     "|E(t) − E(t0)| / s, s = max(|E(t0)|, T(t0)) the member's energy scale, T = ½ vᵀWv the kinetic energy of the "
     "plain Lagrangian's quadratic part (s = 1 where both are 0)"},
    {metric_energy_rel_vk, "energy_rel_vk", "energy_drift.relative.vk", "energy_drift.relative.max.vk",
     MetricUnit::dimensionless, MetricGroup::relative_energy_drift, "energy_rel_vk: vakonomic drift / energy scale",
     "|Ẽ(t) − Ẽ(t0)| / s, s as for energy_rel_nh"},
    {metric_balance_nh, "balance_nh", "diagnostics.balance_nh", "diagnostics.balance_max", MetricUnit::dimensionless,
     MetricGroup::energy_balance, "balance_nh: |E − E(t0) − W_λ − W_F| / s",
     "|E(t) − E(t0) − W_λ(t) − W_F(t)| / s along the nonholonomic motion, s as for energy_rel_nh, with W_λ = "
     "∫ λ·(J·v) dt the work of the reaction forces and W_F = ∫ (F·v − ∂L/∂t) dt, both integrated with the motion's "
     "own steps: at integration tolerance when the integration is right (a projection's changes of v show in it too)"},
    {metric_work_nh, "reaction_work_nh", "diagnostics.reaction_work_nh", nullptr, MetricUnit::energy,
     MetricGroup::reaction_work, "reaction_work_nh: W_λ = ∫ λ·(J·v) dt",
     "W_λ(t) = ∫ λ·(J·v) dt from t0 along the nonholonomic motion, the work of the reaction forces (signed: 0 for "
     "constraints homogeneous in v)"},
};

namespace detail {
template <class Row, class Key, std::size_t N> constexpr bool rows_in_key_order(const Row (&rows)[N], Key Row::*key) {
    for (std::size_t i = 0; i < N; ++i)
        if (static_cast<std::size_t>(rows[i].*key) != i) return false;
    return true;
}
} // namespace detail

static_assert(sizeof(metric_table) / sizeof(metric_table[0]) == metric_count, "one description per metric");
static_assert(detail::rows_in_key_order(metric_table, &MetricInfo::id), "metric_table in the order of Metric");
static_assert(sizeof(metric_units) / sizeof(metric_units[0]) == static_cast<std::size_t>(MetricUnit::dimensionless) + 1,
              "one description per unit");
static_assert(sizeof(metric_groups) / sizeof(metric_groups[0]) ==
                  static_cast<std::size_t>(MetricGroup::reaction_work) + 1,
              "one description per group");
static_assert(detail::rows_in_key_order(metric_units, &MetricUnitInfo::unit), "metric_units in the order of the enum");
static_assert(detail::rows_in_key_order(metric_groups, &MetricGroupInfo::group),
              "metric_groups in the order of the enum");

/** @brief The description of `m` (0 <= m < metric_count). */
constexpr const MetricInfo& metric_info(int m) { return metric_table[m]; }
/** @brief The description of a unit. */
constexpr const MetricUnitInfo& metric_unit_info(MetricUnit u) { return metric_units[static_cast<int>(u)]; }
/** @brief The description of a group. */
constexpr const MetricGroupInfo& metric_group_info(MetricGroup g) { return metric_groups[static_cast<int>(g)]; }

} // namespace nhvk
