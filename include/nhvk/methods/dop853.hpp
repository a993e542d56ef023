// SPDX-License-Identifier: MIT
/** @file
 *  @brief Dormand–Prince 8(5,3) (DOP853: Hairer, Nørsett & Wanner, Solving ODEs I, §II.10, and Hairer's dop853.f):
 *         twelve stages and a thirteenth, f(t + h, y_new), that is the next step's first (FSAL); the solution of
 *         order 8 advanced; the error of order 7 estimated from the 5th- and 3rd-order embedded solutions together;
 *         an interpolant of order 7 from three more stages, evaluated only for steps that contain an output time.
 *         The coefficients are those of dop853.f as SciPy's `dop853_coefficients.py` lists them (30 digits).
 */
#pragma once

#include "nhvk/config.hpp"
#include "nhvk/methods/explicit_rk.hpp"
#include "nhvk/numerics.hpp"
#include "nhvk/step_control.hpp"

namespace nhvk {

/** @brief The tableau, error norm and interpolant of DOP853 for `DenseRk`. */
struct Dop853Tableau {
    static constexpr Method method = Method::dop853;
    static constexpr int order = 8;
    static constexpr int error_order = 7;
    static constexpr int stages = 13;      ///< the 13th is f(t + h, y_new); row 12 of A is the solution's weights
    static constexpr int dense_stages = 3; ///< rows 13…15, for the interpolant
    static constexpr int dense_terms = 7;
    static constexpr int all = stages + dense_stages;

