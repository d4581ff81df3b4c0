#pragma once
// Charts as inline SVG for the HTML reports: one self-contained element each (no script, nothing
// fetched), with axes, ticks, a legend and an optional threshold line. Values that are not
// finite are left out (a gap), never drawn as zero. Each bar and point carries a <title>,
// "SERIES, X_LABEL CATEGORY: VALUE", and each line one naming its series, so that what is drawn
// can be checked against the figures it comes from.

#include <optional>
#include <string>
#include <vector>

namespace trainio::report {

struct ChartSeries {
  std::string name;
  std::vector<double> values;  // one per category; NaN for none
  int colour = -1;             // index into the palette; -1: the series' position
  bool dashed = false;         // lines: drawn dashed (e.g. a second figure of the same group)
};

struct Chart {
  enum class Kind { lines, bars, stacked_bars };
  Kind kind = Kind::lines;
  std::string title, x_label, y_label;
  std::vector<std::string> categories;  // the x axis, in order
  std::vector<ChartSeries> series;
  std::optional<double> threshold;  // a horizontal line, e.g. the AU target
  std::string threshold_label;
  bool log_y = false;  // for latencies spanning orders of magnitude (values must be > 0)
  std::optional<double> y_max;  // the axis ends here when no value is larger (100 for percentages)
};

std::string svg_chart(const Chart& chart);

}  // namespace trainio::report
