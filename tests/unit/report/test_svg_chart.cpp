// Inline SVG charts (report/svg_chart.hpp): every drawn value carries a title that states it,
// values that are not finite leave a gap, text is escaped, and the axes are round.
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <string>

#include "report/svg_chart.hpp"
#include "unit/text.hpp"

using namespace trainio::report;
using trainio::test::contains;

namespace {

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The tick labels of the y axis, bottom to top.
std::vector<std::string> ticks(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex tick(R"re(<text x="64" y="[0-9.]+" font-size="11" text-anchor="end">([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

Chart au_chart() {
  Chart c;
  c.title = "AU per epoch";
  c.x_label = "epoch";
  c.y_label = "AU (%)";
  c.categories = {"1", "2", "3"};
  c.series = {{"train", {91.5, NAN, 88.25}}};
  return c;
}

}  // namespace

TEST_CASE("each point states its value; a value that is not finite is a gap, not a zero") {
  const std::string svg = svg_chart(au_chart());
  CHECK(svg.rfind("<svg ", 0) == 0);
  CHECK(svg.size() >= 6);
  CHECK(svg.substr(svg.size() - 6) == "</svg>");
  CHECK(contains(svg, "<title>train, epoch 1: 91.5</title>"));
  CHECK(contains(svg, "<title>train, epoch 3: 88.25</title>"));
  CHECK_FALSE(contains(svg, "epoch 2:"));
  CHECK(count(svg, "<circle") == 2);
  CHECK_FALSE(contains(svg, "nan"));
  CHECK_FALSE(contains(svg, "inf"));
}

TEST_CASE("text from the run is escaped") {
  Chart c = au_chart();
  c.title = "a <b> & \"c\"";
  c.series[0].name = "<script>";
  c.categories[0] = "x&y";
  const std::string svg = svg_chart(c);
  CHECK_FALSE(contains(svg, "<script>"));
  CHECK_FALSE(contains(svg, "<b>"));
  CHECK(contains(svg, "&lt;script&gt;"));
  CHECK(contains(svg, "x&amp;y"));
}

TEST_CASE("a linear axis in round steps from zero; a percentage axis ends at its maximum") {
  Chart c = au_chart();
  c.series[0].values = {7, 3, 9.5};
  CHECK(ticks(svg_chart(c)) == std::vector<std::string>{"0", "2", "4", "6", "8", "10"});
  c.y_max = 100;
  CHECK(ticks(svg_chart(c)) == std::vector<std::string>{"0", "20", "40", "60", "80", "100"});
  c.series[0].values = {130, 3, 9.5};  // past the maximum: the axis grows
  CHECK(ticks(svg_chart(c)).back() == "150");
}

TEST_CASE("a threshold line is drawn, labelled, and within the axis") {
  Chart c = au_chart();
  c.series[0].values = {50, 60, 70};
  c.threshold = 90;
  c.threshold_label = "AU target 90%";
  const std::string svg = svg_chart(c);
  CHECK(contains(svg, ">AU target 90%</text>"));
  CHECK(contains(svg, R"(stroke="#d62728" stroke-width="2" stroke-dasharray="6 4")"));
  CHECK(ticks(svg).back() == "100");
}

TEST_CASE("a log axis spans powers of ten; zero and missing values draw nothing impossible") {
  Chart c;
  c.kind = Chart::Kind::lines;
  c.log_y = true;
  c.x_label = "epoch";
  c.categories = {"1", "2", "3"};
  c.series = {{"p99", {2e-5, 0, 3e-3}}};
  const std::string svg = svg_chart(c);
  CHECK(ticks(svg) == std::vector<std::string>{"1e-05", "0.0001", "0.001", "0.01"});
  CHECK_FALSE(contains(svg, "nan"));
  CHECK_FALSE(contains(svg, "inf"));
  // Nothing positive: a linear axis instead.
  c.series[0].values = {0, 0, NAN};
  const std::string flat = svg_chart(c);
  CHECK(ticks(flat) == std::vector<std::string>{"0", "1"});
  CHECK_FALSE(contains(flat, "nan"));
}

TEST_CASE("bars and stacked bars: one rectangle per finite value, the stack's total sets the axis") {
  Chart c;
  c.kind = Chart::Kind::stacked_bars;
  c.x_label = "epoch";
  c.categories = {"1", "2"};
  c.series = {{"read", {3, 4}}, {"compute", {5, NAN}}};
  const std::string svg = svg_chart(c);
  CHECK(count(svg, "<rect x=") == 3 + 2);  // three bars and two legend keys
  CHECK(contains(svg, "<title>compute, epoch 1: 5</title>"));
  CHECK(ticks(svg).back() == "10");         // 3 + 5 = 8, in steps of 2
  c.kind = Chart::Kind::bars;
  CHECK(ticks(svg_chart(c)).back() == "6");  // the largest single value, 5
}

TEST_CASE("a long legend wraps onto more rows and the chart grows to hold it") {
  Chart c = au_chart();
  const std::string one = svg_chart(c);
  for (int i = 0; i < 8; ++i) c.series.push_back({"a rather long series name " + std::to_string(i), {1, 2, 3}});
  const std::string many = svg_chart(c);
  const std::regex height(R"re(height="([0-9.]+)")re");
  std::smatch a, b;
  REQUIRE(std::regex_search(one, a, height));
  REQUIRE(std::regex_search(many, b, height));
  CHECK(std::stod(b[1]) > std::stod(a[1]));
}
