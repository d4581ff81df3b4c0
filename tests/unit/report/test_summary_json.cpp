#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "config/load.hpp"
#include "plan/layout.hpp"
#include "plan/run_plan.hpp"
#include "report/summary_json.hpp"

using namespace trainio;

namespace {

struct Streamed {
  std::string text;
  std::size_t pieces = 0, largest_piece = 0;
};

Streamed summary_of(const config::Workload& w, const metrics::RunSummary& run, const report::RunContext& context) {
  const plan::DatasetLayout layout(w);
  Streamed s;
  report::JsonStream out([&](std::string_view piece) {
    s.text += piece;
    ++s.pieces;
    s.largest_piece = std::max(s.largest_piece, piece.size());
  });
  report::summary_json(out, w, layout, plan::shape_run(w, layout, run.ranks), run, context);
  out.finish();
  return s;
}

}  // namespace

TEST_CASE("summary.json streams lists that grow with the run, one element at a time") {
  const config::Workload w = config::load("default", {"workflow.checkpoint=true", "train.epochs=3000", "dataset.num_files_train=2000", "workflow.evaluation=false"});
  metrics::RunSummary run;
  report::RunContext context;
  const int hosts = 500;
  for (int h = 0; h < hosts; ++h) {
    util::HostInfo host;
    host.hostname = "node" + std::to_string(h);
    context.hosts.push_back(host);
    context.ranks_per_host.push_back(1);
  }
  context.ranks = run.ranks = run.hosts = hosts;
  for (std::uint64_t e = 1; e <= 3000; ++e) {
    metrics::EpochSummary epoch;
    epoch.epoch = e;
    run.epochs.push_back(epoch);
  }
  run.checkpoints.resize(400);

  const Streamed s = summary_of(w, run, context);
  const auto doc = nlohmann::ordered_json::parse(s.text);
  CHECK(doc["trainio"]["epochs"].size() == 3000);
  CHECK(doc["trainio"]["context"]["hosts"].size() == hosts);
  CHECK(doc["host_cpu_count"].size() == hosts);
  CHECK(doc["trainio"]["checkpoint"]["checkpoints"].size() == 400);
  CHECK(doc["epochs"] == 3000);
  // Handed over in pieces of about 64 KiB as it is written, not as one document at the end.
  CHECK(s.pieces > 20);
  CHECK(s.largest_piece < 128 * 1024);
  // The layout of nlohmann's dump(4), which DLIO's readers of summary.json and earlier runs share.
  CHECK(s.text == doc.dump(4));
}
