// SPDX-License-Identifier: MIT
/** @file
 *  @brief The default step budget of a trajectory (`integrator.max_steps`, `nhvk trajectory --max-steps`).
 */
#pragma once

namespace nhvk {

/**
 * @brief The default `max_steps` (attempted steps, rejected ones included, per trajectory and per dynamics) of a run
 *        with `nt` output times: 100 000 + 1 000 · nt.
 *
 * The rule: a trajectory may take 1 000 steps per output interval on average, plus a base of 100 000 for runs with
 * few outputs. The well-posed members of the shipped configs take a few hundred steps in all; a trajectory that
 * needs a hundred times that is resolving a stiff or singular motion far below the output grid (a vakonomic μ0 of
 * 1e10, a model driven into its singular set), and one step of DOPRI5 costs 6 right-hand sides (about 0.4 µs with
 * the generated equations on one core), so the budget bounds one trajectory to a few tens of milliseconds where
 * the old default of 10^7 let it run for seconds. A budget in steps, not in seconds, keeps the statuses independent
 * of the machine, the backend and the load. The same rule holds for RK4, whose steps are planned per interval.
 */
inline long long default_max_steps(long long nt) { return 100000 + 1000 * (nt > 0 ? nt : 0); }

} // namespace nhvk
