// SPDX-License-Identifier: MIT
#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace nhvk::report {

namespace {

// Layout of every plot (SVG user units; the element scales to the page width).
constexpr double width = 820, height = 400;
constexpr double left = 78, right = 580, top = 22, bottom = 330;
constexpr double legend_x = 596;
// the grey behind output times whose population is low: light enough that bands and lines stay readable over it
const char* const shade_fill = "#d9d9d9";

/** A coordinate for SVG: two decimals. */
std::string px(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

struct Axis {
    bool log = false;
    double lo = 0, hi = 1; ///< in axis units (log10 of the value on a log axis)
    double p0 = 0, p1 = 1; ///< pixels of lo and hi
    bool ok(double v) const { return std::isfinite(v) && (!log || v > 0); }
    double unit(double v) const { return log ? std::log10(v) : v; }
    double map(double v) const { return p0 + (unit(v) - lo) / (hi - lo) * (p1 - p0); }
};

/** A "nice" step (1, 2 or 5 × 10^k) giving about `n` intervals over `span`. */
double nice_step(double span, int n) {
    const double raw = span / n;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/** log10 of the nearest 1, 2 or 5 × 10^k at or below (`up`: at or above) 10^`x`. */
double nice_log(double x, bool up) {
    const double k = std::floor(x), m = x - k;
    const double steps[] = {0.0, std::log10(2.0), std::log10(5.0), 1.0};
    const double eps = 1e-12;
    if (up) {
        for (double s : steps)
            if (s >= m - eps) return k + s;
        return k + 1.0;
    }
    double best = 0.0;
    for (double s : steps)
        if (s <= m + eps) best = s;
    return k + best;
}

/** The axis range over the drawable values in `vals` (false when there is none). */
bool fit_axis(Axis& a, const std::vector<double>& vals, bool log, bool from_zero = false) {
    a.log = log;
    double lo = INFINITY, hi = -INFINITY;
    for (double v : vals)
        if (a.ok(v)) {
            lo = std::min(lo, a.unit(v));
            hi = std::max(hi, a.unit(v));
        }
    if (!(lo <= hi)) return false;
    if (from_zero && !log) {
        lo = std::min(lo, 0.0);
        hi = std::max(hi, 0.0);
        if (lo == hi) hi = 1; // all zero: a unit range above 0 rather than one around it
    }
    if (log) {
        // NOTE: the range follows the data to the nearest 1, 2 or 5 × 10^k around it, not to whole decades: a sweep
        // over 0.05 to 1.6 is drawn from 0.05 to 2, not from 10^-2 to 10^1
        if (hi - lo < 0.3) {
            lo -= 0.15;
            hi += 0.15;
        }
        lo = nice_log(lo, false);
        hi = nice_log(hi, true);
    } else {
        if (hi - lo <= 0) {
            const double d = lo == 0 ? 1 : std::fabs(lo) * 0.1;
            lo -= d;
            hi += d;
        }
        const double s = nice_step(hi - lo, 6);
        lo = std::floor(lo / s) * s;
        hi = std::ceil(hi / s) * s;
    }
    a.lo = lo;
    a.hi = hi;
    return true;
}

/** Tick positions (axis units) and their labels as SVG text content. */
std::vector<std::pair<double, std::string>> ticks(const Axis& a) {
    std::vector<std::pair<double, std::string>> t;
    if (a.log) {
        const double eps = 1e-9;
        const int k0 = static_cast<int>(std::ceil(a.lo - eps)), k1 = static_cast<int>(std::floor(a.hi + eps));
        if (a.hi - a.lo > 2.5 && k1 > k0) {
            // several decades: ticks at the powers of ten inside the range
            const int step = std::max(1, (k1 - k0 + 7) / 8);
            for (int k = k0; k <= k1; k += step) {
                // NOTE: 10^k with k raised (a tspan), a real minus sign.
                const std::string e = k < 0 ? "\u2212" + std::to_string(-k) : std::to_string(k);
                t.emplace_back(k, "10<tspan dy=\"-6\" font-size=\"9\">" + e + "</tspan>");
            }
        } else {
            // a short range: 1, 2 and 5 × 10^k (every mantissa where those give fewer than 3), as plain numbers
            for (const bool dense : {false, true}) {
                t.clear();
                for (int k = static_cast<int>(std::floor(a.lo)) - 1; k <= static_cast<int>(std::ceil(a.hi)); ++k)
                    for (int c = 1; c <= 9; ++c) {
                        if (!dense && c != 1 && c != 2 && c != 5) continue;
                        const double v = std::log10(static_cast<double>(c)) + k;
                        if (v < a.lo - eps || v > a.hi + eps) continue;
                        char b[32];
                        std::snprintf(b, sizeof b, "%g", c * std::pow(10.0, k));
                        std::string txt = b;
                        if (txt.find("e-") != std::string::npos) txt.replace(txt.find("e-"), 2, "e\u2212");
                        t.emplace_back(v, txt);
                    }
                if (t.size() >= 3) break;
            }
        }
    } else {
        const double s = nice_step(a.hi - a.lo, 6);
        const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(s))));
        for (double v = a.lo; v <= a.hi + s * 1e-9; v += s) {
            const double r = std::fabs(v) < s * 1e-9 ? 0.0 : v;
            char b[48];
            if (std::fabs(s) >= 1e-4 && std::fabs(a.hi) < 1e6 && std::fabs(a.lo) < 1e6)
                std::snprintf(b, sizeof b, "%.*f", decimals, r);
            else std::snprintf(b, sizeof b, "%.3g", r);
            std::string txt = b;
            if (!txt.empty() && txt[0] == '-') txt = "\u2212" + txt.substr(1);
            t.emplace_back(r, txt);
        }
    }
    return t;
}

