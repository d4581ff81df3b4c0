#include "report/dlio_figures.hpp"
#include "util/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace trainio::report {

namespace {


// Why a phase's AU has no value.
std::string au_cause(const metrics::PhaseSummary& p, std::uint64_t epoch, const config::Workload& w) {
  const auto excluded = w.output.exclude_start_steps + w.output.exclude_end_steps;
  if (p.degenerate)
    return fmt::format("epoch {}: a block of its {} steps per rank had no more steps than output.metric."
                       "exclude_start_steps + exclude_end_steps = {}, so no step was left for DLIO's AU",
                       epoch, p.steps, excluded);
  return fmt::format("epoch {}: some rank's time window T (the block's time without its excluded steps) was not positive",
                     epoch);
}

// Why a phase's DLIO throughput has no value.
std::string throughput_cause(const metrics::PhaseSummary& p, std::uint64_t epoch, bool train, const config::Workload& w) {
  if (train && p.steps < metrics::kMinDlioTrainSteps)
    return fmt::format("only {} steps per rank in epoch {}: DLIO's throughput (steps - 2) x batch / T needs 3 or more", p.steps,
                       epoch);
  if (train && w.workflow.checkpoint)
    return fmt::format("epoch {}: checkpoints cut its {} steps per rank into blocks of 2 steps or fewer (or blocks "
                       "with no step left after the exclusions), and DLIO's (steps - 2) x batch / T needs 3 or more per block",
                       epoch, p.steps);
  if (p.degenerate) return au_cause(p, epoch, w);
  return fmt::format("epoch {}: some rank's time window T was not positive", epoch);
}

struct Spread {
  std::optional<double> mean, stdev;
  std::vector<std::size_t> missing;  // indexes without a value
};

// Mean and population stdev (numpy) over the values that exist.
Spread spread(const std::vector<std::optional<double>>& v) {
  Spread s;
  std::vector<double> have;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i]) have.push_back(*v[i]);
    else s.missing.push_back(i);
  }
  if (!have.empty()) {
    s.mean = metrics::mean_of(have);
    s.stdev = metrics::stdev_of(have);
  }
  return s;
}

}  // namespace

DlioFigures dlio_figures(const metrics::RunSummary& run, const std::string& prefix, double nominal_record_bytes,
                         const config::Workload& w) {
  const bool train = prefix == "train";
  DlioFigures f;
  std::vector<std::string> au_causes, thr_causes;  // per epoch of the phase, "" when it has a value
  std::vector<std::uint64_t> epochs;
  for (const auto& e : run.epochs) {
    if (!train && !e.evaluated) continue;
    const metrics::PhaseSummary& p = train ? e.train : e.eval;
    epochs.push_back(e.epoch);
    f.au.push_back(p.au ? std::optional<double>(*p.au * 100) : std::nullopt);
    f.throughput.push_back(p.throughput_dlio);
    au_causes.push_back(p.au ? "" : au_cause(p, e.epoch, w));
    thr_causes.push_back(p.throughput_dlio ? "" : throughput_cause(p, e.epoch, train, w));
  }
  const std::string m = "metric." + prefix;
  // One note per list entry without a value, and one per summary figure computed from fewer
  // epochs than the run had (or from none).
  auto note_list = [&](const std::string& key, const std::vector<std::string>& causes, const Spread& s,
                       const std::vector<std::string>& summary_keys) {
    for (const auto i : s.missing) f.notes.push_back({fmt::format("{}{}[{}]", m, key, i), causes[i]});
    if (s.missing.empty()) return;
    const std::string cause =
        s.mean ? fmt::format("over {} of {} epochs: {}", causes.size() - s.missing.size(), causes.size(), causes[s.missing[0]])
               : causes[s.missing[0]];
    for (const auto& k : summary_keys) f.notes.push_back({fmt::format("{}{}", m, k), cause});
  };
  const Spread au = spread(f.au), thr = spread(f.throughput);
  f.au_mean = au.mean;
  f.au_stdev = au.stdev;
  f.throughput_mean = thr.mean;
  f.throughput_stdev = thr.stdev;
  if (thr.mean) f.io_mean = *thr.mean * nominal_record_bytes / util::kMiB;
  if (thr.stdev) f.io_stdev = *thr.stdev * nominal_record_bytes / util::kMiB;
  note_list("_au_percentage", au_causes, au, {"_au_mean_percentage", "_au_stdev_percentage"});
  note_list("_throughput_samples_per_second", thr_causes, thr,
            {"_throughput_mean_samples_per_second", "_throughput_stdev_samples_per_second", "_io_mean_MB_per_second",
             "_io_stdev_MB_per_second"});
  if (!train) {
    // DLIO's evaluation verdict judges the evaluation AU alone (there is no MLPerf result to validate).
    if (au.mean) f.au_meets = *au.mean >= w.metric.au * 100;
    else if (!f.au.empty()) f.notes.push_back({"metric.eval_au_meet_expectation", "no AU: " + au_causes[au.missing[0]]});
    return f;
  }
  // MLPerf's rule: a result (samples/s) is valid when AU meets the target. Without an AU, or
  // without a result to validate, there is nothing to pass or fail.
  if (au.mean && thr.mean) {
    f.au_meets = *au.mean >= w.metric.au * 100;
  } else {
    f.verdict_cause = f.au.empty()  ? std::string("no training epoch")
                      : !au.mean    ? "no AU: " + au_causes[au.missing[0]]
                                    : "no throughput result to validate: " + thr_causes[thr.missing[0]];
    f.notes.push_back({"metric.train_au_meet_expectation", f.verdict_cause});
  }
  return f;
}

}  // namespace trainio::report