    static constexpr double C[all] = {0.0,
                                      0.526001519587677318785587544488e-01,
                                      0.789002279381515978178381316732e-01,
                                      0.118350341907227396726757197510,
                                      0.281649658092772603273242802490,
                                      0.333333333333333333333333333333,
                                      0.25,
                                      0.307692307692307692307692307692,
                                      0.651282051282051282051282051282,
                                      0.6,
                                      0.857142857142857142857142857142,
                                      1.0,
                                      1.0,
                                      0.1,
                                      0.2,
                                      0.777777777777777777777777777778};
    static constexpr double A[all][all] = {
        {},
        {5.26001519587677318785587544488e-2},
        {1.97250569845378994544595329183e-2, 5.91751709536136983633785987549e-2},
        {2.95875854768068491816892993775e-2, 0.0, 8.87627564304205475450678981324e-2},
        {2.41365134159266685502369798665e-1, 0.0, -8.84549479328286085344864962717e-1,
         9.24834003261792003115737966543e-1},
        {3.7037037037037037037037037037e-2, 0.0, 0.0, 1.70828608729473871279604482173e-1,
         1.25467687566822425016691814123e-1},
        {3.7109375e-2, 0.0, 0.0, 1.70252211019544039314978060272e-1, 6.02165389804559606850219397283e-2, -1.7578125e-2},
        {3.70920001185047927108779319836e-2, 0.0, 0.0, 1.70383925712239993810214054705e-1,
         1.07262030446373284651809199168e-1, -1.53194377486244017527936158236e-2, 8.27378916381402288758473766002e-3},
        {6.24110958716075717114429577812e-1, 0.0, 0.0, -3.36089262944694129406857109825,
         -8.68219346841726006818189891453e-1, 2.75920996994467083049415600797e1, 2.01540675504778934086186788979e1,
         -4.34898841810699588477366255144e1},
        {4.77662536438264365890433908527e-1, 0.0, 0.0, -2.48811461997166764192642586468,
         -5.90290826836842996371446475743e-1, 2.12300514481811942347288949897e1, 1.52792336328824235832596922938e1,
         -3.32882109689848629194453265587e1, -2.03312017085086261358222928593e-2},
        {-9.3714243008598732571704021658e-1, 0.0, 0.0, 5.18637242884406370830023853209, 1.09143734899672957818500254654,
         -8.14978701074692612513997267357, -1.85200656599969598641566180701e1, 2.27394870993505042818970056734e1,
         2.49360555267965238987089396762, -3.0467644718982195003823669022},
        {2.27331014751653820792359768449, 0.0, 0.0, -1.05344954667372501984066689879e1,
         -2.00087205822486249909675718444, -1.79589318631187989172765950534e1, 2.79488845294199600508499808837e1,
         -2.85899827713502369474065508674, -8.87285693353062954433549289258, 1.23605671757943030647266201528e1,
         6.43392746015763530355970484046e-1},
        {5.42937341165687622380535766363e-2, 0.0, 0.0, 0.0, 0.0, 4.45031289275240888144113950566,
         1.89151789931450038304281599044, -5.8012039600105847814672114227, 3.1116436695781989440891606237e-1,
         -1.52160949662516078556178806805e-1, 2.01365400804030348374776537501e-1, 4.47106157277725905176885569043e-2},
        {5.61675022830479523392909219681e-2, 0.0, 0.0, 0.0, 0.0, 0.0, 2.53500210216624811088794765333e-1,
         -2.46239037470802489917441475441e-1, -1.24191423263816360469010140626e-1, 1.5329179827876569731206322685e-1,
         8.20105229563468988491666602057e-3, 7.56789766054569976138603589584e-3, -8.298e-3},
        {3.18346481635021405060768473261e-2, 0.0, 0.0, 0.0, 0.0, 2.83009096723667755288322961402e-2,
         5.35419883074385676223797384372e-2, -5.49237485713909884646569340306e-2, 0.0, 0.0,
         -1.08347328697249322858509316994e-4, 3.82571090835658412954920192323e-4, -3.40465008687404560802977114492e-4,
         1.41312443674632500278074618366e-1},
        {-4.28896301583791923408573538692e-1, 0.0, 0.0, 0.0, 0.0, -4.69762141536116384314449447206,
         7.68342119606259904184240953878, 4.06898981839711007970213554331, 3.56727187455281109270669543021e-1, 0.0, 0.0,
         0.0, -1.39902416515901462129418009734e-3, 2.9475147891527723389556272149, -9.15095847217987001081870187138},
    };
    /// the 5th-order estimate's weights (b − b̂₅)
    static constexpr double E5[stages] = {0.1312004499419488073250102996e-1,
                                          0.0,
                                          0.0,
                                          0.0,
                                          0.0,
                                          -0.1225156446376204440720569753e+1,
                                          -0.4957589496572501915214079952,
                                          0.1664377182454986536961530415e+1,
                                          -0.3503288487499736816886487290,
                                          0.3341791187130174790297318841,
                                          0.8192320648511571246570742613e-1,
                                          -0.2235530786388629525884427845e-1,
                                          0.0};
    /// the 3rd-order estimate's weights: b less the 3rd-order weights, which differ from b only at stages 0, 8, 11
    static constexpr double E3[stages] = {A[12][0] - 0.244094488188976377952755905512,
                                          A[12][1],
                                          A[12][2],
                                          A[12][3],
                                          A[12][4],
                                          A[12][5],
                                          A[12][6],
                                          A[12][7],
                                          A[12][8] - 0.733846688281611857341361741547,
                                          A[12][9],
                                          A[12][10],
                                          A[12][11] - 0.220588235294117647058823529412e-1,
                                          0.0};
    /// the interpolant's last four vectors: h Σ_j D[r][j] k_j
    static constexpr double D[4][all] = {
        {-0.84289382761090128651353491142e+1, 0.0, 0.0, 0.0, 0.0, 0.56671495351937776962531783590,
         -0.30689499459498916912797304727e+1, 0.23846676565120698287728149680e+1, 0.21170345824450282767155149946e+1,
         -0.87139158377797299206789907490, 0.22404374302607882758541771650e+1, 0.63157877876946881815570249290,
         -0.88990336451333310820698117400e-1, 0.18148505520854727256656404962e+2, -0.91946323924783554000451984436e+1,
         -0.44360363875948939664310572000e+1},
        {0.10427508642579134603413151009e+2, 0.0, 0.0, 0.0, 0.0, 0.24228349177525818288430175319e+3,
         0.16520045171727028198505394887e+3, -0.37454675472269020279518312152e+3, -0.22113666853125306036270938578e+2,
         0.77334326684722638389603898808e+1, -0.30674084731089398182061213626e+2, -0.93321305264302278729567221706e+1,
         0.15697238121770843886131091075e+2, -0.31139403219565177677282850411e+2, -0.93529243588444783865713862664e+1,
         0.35816841486394083752465898540e+2},
        {0.19985053242002433820987653617e+2, 0.0, 0.0, 0.0, 0.0, -0.38703730874935176555105901742e+3,
         -0.18917813819516756882830838328e+3, 0.52780815920542364900561016686e+3, -0.11573902539959630126141871134e+2,
         0.68812326946963000169666922661e+1, -0.10006050966910838403183860980e+1, 0.77771377980534432092869265740,
         -0.27782057523535084065932004339e+1, -0.60196695231264120758267380846e+2, 0.84320405506677161018159903784e+2,
         0.11992291136182789328035130030e+2},
        {-0.25693933462703749003312586129e+2, 0.0, 0.0, 0.0, 0.0, -0.15418974869023643374053993627e+3,
         -0.23152937917604549567536039109e+3, 0.35763911791061412378285349910e+3, 0.93405324183624310003907691704e+2,
         -0.37458323136451633156875139351e+2, 0.10409964950896230045147246184e+3, 0.29840293426660503123344363579e+2,
         -0.43533456590011143754432175058e+2, 0.96324553959188282948394950600e+2, -0.39177261675615439165231486172e+2,
         -0.14972683625798562581422125276e+3},
    };

