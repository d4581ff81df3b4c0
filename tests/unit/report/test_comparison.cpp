// `trainio compare`'s judgement (report/comparison.hpp) and the figures it reads from a run
// (report/run_results.hpp): medians, the relative change, the threshold, the direction of
// better, the U test's significance, and refusals of unknown or missing figures.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "report/comparison.hpp"
#include "util/error.hpp"

using namespace trainio;
using report::FigureComparison;
using Verdict = report::FigureComparison::Verdict;

namespace {

// A run whose summary has DLIO's AU mean and a save duration.
report::RunResult run(double au, double save_seconds = 10) {
  report::RunResult r;
  r.start = "2026-01-01T00:00:00.000000";
  r.end = "2026-01-01T00:01:00.500000";
  r.summary = {{"metric", {{"train_au_mean_percentage", au}, {"save_checkpoint_duration_mean_seconds", save_seconds}}}};
  return r;
}

std::vector<report::RunResult> runs(const std::vector<double>& aus) {
  std::vector<report::RunResult> out;
  for (const double a : aus) out.push_back(run(a));
  return out;
}

// A copy: callers hold it past the Comparison, a temporary of their expression.
FigureComparison only(const report::Comparison& c) {
  REQUIRE(c.figures.size() == 1);
  return c.figures[0];
}

report::Comparison au(const std::vector<double>& baseline, const std::vector<double>& candidate, double threshold = 0.05) {
  report::Thresholds t;
  t.all = threshold;
  return report::compare_runs(runs(baseline), runs(candidate), {"train_au_mean_percentage"}, t, 0.05);
}

}  // namespace

TEST_CASE("one run a side: the threshold alone decides, in the figure's better direction") {
  const auto& down = only(au({90}, {80}));
  CHECK(down.baseline_median == 90);
  CHECK(down.candidate_median == 80);
  CHECK(down.change == Approx(-10.0 / 90));
  CHECK(down.verdict == Verdict::regressed);
  CHECK_FALSE(down.test);
  CHECK(only(au({80}, {90})).verdict == Verdict::improved);
  CHECK(only(au({90}, {87})).verdict == Verdict::same);  // -3.3%: within 5%
  CHECK(only(au({90}, {87}, 0.02)).verdict == Verdict::regressed);
  CHECK(au({90}, {80}).regression());
  CHECK_FALSE(au({80}, {90}).regression());
  // A smaller duration is better.
  const auto c = report::compare_runs({run(90, 10)}, {run(90, 12)}, {"save_checkpoint_duration_mean_seconds"},
                                      report::Thresholds{}, 0.05);
  CHECK_FALSE(only(c).higher_is_better);
  CHECK(only(c).verdict == Verdict::regressed);
}

TEST_CASE("medians of several runs, and a U test that must find the change significant") {
  // 3 against 3 cannot reach p < 0.05 (the smallest two-sided p is 0.1): not significant.
  const auto three = au({90, 91, 92}, {80, 81, 82});
  const auto& f = only(three);
  CHECK(f.baseline_median == 91);
  CHECK(f.candidate_median == 81);
  REQUIRE(f.test);
  CHECK(f.test->p == Approx(0.1));
  CHECK(f.verdict == Verdict::not_significant);
  CHECK_FALSE(three.regression());
  bool said = false;
  for (const auto& n : three.notes) said = said || n.find("cannot reach p < 0.05") != std::string::npos;
  CHECK(said);
  // 4 against 4, fully apart: p = 2/70.
  const auto& four = only(au({90, 91, 92, 93}, {80, 81, 82, 83}));
  CHECK(four.test->p == Approx(2.0 / 70));
  CHECK(four.verdict == Verdict::regressed);
  // Fully mixed: no change beyond the threshold, same.
  CHECK(only(au({90, 80, 90, 80}, {80, 90, 80, 90})).verdict == Verdict::same);
}

TEST_CASE("from a zero baseline any change is beyond the threshold and has no percentage") {
  const auto& f = only(au({0}, {1}));
  CHECK_FALSE(f.relative);
  CHECK(f.change == 0);
  CHECK(f.verdict == Verdict::improved);
  CHECK(only(au({0}, {0})).verdict == Verdict::same);
  // A negative baseline keeps the direction: -10 to -5 is up.
  const auto& neg = only(au({-10}, {-5}));
  CHECK(neg.change == Approx(0.5));
  CHECK(neg.verdict == Verdict::improved);
}