std::string dash_attr(const std::string& dash) {
    return dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"";
}

struct Skipped {
    long nonpositive = 0, nonfinite = 0;
    void count(const Axis& a, double v) {
        if (!std::isfinite(v)) ++nonfinite;
        else if (a.log && v <= 0) ++nonpositive;
    }
};

void titles(std::ostringstream& os, const Plot& p);

/** `text` broken at spaces into lines of at most `chars` characters (UTF-8 counted by character; a longer word
 *  stands alone on its line). */
std::vector<std::string> wrap(const std::string& text, std::size_t chars) {
    const auto length = [](const std::string& s) {
        std::size_t n = 0;
        for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        return n;
    };
    std::vector<std::string> lines;
    std::string line, word;
    std::istringstream in(text);
    while (in >> word) {
        if (!line.empty() && length(line) + 1 + length(word) > chars) {
            lines.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

/** NOTE: the text room of a plot in characters of the 12 px font (about 7 px each): the legend's column right of
 *  the frame, and the frame's height for the rotated y-axis title; a longer text wraps rather than being cut off at
 *  the edge of the picture. */
constexpr std::size_t legend_chars = 25, y_title_chars = 44;

/** The lines of `lines` as tspans of one <text>, each `dy` below the one before (escaped). */
std::string tspans(const std::vector<std::string>& lines, double x, double dy) {
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i)
        out += "<tspan x=\"" + px(x) + "\"" + (i ? " dy=\"" + px(dy) + "\"" : std::string()) + ">" +
               xml_escape(lines[i]) + "</tspan>";
    return out;
}

void frame(std::ostringstream& os, const Plot& p, const Axis& x, const Axis& y, bool x_ticks) {
    os << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << right - left << "\" height=\"" << bottom - top
       << "\" fill=\"#ffffff\" stroke=\"#444444\"/>\n";
    for (const auto& [v, label] : ticks(y)) {
        const double py = y.p0 + (v - y.lo) / (y.hi - y.lo) * (y.p1 - y.p0);
        os << "<line x1=\"" << left << "\" x2=\"" << right << "\" y1=\"" << px(py) << "\" y2=\"" << px(py)
           << "\" stroke=\"#dddddd\"/>\n<text x=\"" << left - 6 << "\" y=\"" << px(py + 4) << "\" text-anchor=\"end\">"
           << label << "</text>\n";
    }
    if (x_ticks)
        for (const auto& [v, label] : ticks(x)) {
            const double pxv = x.p0 + (v - x.lo) / (x.hi - x.lo) * (x.p1 - x.p0);
            os << "<line x1=\"" << px(pxv) << "\" x2=\"" << px(pxv) << "\" y1=\"" << top << "\" y2=\"" << bottom
               << "\" stroke=\"#dddddd\"/>\n<text x=\"" << px(pxv) << "\" y=\"" << bottom + 18
               << "\" text-anchor=\"middle\">" << label << "</text>\n";
        }
    titles(os, p);
}

void titles(std::ostringstream& os, const Plot& p) {
    os << "<text x=\"" << (left + right) / 2 << "\" y=\"" << bottom + 44 << "\" text-anchor=\"middle\">"
       << xml_escape(p.x_title) << "</text>\n";
    const std::vector<std::string> y = wrap(p.y_title, y_title_chars);
    if (y.size() <= 1)
        os << "<text transform=\"translate(16," << (top + bottom) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
           << xml_escape(p.y_title) << "</text>\n";
    else // the first line further out, the next ones toward the frame
        os << "<text transform=\"translate(" << 16 - 7.5 * static_cast<double>(y.size() - 1) << ","
           << (top + bottom) / 2 << ") rotate(-90)\" text-anchor=\"middle\">" << tspans(y, 0, 15) << "</text>\n";
}

/** A marker of shape `shape % 5` (circle, square, triangle, diamond, triangle down) centred at (cx, cy): shapes
 *  as well as lightness tell series apart in a greyscale print. */
std::string marker(int shape, double cx, double cy, const std::string& color) {
    const double r = 4;
    std::ostringstream os;
    auto poly = [&](std::initializer_list<std::pair<double, double>> pts) {
        os << "<polygon class=\"marker\" fill=\"" << color << "\" points=\"";
        for (const auto& [dx, dy] : pts) os << px(cx + dx) << "," << px(cy + dy) << " ";
        os << "\"/>\n";
    };
    switch (shape % 5) {
    case 0:
        os << "<circle class=\"marker\" cx=\"" << px(cx) << "\" cy=\"" << px(cy) << "\" r=\"" << r << "\" fill=\""
           << color << "\"/>\n";
        break;
    case 1:
        poly({{-r, -r}, {r, -r}, {r, r}, {-r, r}});
        break;
    case 2:
        poly({{0, -1.2 * r}, {1.1 * r, r}, {-1.1 * r, r}});
        break;
    case 3:
        poly({{0, -1.3 * r}, {1.3 * r, 0}, {0, 1.3 * r}, {-1.3 * r, 0}});
        break;
    default:
        poly({{0, 1.2 * r}, {1.1 * r, -r}, {-1.1 * r, -r}});
    }
    return os.str();
}

/** Legend entries: a swatch (line with its dash, or a filled box) and the label. */
struct Legend {
    std::ostringstream os;
    double y = top + 8;
    void line(const std::string& label, const LineStyle& s, int shape = -1, bool join = true) {
        if (join)
            os << "<line x1=\"" << legend_x << "\" x2=\"" << legend_x + 30 << "\" y1=\"" << y << "\" y2=\"" << y
               << "\" stroke=\"" << s.color << "\" stroke-width=\"" << s.width << "\"" << dash_attr(s.dash) << "/>\n";
        if (shape >= 0) os << marker(shape, legend_x + 15, y, s.color);
        text(label);
    }
    void box(const std::string& label, const std::string& fill, double opacity) {
        os << "<rect x=\"" << legend_x << "\" y=\"" << y - 6 << "\" width=\"30\" height=\"12\" fill=\"" << fill
           << "\" fill-opacity=\"" << opacity << "\" stroke=\"#777777\" stroke-width=\"0.5\"/>\n";
        text(label);
    }
    void text(const std::string& label) {
        const std::vector<std::string> lines = wrap(label, legend_chars);
        os << "<text x=\"" << legend_x + 36 << "\" y=\"" << y + 4 << "\">"
           << (lines.size() <= 1 ? xml_escape(label) : tspans(lines, legend_x + 36, 14)) << "</text>\n";
        y += 20 + 14 * static_cast<double>(lines.empty() ? 0 : lines.size() - 1);
    }
};

std::string open_svg(const Plot& p) {
    std::ostringstream os;
    os << "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" << xml_escape(p.id) << "\" class=\"plot\" viewBox=\"0 0 "
       << width << " " << height << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\" "
       << "role=\"img\">\n<title>" << xml_escape(p.title) << "</title>\n";
    return os.str();
}

void skipped_notes(const Skipped& s, const std::string& what, std::vector<std::string>& notes) {
    if (s.nonpositive)
        notes.push_back(what + ": " + std::to_string(s.nonpositive) +
                        " value(s) equal to 0 or negative, not drawn on the log axis.");
    if (s.nonfinite)
        notes.push_back(what + ": " + std::to_string(s.nonfinite) +
                        " value(s) missing (no valid trajectory) or not finite, not drawn.");
}

std::string render_boxes(const Plot& p, std::vector<std::string>& notes) {
    Axis y;
    y.p0 = bottom;
    y.p1 = top;
    std::vector<double> all;
    for (const Box& b : p.boxes) all.insert(all.end(), b.q, b.q + 9);
    if (!fit_axis(y, all, p.log_y)) return {};
    Axis x; // unused for ticks
    std::ostringstream os;
    os << open_svg(p);
    frame(os, p, x, y, false);
    Skipped sk;
    const double slot = (right - left) / static_cast<double>(p.boxes.size());
    const LineStyle dark = series_style(0);
    for (std::size_t i = 0; i < p.boxes.size(); ++i) {
        const Box& b = p.boxes[i];
        const double cx = left + slot * (i + 0.5), hw = std::min(28.0, slot * 0.3);
        if (b.shaded)
            os << "<rect class=\"low-population\" x=\"" << px(left + slot * i) << "\" y=\"" << top << "\" width=\""
               << px(slot) << "\" height=\"" << bottom - top << "\" fill=\"" << shade_fill << "\"/>\n";
        for (double v : b.q) sk.count(y, v);
        auto Y = [&](int k) { return px(y.map(b.q[k])); };
        auto seg = [&](int k0, int k1, double w, const std::string& dash) {
            if (y.ok(b.q[k0]) && y.ok(b.q[k1]))
                os << "<line x1=\"" << px(cx) << "\" x2=\"" << px(cx) << "\" y1=\"" << Y(k0) << "\" y2=\"" << Y(k1)
                   << "\" stroke=\"" << dark.color << "\" stroke-width=\"" << w << "\"" << dash_attr(dash) << "/>\n";
        };
        seg(1, 2, 1, "3 2"); // p01–p05
        seg(6, 7, 1, "3 2"); // p95–p99
        seg(2, 3, 2.5, "");  // p05–p25
        seg(5, 6, 2.5, "");  // p75–p95
        if (y.ok(b.q[3]) && y.ok(b.q[5]))
            os << "<rect class=\"box\" x=\"" << px(cx - hw) << "\" y=\"" << Y(5) << "\" width=\"" << px(2 * hw)
               << "\" height=\"" << px(y.map(b.q[3]) - y.map(b.q[5])) << "\" fill=\"" << series_fill(0)
               << "\" stroke=\"" << dark.color << "\"/>\n";
        if (y.ok(b.q[4]))
            os << "<line class=\"box-median\" x1=\"" << px(cx - hw) << "\" x2=\"" << px(cx + hw) << "\" y1=\"" << Y(4)
               << "\" y2=\"" << Y(4) << "\" stroke=\"#000000\" stroke-width=\"3\"/>\n";
        for (int k : {0, 8})
            if (y.ok(b.q[k]))
                os << "<circle cx=\"" << px(cx) << "\" cy=\"" << Y(k)
                   << "\" r=\"3\" fill=\"none\" stroke=\"#000000\"/>\n";
        os << "<text x=\"" << px(cx) << "\" y=\"" << bottom + 16 << "\" text-anchor=\"middle\">" << xml_escape(b.label)
           << "</text>\n<text x=\"" << px(cx) << "\" y=\"" << bottom + 30
           << "\" text-anchor=\"middle\" font-size=\"10\">" << xml_escape(b.sublabel) << "</text>\n";
    }
    Legend lg;
    lg.box("25 % to 75 %", series_fill(0), 1);
    lg.line("median", {"#000000", "", 3});
    lg.line("5 % to 95 % (thick)", {dark.color, "", 2.5});
    lg.line("1 % to 99 % (dashed)", {dark.color, "3 2", 1});
    lg.os << "<circle cx=\"" << legend_x + 15 << "\" cy=\"" << lg.y
          << "\" r=\"3\" fill=\"none\" stroke=\"#000000\"/>\n";
    lg.text("min and max");
    if (std::any_of(p.boxes.begin(), p.boxes.end(), [](const Box& b) { return b.shaded; }))
        lg.box(p.shade_label, shade_fill, 1);
    os << lg.os.str() << "</svg>\n";
    skipped_notes(sk, "quantiles of the boxes", notes);
    return os.str();
}

/** The colour at u in [0, 1] on viridis (dark blue through green to yellow), linear between nine of its colours:
 *  sequential, and its lightness rises with u, so a greyscale print keeps the order. */
std::string scale_color(double u) {
    static const unsigned char anchor[9][3] = {{0x44, 0x01, 0x54}, {0x47, 0x2d, 0x7b}, {0x3b, 0x52, 0x8b},
                                               {0x2c, 0x72, 0x8e}, {0x21, 0x91, 0x8c}, {0x28, 0xae, 0x80},
                                               {0x5e, 0xc9, 0x62}, {0xad, 0xdc, 0x30}, {0xfd, 0xe7, 0x25}};
    const double w = std::clamp(u, 0.0, 1.0) * 8;
    const int k = std::min(7, static_cast<int>(w));
    const double f = w - k;
    int c[3];
    for (int i = 0; i < 3; ++i)
        c[i] = static_cast<int>(std::lround(anchor[k][i] + f * (anchor[k + 1][i] - anchor[k][i])));
    char b[8];
    std::snprintf(b, sizeof b, "#%02x%02x%02x", c[0], c[1], c[2]);
    return b;
}

/** Every `step`-th of `n` labels, so that labels `size` px wide (or tall) over `extent` px do not overlap. */
std::size_t label_step(std::size_t n, double size, double extent) {
    return std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(n * size / extent)));
}

