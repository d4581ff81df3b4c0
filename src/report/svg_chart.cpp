#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/markup.hpp"

namespace trainio::report {

namespace {

constexpr double kWidth = 640, kHeight = 300;
constexpr double kLeft = 70, kRight = 20, kTop = 34, kBottom = 62;
constexpr double kLegendRow = 16;
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"};

const char* colour_of(const ChartSeries& s, std::size_t position) {
  const std::size_t i = s.colour >= 0 ? static_cast<std::size_t>(s.colour) : position;
  return kColors[i % std::size(kColors)];
}

std::string tick_text(double v) {
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-2)) return fmt::format("{:.2g}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

}  // namespace

std::string svg_chart(const Chart& c) {
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const std::size_t n = c.categories.size();
  // The value range: from 0 (or the smallest power of ten, on a log axis) to the largest value,
  // stacked sums, or the threshold.
  double top = c.threshold.value_or(0), bottom_log = INFINITY;
  for (std::size_t i = 0; i < n; ++i) {
    double stack = 0;
    for (const auto& s : c.series) {
      if (i >= s.values.size() || !std::isfinite(s.values[i])) continue;
      const double v = s.values[i];
      stack += v;
      top = std::max(top, c.kind == Chart::Kind::stacked_bars ? stack : v);
      if (v > 0) bottom_log = std::min(bottom_log, v);
    }
  }
  const bool log = c.log_y && std::isfinite(bottom_log);
  // A linear axis in round steps (1, 2 or 5 times a power of ten), about five of them.
  double lo = 0, step = 1;
  if (top > 0) {
    const double raw = top * 1.05 / 5, magnitude = std::pow(10, std::floor(std::log10(raw)));
    const double f = raw / magnitude;
    step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
  }
  double hi = top > 0 ? std::ceil(top * 1.05 / step) * step : 1;
  if (c.y_max && top <= *c.y_max) {
    hi = *c.y_max;
    step = hi / 5;
  }
  if (log) {
    lo = std::pow(10, std::floor(std::log10(bottom_log)));
    hi = std::pow(10, std::ceil(std::log10(std::max(top, lo * 10))));
  }
  const auto y_of = [&](double v) {
    const double f = log ? (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return kTop + plot_h * (1 - f);
  };
  const double slot = n ? plot_w / static_cast<double>(n) : plot_w;
  const auto x_of = [&](std::size_t i) { return kLeft + slot * (static_cast<double>(i) + 0.5); };

  // The legend's entries, left to right, wrapping onto more rows (the chart grows to hold them).
  std::vector<std::pair<double, double>> legend;
  double lx = kLeft, ly = kHeight - 5;
  for (const auto& series : c.series) {
    const double w = 30 + 6.2 * static_cast<double>(series.name.size());
    if (lx > kLeft && lx + w > kWidth - kRight) {
      lx = kLeft;
      ly += kLegendRow;
    }
    legend.emplace_back(lx, ly);
    lx += w;
  }
  const double height = ly + 5;
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" aria-label="{2}">)",
      kWidth, height, markup_escape(c.title));
  svg += fmt::format(R"(<text x="{}" y="18" font-size="14" font-weight="bold">{}</text>)", kLeft, markup_escape(c.title));
  // Axes and ticks.
  svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#333"/><line x1="{0}" y1="{2}" x2="{3}" y2="{2}" stroke="#333"/>)",
                     kLeft, kTop, kTop + plot_h, kLeft + plot_w);
  std::vector<double> ticks;
  if (log) {
    for (double t = lo; t <= hi * 1.0001; t *= 10) ticks.push_back(t);
  } else {
    for (double t = lo; t <= hi + step / 2; t += step) ticks.push_back(t);
  }
  for (const double t : ticks) {
    const double y = y_of(t);
    svg += fmt::format(R"(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#ddd"/>)", kLeft, y, kLeft + plot_w, y);
    svg += fmt::format(R"(<text x="{}" y="{:.1f}" font-size="11" text-anchor="end">{}</text>)", kLeft - 6, y + 4, tick_text(t));
  }
  const std::size_t label_every = std::max<std::size_t>(1, n / 12);
  for (std::size_t i = 0; i < n; i += label_every)
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="11" text-anchor="middle">{}</text>)", x_of(i),
                       kTop + plot_h + 16, markup_escape(c.categories[i]));
  svg += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="12" text-anchor="middle">{}</text>)", kLeft + plot_w / 2,
                     kTop + plot_h + 34, markup_escape(c.x_label));
  svg += fmt::format(R"svg(<text x="14" y="{:.1f}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {:.1f})">{}</text>)svg",
                     kTop + plot_h / 2, kTop + plot_h / 2, markup_escape(c.y_label));
  // The data.
  const std::size_t m = c.series.size();
  std::vector<double> stack(n, 0);
  for (std::size_t s = 0; s < m; ++s) {
    const auto& series = c.series[s];
    const char* color = colour_of(series, s);
    const std::string dash = series.dashed ? R"( stroke-dasharray="5 3")" : "";
    std::string points;
    for (std::size_t i = 0; i < n && i < series.values.size(); ++i) {
      const double v = series.values[i];
      if (!std::isfinite(v)) continue;
      const std::string title = markup_escape(fmt::format("{}, {} {}: {:.5g}", series.name, c.x_label, c.categories[i], v));
      if (c.kind == Chart::Kind::lines) {
        points += fmt::format("{:.1f},{:.1f} ", x_of(i), y_of(v));
        svg += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{}</title></circle>)", x_of(i), y_of(v),
                           color, title);
      } else {
        const bool stacked = c.kind == Chart::Kind::stacked_bars;
        const double w = stacked ? slot * 0.6 : slot * 0.8 / static_cast<double>(m);
        const double x = stacked ? x_of(i) - w / 2 : x_of(i) - slot * 0.4 + w * static_cast<double>(s);
        const double base = stacked ? stack[i] : lo;
        const double y0 = y_of(base), y1 = y_of(base + (log ? v - base : v));
        svg += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{}</title></rect>)", x,
                           std::min(y0, y1), w, std::fabs(y0 - y1), color, title);
        if (stacked) stack[i] += v;
      }
    }
    if (c.kind == Chart::Kind::lines && !points.empty())
      svg += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{}><title>{}</title></polyline>)", points,
                         color, dash, markup_escape(series.name));
    // Legend, under the axis title: a line sample for lines, a square for bars.
    const auto [key_x, key_y] = legend[s];
    svg += c.kind == Chart::Kind::lines
               ? fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2"{}/>)", key_x,
                             key_y - 4, key_x + 16, key_y - 4, color, dash)
               : fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="10" height="10" fill="{}"/>)", key_x, key_y - 9, color);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11">{}</text>)", key_x + 20, key_y, markup_escape(series.name));
  }
  if (c.threshold) {
    const double y = y_of(*c.threshold);
    svg += fmt::format(R"(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/>)", kLeft, y,
                       kLeft + plot_w, y);
    svg += fmt::format(R"(<text x="{}" y="{:.1f}" font-size="11" fill="#d62728" text-anchor="end">{}</text>)", kLeft + plot_w,
                       y - 4, markup_escape(c.threshold_label));
  }
  svg += "</svg>";
  return svg;
}

}  // namespace trainio::report
