#include "report/reporter.hpp"

namespace trainio::report {

void Reporters::epoch_measured(const metrics::EpochRecord& e) {
  for (const auto& r : list_) r->epoch_measured(e);
}

void Reporters::epoch_summarised(const metrics::EpochSummary& s) {
  for (const auto& r : list_) r->epoch_summarised(s);
}

void Reporters::checkpoint_measured(const metrics::CheckpointRecord& c) {
  for (const auto& r : list_) r->checkpoint_measured(c);
}

void Reporters::checkpoint_summarised(const metrics::CheckpointSummary& s) {
  for (const auto& r : list_) r->checkpoint_summarised(s);
}

void Reporters::generated(const metrics::RunSummary& s) {
  for (const auto& r : list_) r->generated(s);
}

void Reporters::write_results(const ResultsOf& run) {
  for (const auto& r : list_) r->write_results(run);
}

void Reporters::finished(const ResultsOf& run) {
  for (const auto& r : list_) r->finished(run);
}

void Reporters::stopped(const std::string& why) {
  for (const auto& r : list_) r->stopped(why);
}

}  // namespace trainio::report