TEST_CASE("figures compare is told about must exist on every run, and be known or a path") {
  CHECK_THROWS_AS(report::compare_runs(runs({90}), runs({80}), {"train_au_mean_percentag"}, report::Thresholds{}, 0.05),
                  Error);
  try {
    report::compare_runs(runs({90}), runs({80}), {"train_au_mean_percentag"}, report::Thresholds{}, 0.05);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("did you mean 'train_au_mean_percentage'") != std::string::npos);
  }
  report::RunResult bare;
  bare.summary = {{"metric", nlohmann::json::object()}};
  CHECK_THROWS_AS(report::compare_runs({run(90), bare}, runs({80}), {"train_au_mean_percentage"}, report::Thresholds{}, 0.05),
                  Error);
  // A dotted path into summary.json is a figure of its own; its direction is guessed from its name.
  const auto c = report::compare_runs(runs({90}), runs({80}), {"metric.train_au_mean_percentage"}, report::Thresholds{}, 0.05);
  CHECK(only(c).verdict == Verdict::regressed);
}

TEST_CASE("unnamed figures: every stable figure both sides have, and a note for those only some runs have") {
  report::RunResult partial = run(85);
  partial.summary["metric"]["train_throughput_mean_samples_per_second"] = 100.0;
  const auto c = report::compare_runs({run(90), partial}, runs({80}), {}, report::Thresholds{}, 0.05);
  std::vector<std::string> names;
  for (const auto& f : c.figures) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"train_au_mean_percentage", "save_checkpoint_duration_mean_seconds"});
  bool noted = false;
  for (const auto& n : c.notes)
    noted = noted || n.find("train_throughput_mean_samples_per_second is missing from 1 of 2 baseline") != std::string::npos;
  CHECK(noted);
  CHECK(c.candidate_seconds == Approx(60.5));
  CHECK_THROWS_AS(report::compare_runs({report::RunResult{}}, {report::RunResult{}}, {}, report::Thresholds{}, 0.05), Error);
}

TEST_CASE("per-figure thresholds override the one for all") {
  report::Thresholds t;
  t.all = 0.5;
  t.per_figure["train_au_mean_percentage"] = 0.01;
  CHECK(t.of("train_au_mean_percentage") == 0.01);
  CHECK(t.of("other") == 0.5);
  const auto c = report::compare_runs(runs({90}), runs({88}), {"train_au_mean_percentage"}, t, 0.05);
  CHECK(only(c).verdict == Verdict::regressed);
}

TEST_CASE("a run's figures by name or by dotted path; absent or of another type is absent") {
  nlohmann::json s = {{"metric", {{"train_au_percentage", {80.5, 90.5}}, {"name", "x"}}},
                      {"trainio", {{"epochs", nlohmann::json::array({{{"k", 1}}})}}}};
  CHECK(*report::number_at(s, "metric.train_au_percentage.1") == 90.5);
  CHECK_FALSE(report::number_at(s, "metric.train_au_percentage.2"));   // past the end
  CHECK_FALSE(report::number_at(s, "metric.train_au_percentage.-1"));
  CHECK_FALSE(report::number_at(s, "metric.train_au_percentage.x"));
  CHECK_FALSE(report::number_at(s, "metric.name"));                   // text, not a number
  CHECK_FALSE(report::number_at(s, "metric.missing"));
  CHECK_FALSE(report::number_at(s, "metric..name"));
  CHECK(*report::number_at(s, "trainio.epochs.0.k") == 1);
  CHECK(report::node_at(s, "metric")->is_object());
  report::RunResult r;
  r.summary = {{"metric", {{"train_au_mean_percentage", 93.0}}}};
  CHECK(*report::figure_of(r, "train_au_mean_percentage") == 93.0);
  CHECK(*report::figure_of(r, "metric.train_au_mean_percentage") == 93.0);
  CHECK_FALSE(report::figure_of(r, "train_throughput_mean_samples_per_second"));
}

TEST_CASE("which way is better: known figures say, other names are guessed") {
  CHECK(report::higher_is_better("train_au_mean_percentage"));
  CHECK_FALSE(report::higher_is_better("save_checkpoint_duration_mean_seconds"));
  CHECK_FALSE(report::higher_is_better("metric.train_io_wait_total"));
  CHECK_FALSE(report::higher_is_better("trainio.epochs.0.train.sample_read_seconds.p99"));
  CHECK_FALSE(report::higher_is_better("x.latency_mean"));
  CHECK(report::higher_is_better("metric.train_throughput_mean_samples_per_second"));
  CHECK(report::find_figure("train_au_mean_percentage") != nullptr);
  CHECK(report::find_figure("metric.train_au_mean_percentage") == nullptr);
}