    NHVK_HD static constexpr double c(int i) { return C[i]; }
    NHVK_HD static constexpr double a(int i, int j) { return A[i][j]; }
    struct Error5Row {
        NHVK_HD static constexpr double at(int j) { return E5[j]; }
    };
    struct Error3Row {
        NHVK_HD static constexpr double at(int j) { return E3[j]; }
    };
    template <int R> struct DenseRow {
        NHVK_HD static constexpr double at(int j) { return D[R][j]; }
    };

    /**
     * @brief Hairer's norm of the two estimates: with e5 = Σ E5_j k_j and e3 = Σ E3_j k_j, each divided by
     *        atol + rtol · max(|y|, |y_new|) and summed in squares (s5, s3), err = |h| s5 / sqrt(n (s5 + 0.01 s3)).
     *        The 3rd-order estimate keeps the 5th-order one from being trusted where it is accidentally small.
     *
     * NOTE: each finite ratio is capped at 1e10, as `ErrorNorm` does, so that a float sum of squares cannot overflow on
     * a bad step; ±∞ and NaN pass it and make the trajectory non-finite.
     */
    template <class T, int D_, int ED>
    NHVK_HD NHVK_FORCEINLINE static T error_norm(const T (*K)[D_], T h, const T* y, const T* y_new,
                                                 const StepControl& ctl) {
        const T atol = T(ctl.atol), rtol = T(ctl.rtol), cap = T(1e10);
        T s5 = T(0), s3 = T(0);
        NHVK_UNROLL
        for (int j = 0; j < ED; ++j) {
            const T ay = abs(y[j]), ay_new = abs(y_new[j]);
            const T sc = atol + rtol * (ay > ay_new ? ay : ay_new);
            T r5 = abs(rk::weighted<Error5Row, stages>(K, j) / sc),
              r3 = abs(rk::weighted<Error3Row, stages>(K, j) / sc);
            r5 = (r5 > cap && is_finite(r5)) ? cap : r5;
            r3 = (r3 > cap && is_finite(r3)) ? cap : r3;
            s5 += r5 * r5;
            s3 += r3 * r3;
        }
        if (s5 == T(0) && s3 == T(0)) return T(0);
        return abs(h) * s5 / sqrt(T(ED) * (s5 + T(0.01) * s3));
    }

    /** @brief F0 = Δ = y_new − y_old, F1 = h k_0 − Δ, F2 = 2Δ − h (k_12 + k_0), F3…F6 = h Σ_j D[r][j] k_j. */
    template <class T, int D_>
    NHVK_HD NHVK_FORCEINLINE static void build_dense(const T (*K)[D_], T h, const T* y_old, const T* y_new,
                                                     T (*F)[D_]) {
        NHVK_UNROLL
        for (int j = 0; j < D_; ++j) {
            const T delta = y_new[j] - y_old[j];
            F[0][j] = delta;
            F[1][j] = h * K[0][j] - delta;
            F[2][j] = T(2) * delta - h * (K[12][j] + K[0][j]);
            F[3][j] = h * rk::weighted<DenseRow<0>, all>(K, j);
            F[4][j] = h * rk::weighted<DenseRow<1>, all>(K, j);
            F[5][j] = h * rk::weighted<DenseRow<2>, all>(K, j);
            F[6][j] = h * rk::weighted<DenseRow<3>, all>(K, j);
        }
    }

    /** @brief y_old + θ (F0 + (1 − θ) (F1 + θ (F2 + (1 − θ) (F3 + θ (F4 + (1 − θ) (F5 + θ F6)))))). */
    template <class T, int D_>
    NHVK_HD NHVK_FORCEINLINE static void interpolate(T theta, T, const T* y_old, const T (*F)[D_], T* out) {
        const T u = T(1) - theta;
        NHVK_UNROLL
        for (int j = 0; j < D_; ++j)
            out[j] =
                y_old[j] +
                theta * (F[0][j] +
                         u * (F[1][j] +
                              theta * (F[2][j] + u * (F[3][j] + theta * (F[4][j] + u * (F[5][j] + theta * F[6][j]))))));
    }
};

/** @brief DOP853 as a stepper template: `Dop853<Sys, T>`. */
template <class Sys, class T> using Dop853 = DenseRk<Sys, T, Dop853Tableau>;
template <> struct MethodStepper<Method::dop853> { template <class Sys, class T> using tmpl = Dop853<Sys, T>; };

} // namespace nhvk
