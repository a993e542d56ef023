// SPDX-License-Identifier: MIT
/** @file
 *  @brief Tsitouras 5(4) (Ch. Tsitouras, "Runge–Kutta pairs of order 5(4) satisfying only the first column
 *         simplifying assumption", Comput. Math. Appl. 62, 2011): seven stages with FSAL, the solution of order 5
 *         advanced, an estimate of order 4, and a free interpolant of order 4. The coefficients are the paper's, as
 *         OrdinaryDiffEq.jl's `Tsit5` tabulates them (rounded to double from its 80-digit values).
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/methods/explicit_rk.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/step_control.hpp"

namespace nhvk {

/** @brief The tableau, error norm and interpolant of Tsit5 for `DenseRk`. */
struct Tsit5Tableau {
    static constexpr Method method = Method::tsit5;
    static constexpr int order = 5;
    static constexpr int error_order = 4;
    static constexpr int stages = 7; ///< the 7th is f(t + h, y_new)
    static constexpr int dense_stages = 0;
    static constexpr int dense_terms = 4; ///< θ, θ², θ³, θ⁴

    static constexpr double C[stages] = {0.0, 0.161, 0.327, 0.9, 0.98002554090450968572981028628702459549, 1.0, 1.0};
    static constexpr double A[stages][stages] = {
        {},
        {0.161},
        {-0.0084806554923569885444268742502307746751, 0.33548065549235698854442687425023077468},
        {2.8971530571054934321304325941929387649, -6.3594484899750748431481599123838256260,
         4.3622954328695814110177273181908868610},
        {5.3258648284392566044288779208405113178, -11.748883564062827877747170339785772962,
         7.4955393428898362083046047845643581557, -0.092495066361755249256502079332071916113},
        {5.8614554429464200286592514869826478904, -12.920969317847109291706118681783359395,
         8.1593678985761586431804007945392534852, -0.071584973281400997224530542525829738691,
         -0.028269050394068382909003057212712241467},
        // the solution's weights b (FSAL): the last stage's input is y_new
        {0.096460766818065229518167313165128763337, 0.01, 0.47988965041449957477524953229059651991,
         1.3790085741037418931922748218568727708, -3.2900695154360806799010475857113638501,
         2.3247105240997739824153559183987657961},
    };
    /// the error estimate's weights: the 4th-order weights less b (the sign is immaterial to the norm)
    static constexpr double E[stages] = {-0.0017800110522257714433785506075395347759,
                                         -0.00081643445965674690322363606335468624019,
                                         0.0078808780102619960103147276725263042386,
                                         -0.14471100717326290753716514797263511672,
                                         0.58235716545255522501993761065204217943,
                                         -0.45808210592918694666163651883255429744,
                                         1.0 / 66.0};
    /// the interpolant y(t + θh) = y + h Σ_i b_i(θ) k_i with b_i(θ) = Σ_p R[i][p] θ^(p+1) (b_i(1) = b_i)
    static constexpr double R[stages][dense_terms] = {
        {0.99999999999999997428, -2.7637061972748259113, 2.9132554618219127438, -1.0530884977290216},
        {0.0, 0.13169999999999999727, -0.22339999999999999818, 0.1017},
        {0.0, 3.9302962368947515285, -5.9410338721315047347, 2.490627285651252793},
        {0.0, -12.411077166933676984, 30.338188630282321598, -16.54810288924490272},
        {0.0, 37.509313416511039195, -88.178904894766401101, 47.37952196281928122},
        {0.0, -27.896526289197287806, 65.091894674793671526, -34.87065786149660974},
        {0.0, 1.5, -4.0, 2.5},
    };

    NHVK_HD static constexpr double c(int i) { return C[i]; }
    NHVK_HD static constexpr double a(int i, int j) { return A[i][j]; }
    struct ErrorRow {
        NHVK_HD static constexpr double at(int j) { return E[j]; }
    };
    template <int P> struct DenseColumn {
        NHVK_HD static constexpr double at(int i) { return R[i][P]; }
    };

    /** @brief `ErrorNorm` of the estimate `h Σ E_j k_j`. */
    template <class T, int D, int ED>
    NHVK_HD NHVK_FORCEINLINE static T error_norm(const T (*K)[D], T h, const T* y, const T* y_new,
                                                 const StepControl& ctl) {
        ErrorNorm<T> norm(ctl);
        NHVK_UNROLL
        for (int j = 0; j < ED; ++j) norm.add(h * rk::weighted<ErrorRow, stages>(K, j), y[j], y_new[j]);
        return norm.value(ED);
    }

    /** @brief `F[p] = Σ_i R[i][p] k_i`. */
    template <class T, int D>
    NHVK_HD NHVK_FORCEINLINE static void build_dense(const T (*K)[D], T, const T*, const T*, T (*F)[D]) {
        NHVK_UNROLL
        for (int j = 0; j < D; ++j) {
            F[0][j] = rk::weighted<DenseColumn<0>, stages>(K, j);
            F[1][j] = rk::weighted<DenseColumn<1>, stages>(K, j);
            F[2][j] = rk::weighted<DenseColumn<2>, stages>(K, j);
            F[3][j] = rk::weighted<DenseColumn<3>, stages>(K, j);
        }
    }

    /** @brief `y_old + h θ (F0 + θ (F1 + θ (F2 + θ F3)))`. */
    template <class T, int D>
    NHVK_HD NHVK_FORCEINLINE static void interpolate(T theta, T h, const T* y_old, const T (*F)[D], T* out) {
        NHVK_UNROLL
        for (int j = 0; j < D; ++j)
            out[j] = y_old[j] + h * theta * (F[0][j] + theta * (F[1][j] + theta * (F[2][j] + theta * F[3][j])));
    }
};

/** @brief Tsit5 as a stepper template: `Tsit5<Sys, T>`. */
template <class Sys, class T> using Tsit5 = DenseRk<Sys, T, Tsit5Tableau>;
template <> struct MethodStepper<Method::tsit5> { template <class Sys, class T> using tmpl = Tsit5<Sys, T>; };

} // namespace nhvk
