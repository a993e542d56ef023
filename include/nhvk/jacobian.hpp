// SPDX-License-Identifier: MIT
/** @file
 *  @brief The exact Jacobian of a system's right-hand side, `∂f/∂y` and `∂f/∂t`, by forward-mode tangents through
 *         the same equations the steppers evaluate (the generated code, or the dual-number reference): what the
 *         linearly implicit methods (`Rodas4`) solve with.
 *
 *  A system that offers it declares `template <class S> using rebind` (the same system in the scalar `S`) and
 *  `model()`, as the nonholonomic and vakonomic systems of nhvk/dynamics.hpp do.
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/dual.hpp"
#include "nhvk/status.hpp"

namespace nhvk {

/**
 * @brief `J[i][j] = ∂f_i/∂y_j` and `ft[i] = ∂f_i/∂t` at `(t, y)`.
 *
 * One tangent per column, `dim + 1` evaluations of the system in `Dual<T, 1>`, rather than all columns at once in
 * `Dual<T, dim + 1>`: the same arithmetic to within the repeated values, but one instantiation of the equations of
 * twice the size instead of `dim + 2` times, which is what the compile time and, on the device, the registers follow.
 * A failed evaluation returns its status (the first column's: a chart or a singular solve does not depend on the
 * tangent). The values the tangents carry are not `f(t, y)` to the bit (a dual quotient multiplies by the
 * reciprocal), so the steppers take `f` from the system itself.
 */
template <class Sys, class T> NHVK_HD Status rhs_jacobian(const Sys& sys, T t, const T* y, T (*J)[Sys::dim], T* ft) {
    constexpr int dim = Sys::dim;
    using D = Dual<T, 1>;
    const typename Sys::template rebind<D> dsys(sys.model());
    D yd[dim], fd[dim];
    // NOTE: the column index is a run-time loop variable on purpose (one copy of the equations); the seeds are set by
    // comparison with it, so that no array is indexed by it but the Jacobian's columns.
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int c = 0; c <= dim; ++c) {
        NHVK_UNROLL
        for (int j = 0; j < dim; ++j) {
            yd[j] = D(y[j]);
            yd[j].d[0] = j == c ? T(1) : T(0);
        }
        D td(t);
        td.d[0] = c == dim ? T(1) : T(0);
        const Status s = dsys.rhs(td, yd, fd);
        if (s != Status::ok) return s;
        if (c == dim) {
            NHVK_UNROLL
            for (int i = 0; i < dim; ++i) ft[i] = fd[i].d[0];
        } else {
            NHVK_UNROLL
            for (int i = 0; i < dim; ++i) J[i][c] = fd[i].d[0];
        }
    }
    return Status::ok;
}

} // namespace nhvk
