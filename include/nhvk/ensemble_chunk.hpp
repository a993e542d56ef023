// SPDX-License-Identifier: MIT
/** @file
 *  @brief One chunk of the ensemble in structure-of-arrays form, and the per-member work on it. The CPU backend
 *         calls `run_chunk_member` in an OpenMP loop; the CUDA kernel calls it with one thread per trajectory.
 */
#pragma once

#include <cstdint>

#include "nhvk/config.hpp"
#include "nhvk/member.hpp"
#include "nhvk/model_params.hpp"
#include "nhvk/numerics.hpp"

namespace nhvk {

/**
 * @brief A chunk of `m` members, structure of arrays, every array in double. Member `j` reads `q0[c * ld + j]` for
 *        coordinate `c` (likewise `v0`, `mu0`, `params` with `params_ld`, 0 meaning one shared parameter set) and
 *        writes `metrics[(metric * nt + i) * ld + j]`, its interpolated onset time at
 *        `metrics[member_series_row(nt, member_onset_time) * ld + j]` (`metric_rows(nt)` rows in all), `status[j]`,
 *        `failed[j]`, `fail_index[j]`, `onset[j]`. A member that fails keeps the metrics and the onset of the output
 * times it reached. Pointers are host pointers for the CPU backend and device pointers inside the CUDA kernel.
 */
struct ChunkArgs {
    long long m = 0;  ///< members in this chunk
    long long ld = 0; ///< leading dimension of every per-member array (≥ m)
    int nt = 0;       ///< output times
    double t0 = 0.0;
    const double* times = nullptr; ///< nt output times
    const double* q0 = nullptr;
    const double* v0 = nullptr;
    const double* mu0 = nullptr;
    const double* params = nullptr; ///< nullptr: model defaults
    long long params_ld = 0;        ///< 0: one parameter set for all members (params[p]); else params[p * ld + j]
    int n_params = 0;
    StepControl ctl;
    DivergenceSpec divergence;
    double onset_threshold = 1e-3;
    double stop_at = NumericLimits<double>::infinity(); ///< divergence.stop_at: stop a member past it (inf: never)
    bool alive_population = true;       ///< per-time statistics over the members alive at each time (else survivors)
    int replicas = 0;                   ///< replica groups of the divergence statistics (0: none; see metrics_view)
    std::uint64_t first_member = 0;     ///< the run-wide trajectory index of member 0 (set by `sample`)
    double* metrics = nullptr;          ///< metric_rows(nt) · ld
    std::uint8_t* status = nullptr;     ///< Status per member
    std::uint8_t* failed = nullptr;     ///< Dynamics that failed per member
    std::int32_t* fail_index = nullptr; ///< output index that could not be reached
    std::int32_t* onset = nullptr;      ///< first output index with d_q > threshold, stats::onset_never if none reached
    std::uint8_t* sample_status = nullptr; ///< SampleStatus per member, written by the sampling stage
    /// stash_values(n, nt) · ld: the nonholonomic states of the two-pass integration (StateStash), which the device
    /// runs for the explicit methods (two_passes_on_device); nullptr on the CPU integrates both dynamics at once
    double* stash = nullptr;
};

/** @brief Integrate member `j` of the chunk with both dynamics and write its metrics (no trajectory stored).
 *         `Equations`: `AdEquations` (the reference) or `GenEquations` (the generated code). */
template <class M, class T, template <class, class> class Stepper,
          template <class, class> class Equations = AdEquations>
NHVK_HD NHVK_FORCEINLINE void run_chunk_member(const ChunkArgs& a, long long j) {
    constexpr int n = M::n, k = M::k;
    if (!(a.q0[j] == a.q0[j])) {
        // NOTE: NaN in q0 marks a member the sampler could not place on the constraint set: not integrated; the host
        // reports it with the sampler's reason.
        a.status[j] = static_cast<std::uint8_t>(Status::non_finite);
        a.failed[j] = static_cast<std::uint8_t>(Dynamics::none);
        a.fail_index[j] = -1;
        a.onset[j] = stats::onset_never;
        a.metrics[member_series_row(a.nt, member_onset_time) * a.ld + j] = NumericLimits<double>::quiet_NaN();
        return;
    }
    // NOTE: a compile-time bound (the generated equations know the exact count), and the array is only ever seen
    // through a definite pointer, so the loop unrolls and no dynamic index forces it into local memory.
    M model{};
    if (a.params && a.n_params > 0) {
        constexpr int np = Equations<M, T>::param_slots;
        double p[np > 0 ? np : 1];
        NHVK_UNROLL
        for (int i = 0; i < np; ++i) p[i] = i < a.n_params ? a.params[a.params_ld ? i * a.params_ld + j : i] : 0.0;
        model = make_model<M>(p);
    }
    T q0[n], v0[n], mu0[k > 0 ? k : 1];
    NHVK_UNROLL
    for (int c = 0; c < n; ++c) {
        q0[c] = T(a.q0[c * a.ld + j]);
        v0[c] = T(a.v0[c * a.ld + j]);
    }
    NHVK_UNROLL
    for (int c = 0; c < k; ++c) mu0[c] = a.mu0 ? T(a.mu0[c * a.ld + j]) : T(0);
    DivergenceObserver<M, T, Equations<M, T>> obs{Equations<M, T>(model), a.divergence, a.nt, a.metrics + j, a.ld,
                                                  a.onset_threshold,      a.stop_at};
#if defined(__CUDA_ARCH__)
    // NOTE: with an explicit method one motion at a time: the idle motion's state and step control are not held in
    // registers while the other steps (integrate_member_in_two_passes, two_passes_on_device)
    MemberOutcome out;
    if constexpr (two_passes_on_device(Stepper<VakonomicSystem<M, T, Equations<M, T>>, T>::method))
        out = integrate_member_in_two_passes<Stepper, Equations>(model, q0, v0, mu0, T(a.t0), a.times, a.nt, a.ctl, obs,
                                                                 StateStash{a.stash + j, a.ld, a.nt});
    else out = integrate_member<Stepper, Equations>(model, q0, v0, mu0, T(a.t0), a.times, a.nt, a.ctl, obs);
#else
    const MemberOutcome out =
        a.stash ? integrate_member_in_two_passes<Stepper, Equations>(model, q0, v0, mu0, T(a.t0), a.times, a.nt, a.ctl,
                                                                     obs, StateStash{a.stash + j, a.ld, a.nt})
                : integrate_member<Stepper, Equations>(model, q0, v0, mu0, T(a.t0), a.times, a.nt, a.ctl, obs);
#endif
    a.status[j] = static_cast<std::uint8_t>(out.status);
    a.failed[j] = static_cast<std::uint8_t>(out.failed);
    a.fail_index[j] = out.time_index;
    a.onset[j] = obs.onset_index;
    a.metrics[member_series_row(a.nt, member_onset_time) * a.ld + j] =
        onset_time_of<T>(a.metrics + j, a.ld, a.nt, a.times, a.t0, obs.onset_index, a.onset_threshold);
}

} // namespace nhvk
