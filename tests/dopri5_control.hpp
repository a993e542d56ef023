// SPDX-License-Identifier: MIT
/** @file
 *  @brief Test support: the DOPRI5 step control of the tests that integrate members directly (core, model and
 *         README-example tests), so that "tight tolerances, first step chosen by the stepper" is written once.
 */
#pragma once

#include "nhvk/steppers.hpp"

namespace nhvk_test {

/** DOPRI5 at `rtol`/`atol` with an automatic first step (dt = 0); every other field at its StepControl default. */
inline nhvk::StepControl dopri5_control(double rtol = 1e-12, double atol = 1e-14) {
    nhvk::StepControl c;
    c.rtol = rtol;
    c.atol = atol;
    c.dt = 0.0;
    return c;
}

} // namespace nhvk_test