std::string render_heat(const Plot& p, std::vector<std::string>& notes) {
    const HeatMap& hm = p.heat;
    const std::size_t nc = hm.cols.size(), nr = hm.rows.size();
    if (nc == 0 || nr == 0 || hm.z.size() != nc * nr) return {};
    Axis z;
    z.p0 = 0;
    z.p1 = 1;
    z.log = hm.log_z;
    double lo = INFINITY, hi = -INFINITY;
    Skipped sk;
    for (double v : hm.z) {
        sk.count(z, v);
        if (!z.ok(v)) continue;
        lo = std::min(lo, z.unit(v));
        hi = std::max(hi, z.unit(v));
    }
    if (!(lo <= hi)) return {};
    // NOTE: the colour scale spans the values exactly (not whole decades), so that every colour step shows data.
    auto at = [&](double v) { return hi > lo ? (z.unit(v) - lo) / (hi - lo) : 0.5; };
    auto value_at = [&](double u) { return z.log ? std::pow(10.0, lo + u * (hi - lo)) : lo + u * (hi - lo); };
    // NOTE: as many digits as it takes for the colour bar's five values to differ (exponents close to 3 differ in
    // their fifth digit), the same for the cells' values
    int digits = 3;
    for (int k = 0; k < 4 && hi > lo; ++k)
        while (digits < 10 && fmt(value_at(k / 4.0), digits) == fmt(value_at((k + 1) / 4.0), digits)) ++digits;
    std::ostringstream os;
    os << open_svg(p);
    const double cw = (right - left) / static_cast<double>(nc), ch = (bottom - top) / static_cast<double>(nr);
    // about 7 px per character at font-size 12
    const bool cell_text = cw >= 7.0 * (digits + 5) && ch >= 16; // room for "-1.23e-05"
    for (std::size_t r = 0; r < nr; ++r)
        for (std::size_t c = 0; c < nc; ++c) {
            const double v = hm.z[r * nc + c], x0 = left + cw * c, y0 = bottom - ch * (r + 1);
            const bool ok = z.ok(v);
            os << "<rect class=\"cell\" x=\"" << px(x0) << "\" y=\"" << px(y0) << "\" width=\"" << px(cw)
               << "\" height=\"" << px(ch) << "\" fill=\"" << (ok ? scale_color(at(v)) : "#ffffff")
               << "\" stroke=\"#ffffff\"/>\n";
            if (cell_text)
                os << "<text x=\"" << px(x0 + cw / 2) << "\" y=\"" << px(y0 + ch / 2 + 4)
                   << "\" text-anchor=\"middle\" fill=\"" << (ok && at(v) < 0.6 ? "#ffffff" : "#000000") << "\">"
                   << fmt(v, digits) << "</text>\n";
        }
    os << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << right - left << "\" height=\"" << bottom - top
       << "\" fill=\"none\" stroke=\"#444444\"/>\n";
    for (std::size_t c = 0; c < nc; c += label_step(nc, 48, right - left))
        os << "<text x=\"" << px(left + cw * (c + 0.5)) << "\" y=\"" << bottom + 18 << "\" text-anchor=\"middle\">"
           << xml_escape(hm.cols[c]) << "</text>\n";
    for (std::size_t r = 0; r < nr; r += label_step(nr, 16, bottom - top))
        os << "<text x=\"" << left - 6 << "\" y=\"" << px(bottom - ch * (r + 0.5) + 4) << "\" text-anchor=\"end\">"
           << xml_escape(hm.rows[r]) << "</text>\n";
    titles(os, p);
    // The colour bar: 40 steps from the lowest value (bottom) to the highest (top), five values beside it.
    const int steps = 40;
    const double bar_h = (bottom - top) / static_cast<double>(steps);
    for (int k = 0; k < steps; ++k)
        os << "<rect class=\"colour-bar\" x=\"" << legend_x << "\" y=\"" << px(bottom - bar_h * (k + 1))
           << "\" width=\"18\" height=\"" << px(bar_h + 0.3) << "\" fill=\"" << scale_color((k + 0.5) / steps)
           << "\"/>\n";
    for (int k = 0; k <= 4; ++k) {
        const double u = hi > lo ? k / 4.0 : 0.5;
        os << "<text x=\"" << legend_x + 24 << "\" y=\"" << px(bottom - u * (bottom - top) + 4) << "\">"
           << fmt(value_at(u), digits) << "</text>\n";
        if (!(hi > lo)) break;
    }
    os << "<text transform=\"translate(" << legend_x + 110 << "," << (top + bottom) / 2
       << ") rotate(-90)\" text-anchor=\"middle\">" << xml_escape(hm.z_title) << (z.log ? " (log colour scale)" : "")
       << "</text>\n</svg>\n";
    skipped_notes(sk, "cells", notes);
    return os.str();
}

} // namespace

