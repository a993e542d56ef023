# The figure of a sweep, from its output folder:  python sweep_figure.py OUTPUT_FOLDER FIGURE.png
#   left:   the median d_q(t) of every sweep point with its 95 % band (p50_lo to p50_hi), log-log;
#   middle: the exponent p of the growth law median d_q ~ C t^p against the swept parameter, with its 95 % interval;
#   right:  the median onset time against the swept parameter, with its 95 % interval.
# The parameter axis is logarithmic, as suits a sweep with spacing = "log" (e.g. configs/sweep_particle_mu0.toml).
import sys

import matplotlib.pyplot as plt
import nhvk

res = nhvk.open(sys.argv[1])
s, x = res.sweep.sel(metric="d_q"), res.sweep_axes[0]  # d_q's statistics per point and time, the fits per point
fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.5), layout="constrained", subplot_kw={"xscale": "log"})
s.p50.plot.line(x="time", hue=x, yscale="log", ax=a)
for p in s.point: a.fill_between(s.time, s.p50_lo[p], s.p50_hi[p], alpha=0.2)  # noqa: E701
b.errorbar(s[x], s.exponent_q, [s.exponent_q - s.exponent_lo_q, s.exponent_hi_q - s.exponent_q], fmt="o-")
c.errorbar(s[x], s.onset_p50, [s.onset_p50 - s.onset_p50_lo, s.onset_p50_hi - s.onset_p50], fmt="o-")
fig.savefig(sys.argv[2], dpi=120)
