// SPDX-License-Identifier: MIT
/** @file
 *  @brief Small inline-SVG plots for `report.html`: lines (with markers and error bars), quantile bands, bars, box
 *         plots on linear or log axes, and heat maps over a grid of categories.
 *
 *  Every plot is a self-contained `<svg>` element (no scripts, no external fonts). Series are told apart by
 *  lightness and dash pattern, not by hue alone, so a greyscale print keeps them apart. Values a log axis cannot
 *  show (zero, negative) and non-finite values are skipped and counted: the plot's notes say how many.
 */
#pragma once

#include <string>
#include <vector>

namespace nhvk::report {

/** @brief How a line is drawn (and its legend swatch). */
struct LineStyle {
    std::string color = "#08519c";
    std::string dash; ///< SVG stroke-dasharray; empty: solid
    double width = 2.0;
};

/** @brief Five distinct styles (dark solid, mid dashed, light dotted, …) for the i-th series of a plot. */
LineStyle series_style(int i);
/** @brief The band fill that goes with `series_style(i)` (lighter). */
std::string series_fill(int i);

struct Line {
    std::string label; ///< legend text (empty: no legend entry)
    std::string cls;   ///< SVG class of the polyline (e.g. "median"), for tests and styling
    std::vector<double> x, y;
    LineStyle style;
    std::vector<double> lo{}, hi{}; ///< an error bar from lo[i] to hi[i] at each point (empty: none)
    int marker = -1;                ///< a marker at each point, shape `marker % 5` (circle, square, …); -1: none
    bool join = true;               ///< the polyline through the points (false: markers only, a scatter)
};

/** @brief A filled band between `lo` and `hi` (e.g. the 5 %–95 % quantiles). */
struct Band {
    std::string label, cls;
    std::vector<double> x, lo, hi;
    std::string fill = "#c6dbef";
    double opacity = 1.0;
};

/** @brief Bars from `x0[i]` to `x1[i]`, height `y[i]` from 0 (a histogram over time). */
struct Bars {
    std::string label;
    std::vector<double> x0, x1, y;
};

/** @brief One box of a box plot from quantiles (min, p01, p05, p25, p50, p75, p95, p99, max). */
struct Box {
    std::string label, sublabel;
    double q[9];
    bool shaded = false; ///< its slot is shaded as the plot's `shade_label` says
};

/** @brief An x interval shaded behind everything else (output times whose population is low). */
struct Span {
    double x0, x1;
};

/** @brief A heat map over a grid of categories: one cell per (column, row), coloured on a sequential scale. */
struct HeatMap {
    std::vector<std::string> cols, rows; ///< labels of the columns (left to right) and rows (bottom to top)
    std::vector<double> z;               ///< rows.size() × cols.size(), row by row from the bottom; NaN: no value
    bool log_z = false;                  ///< colours by log10 z (values <= 0 then have none)
    std::string z_title;                 ///< the colour bar's title
};

struct Plot {
    std::string id; ///< the svg element's id
    std::string title, x_title, y_title;
    bool log_x = true, log_y = true;
    std::vector<Band> bands;
    std::vector<Line> lines;
    std::vector<Bars> bars;
    std::vector<Box> boxes;   ///< when not empty: a box plot over categories (x ignored)
    std::vector<Span> shades; ///< x intervals shaded grey (class "low-population"), with one legend entry
    std::string shade_label;  ///< the legend text of the shades and shaded boxes
    bool y_from_zero = false; ///< a linear y axis reaches down (or up) to 0
    HeatMap heat;             ///< when heat.z is not empty: a heat map (x_title, y_title name the categories)
};

/** @brief The plot as an `<svg>` element, or an empty string when nothing in it can be drawn. `notes` receives
 *         sentences about what was skipped (log axes: values <= 0; non-finite values). */
std::string render_svg(const Plot& p, std::vector<std::string>& notes);

/** @brief `s` with `& < > " '` escaped for XML text and attribute values. */
std::string xml_escape(const std::string& s);

/** @brief A number for people: `digits` significant digits, "–" for NaN/inf. */
std::string fmt(double x, int digits = 4);

} // namespace nhvk::report