LineStyle series_style(int i) {
    static const LineStyle styles[] = {{"#08306b", "", 2.2},
                                       {"#d94801", "8 4", 2.2},
                                       {"#41ab5d", "2 3", 2.4},
                                       {"#6a51a3", "10 3 2 3", 2.0},
                                       {"#737373", "4 2", 1.6}};
    return styles[i % 5];
}

std::string series_fill(int i) {
    static const char* fills[] = {"#9ecae1", "#fdae6b", "#c7e9c0", "#dadaeb", "#d9d9d9"};
    return fills[i % 5];
}

std::string xml_escape(const std::string& s) {
    std::string o;
    o.reserve(s.size());
    for (char c : s) switch (c) {
        case '&':
            o += "&amp;";
            break;
        case '<':
            o += "&lt;";
            break;
        case '>':
            o += "&gt;";
            break;
        case '"':
            o += "&quot;";
            break;
        case '\'':
            o += "&#39;";
            break;
        default:
            o += c;
        }
    return o;
}

std::string fmt(double x, int digits) {
    if (!std::isfinite(x)) return "\u2013";
    char b[48];
    std::snprintf(b, sizeof b, "%.*g", digits, x);
    return b;
}

std::string render_svg(const Plot& p, std::vector<std::string>& notes) {
    if (!p.boxes.empty()) return render_boxes(p, notes);
    if (!p.heat.z.empty()) return render_heat(p, notes);
    Axis x, y;
    x.p0 = left;
    x.p1 = right;
    y.p0 = bottom;
    y.p1 = top;
    std::vector<double> xs, ys;
    for (const Band& b : p.bands) {
        xs.insert(xs.end(), b.x.begin(), b.x.end());
        ys.insert(ys.end(), b.lo.begin(), b.lo.end());
        ys.insert(ys.end(), b.hi.begin(), b.hi.end());
    }
    for (const Line& l : p.lines) {
        xs.insert(xs.end(), l.x.begin(), l.x.end());
        ys.insert(ys.end(), l.y.begin(), l.y.end());
        ys.insert(ys.end(), l.lo.begin(), l.lo.end());
        ys.insert(ys.end(), l.hi.begin(), l.hi.end());
    }
    bool any_bar = false;
    for (const Bars& b : p.bars) {
        xs.insert(xs.end(), b.x0.begin(), b.x0.end());
        xs.insert(xs.end(), b.x1.begin(), b.x1.end());
        ys.insert(ys.end(), b.y.begin(), b.y.end());
        for (double v : b.y) any_bar = any_bar || (std::isfinite(v) && v != 0);
    }
    if (!p.bars.empty() && !any_bar && p.lines.empty()) return {};
    if (!fit_axis(x, xs, p.log_x) || !fit_axis(y, ys, p.log_y, !p.bars.empty() || p.y_from_zero)) return {};

    std::ostringstream os;
    os << open_svg(p);
    frame(os, p, x, y, true);
    Legend lg;
    // NOTE: the plot area clips what reaches outside it (a fit line's ends).
    os << "<clipPath id=\"" << xml_escape(p.id) << "-clip\"><rect x=\"" << left << "\" y=\"" << top << "\" width=\""
       << right - left << "\" height=\"" << bottom - top << "\"/></clipPath>\n<g clip-path=\"url(#" << xml_escape(p.id)
       << "-clip)\">\n";
    for (const Span& sp : p.shades) {
        if (!x.ok(sp.x0) || !x.ok(sp.x1)) continue;
        // NOTE: at least 3 px wide, so that a single flagged output time stays visible
        const double x0 = x.map(sp.x0), x1 = std::max(x.map(sp.x1), x0 + 3.0);
        os << "<rect class=\"low-population\" x=\"" << px(x0) << "\" y=\"" << top << "\" width=\"" << px(x1 - x0)
           << "\" height=\"" << bottom - top << "\" fill=\"" << shade_fill << "\"/>\n";
    }
    for (const Bars& b : p.bars) {
        for (std::size_t i = 0; i < b.y.size(); ++i) {
            if (!(std::isfinite(b.y[i]) && b.y[i] > 0) || !x.ok(b.x0[i]) || !x.ok(b.x1[i])) continue;
            const double x0 = x.map(b.x0[i]), x1 = x.map(b.x1[i]), y1 = y.map(b.y[i]), y0 = y.map(0.0);
            os << "<rect class=\"bar\" x=\"" << px(x0) << "\" y=\"" << px(y1) << "\" width=\"" << px(x1 - x0)
               << "\" height=\"" << px(y0 - y1) << "\" fill=\"" << series_fill(0) << "\" stroke=\""
               << series_style(0).color << "\" stroke-width=\"0.8\"/>\n";
        }
    }
    for (const Band& b : p.bands) {
        std::vector<std::pair<double, double>> up, down;
        long gaps = 0;
        for (std::size_t i = 0; i < b.x.size(); ++i) {
            if (!x.ok(b.x[i]) || !y.ok(b.lo[i]) || !y.ok(b.hi[i])) {
                ++gaps;
                continue;
            }
            up.emplace_back(x.map(b.x[i]), y.map(b.hi[i]));
            down.emplace_back(x.map(b.x[i]), y.map(b.lo[i]));
        }
        if (gaps)
            notes.push_back(b.label + " band: not drawn at " + std::to_string(gaps) + " of " +
                            std::to_string(b.x.size()) + " output times, where a bound is " +
                            (y.log ? "0 (which a log axis cannot show) or " : "") + "missing.");
        if (up.empty()) continue;
        os << "<polygon class=\"" << xml_escape(b.cls) << "\" fill=\"" << b.fill << "\" fill-opacity=\"" << b.opacity
           << "\" stroke=\"none\" points=\"";
        for (const auto& [a, c] : up) os << px(a) << "," << px(c) << " ";
        for (auto it = down.rbegin(); it != down.rend(); ++it) os << px(it->first) << "," << px(it->second) << " ";
        os << "\"/>\n";
    }
    // NOTE: markers and error bars are drawn after the clip group: a point at the axis' end keeps its whole marker.
    std::ostringstream marks;
    for (const Line& l : p.lines) {
        std::ostringstream pts;
        int n = 0;
        long no_bar = 0;
        Skipped sk;
        for (std::size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
            sk.count(y, l.y[i]);
            if (!x.ok(l.x[i]) || !y.ok(l.y[i])) continue;
            const double cx = x.map(l.x[i]), cy = y.map(l.y[i]);
            pts << (n++ ? " " : "") << px(cx) << "," << px(cy);
            if (i < l.lo.size() && i < l.hi.size()) {
                if (y.ok(l.lo[i]) && y.ok(l.hi[i])) {
                    const std::string y0 = px(y.map(l.lo[i])), y1 = px(y.map(l.hi[i]));
                    marks << "<path class=\"error-bar\" fill=\"none\" stroke=\"" << l.style.color
                          << "\" stroke-width=\"1.2\" d=\"M" << px(cx) << "," << y0 << "V" << y1 << "M" << px(cx - 4)
                          << "," << y0 << "H" << px(cx + 4) << "M" << px(cx - 4) << "," << y1 << "H" << px(cx + 4)
                          << "\"/>\n";
                } else {
                    ++no_bar;
                }
            }
            if (l.marker >= 0) marks << marker(l.marker, cx, cy, l.style.color);
        }
        skipped_notes(sk, l.label, notes);
        if (no_bar)
            notes.push_back(l.label + ": " + std::to_string(no_bar) + " error bar(s) not drawn, where a bound is " +
                            (y.log ? "0 or below (which a log axis cannot show) or " : "") + "missing.");
        if (n == 0 || !l.join) continue;
        os << "<polyline class=\"" << xml_escape(l.cls) << "\" fill=\"none\" stroke=\"" << l.style.color
           << "\" stroke-width=\"" << l.style.width << "\"" << dash_attr(l.style.dash)
           << " stroke-linejoin=\"round\" points=\"" << pts.str() << "\"/>\n";
        if (n == 1 && l.marker < 0)
            os << "<circle cx=\"" << pts.str().substr(0, pts.str().find(',')) << "\" cy=\""
               << pts.str().substr(pts.str().find(',') + 1) << "\" r=\"2.5\" fill=\"" << l.style.color << "\"/>\n";
    }
    os << "</g>\n" << marks.str();
    if (!p.shades.empty()) lg.box(p.shade_label, shade_fill, 1);
    for (const Bars& b : p.bars)
        if (!b.label.empty()) lg.box(b.label, series_fill(0), 1);
    for (const Band& b : p.bands)
        if (!b.label.empty()) lg.box(b.label, b.fill, b.opacity);
    for (const Line& l : p.lines)
        if (!l.label.empty()) lg.line(l.label, l.style, l.marker, l.join);
    os << lg.os.str() << "</svg>\n";
    return os.str();
}

} // namespace nhvk::report
