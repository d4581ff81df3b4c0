#include "verify/reshard_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "util/paths.hpp"
#include "verify/records.hpp"

namespace trainio::verify {

namespace {

// One load across ranks, from the records.
struct LoadTotals {
  int records = 0, ranks_with_shard = 0;
  std::vector<std::uint64_t> saved, load;
  std::uint64_t shard = 0, unsaved = 0, data = 0, index = 0, pieces = 0;
  double rank_max = 0;
  int rank_max_rank = -1;
  std::map<std::string, std::uint64_t> readers;
};

std::vector<std::uint64_t> triple(const JsonValue& v) {
  std::vector<std::uint64_t> out;
  for (const JsonValue x : v) out.push_back(x.u64());
  return out;
}

}  // namespace

void check_reshard_loads(const std::string& folder, const JsonValue& summary, int ranks, Checks& checks) {
  std::map<std::uint64_t, LoadTotals> loads;  // by load index
  for (int rank = 0; rank < ranks; ++rank) {
    std::map<std::uint64_t, std::uint64_t> load_bytes;  // the checkpoint lines' bytes read by the load's calls
    std::vector<std::pair<std::uint64_t, std::uint64_t>> claimed;  // (index, data + index bytes)
    RecordVisitor v;
    v.checkpoint = [&](const CheckpointLine& c) {
      if (c.kind == "load") load_bytes[c.index] = c.io.bytes_read();
    };
    v.reshard = [&](const JsonValue& o) {
      const std::uint64_t index = o.at("index").u64();
      LoadTotals& t = loads[index];
      ++t.records;
      t.saved = triple(o.at("saved"));
      t.load = triple(o.at("load"));
      const std::uint64_t shard = o.at("shard_bytes").u64(), data = o.at("data_bytes").u64(), idx = o.at("index_bytes").u64();
      t.shard += shard;
      t.unsaved += o.at("unsaved_bytes").u64();
      t.data += data;
      t.index += idx;
      t.pieces += o.at("pieces").u64();
      if (shard > 0) ++t.ranks_with_shard;
      const double own = shard > 0 ? static_cast<double>(data + idx) / static_cast<double>(shard) : 0;
      if (own > t.rank_max || t.rank_max_rank < 0) {
        t.rank_max = own;
        t.rank_max_rank = rank;
      }
      for (const JsonValue f : o.at("files")) ++t.readers[f.str()];
      claimed.emplace_back(index, data + idx);
    };
    read_records(util::join(folder, fmt::format("{}_records.jsonl", rank)), v);
    // The bytes a reshard record claims are those its load's storage calls read.
    for (const auto& [index, bytes] : claimed) {
      const auto it = load_bytes.find(index);
      const auto name = fmt::format("rank {} records load {} reshard_load data_bytes + index_bytes", rank, index);
      if (it == load_bytes.end()) {
        checks.problem(name, "no checkpoint line of that load");
        continue;
      }
      const nlohmann::json claim = bytes;
      checks.number(name + " = the load's read calls' bytes", &claim, static_cast<double>(it->second), kExact);
    }
  }

  const JsonValue list = find(summary, "trainio/checkpoint/checkpoints");
  std::size_t reported = 0;
  if (list.valid() && list.is_array())
    for (std::size_t i = 0; i < list.size(); ++i) {
      const JsonValue c = list.at(i);
      const JsonValue r = c.is_object() ? c.find("reshard") : JsonValue();
      if (!r.valid() || r.is_null()) continue;
      ++reported;
      const std::uint64_t index = c.at("index").u64();
      const std::string name = fmt::format("trainio/checkpoint/checkpoints/{}/reshard", i);
      const auto it = loads.find(index);
      if (it == loads.end() || !c.at("kind").equals("load")) {
        checks.problem(name, "reported, but no rank's records hold a resharded load of that index");
        continue;
      }
      const LoadTotals& t = it->second;
      if (t.records != ranks) checks.problem(name, fmt::format("{} of {} ranks have its reshard_load record", t.records, ranks));
      const char* axes[] = {"tensor", "pipeline", "data"};
      for (std::size_t a = 0; a < 3 && a < t.saved.size() && a < t.load.size(); ++a) {
        checks.number(fmt::format("{}.saved_layout.{}", name, axes[a]), r.at("saved_layout").find(axes[a]), static_cast<double>(t.saved[a]), kExact);
        checks.number(fmt::format("{}.load_layout.{}", name, axes[a]), r.at("load_layout").find(axes[a]), static_cast<double>(t.load[a]), kExact);
      }
      checks.number(name + ".ranks", r.find("ranks"), t.ranks_with_shard, kExact);
      checks.number(name + ".shard_bytes", r.find("shard_bytes"), static_cast<double>(t.shard), kExact);
      checks.number(name + ".unsaved_bytes", r.find("unsaved_bytes"), static_cast<double>(t.unsaved), kExact);
      checks.number(name + ".data_bytes", r.find("data_bytes"), static_cast<double>(t.data), kExact);
      checks.number(name + ".index_bytes", r.find("index_bytes"), static_cast<double>(t.index), kExact);
      checks.number(name + ".bytes_read", r.find("bytes_read"), static_cast<double>(t.data + t.index), kExact);
      checks.number(name + ".pieces", r.find("pieces"), static_cast<double>(t.pieces), kExact);
      const std::optional<double> amp =
          t.shard > 0 ? std::optional(static_cast<double>(t.data + t.index) / static_cast<double>(t.shard)) : std::optional(0.0);
      checks.number(name + ".read_amplification", r.find("read_amplification"), amp, kRounding, true);
      checks.number(name + ".rank_read_amplification_max", r.find("rank_read_amplification_max"), t.rank_max, kRounding);
      checks.number(name + ".rank_read_amplification_max_rank", r.find("rank_read_amplification_max_rank"),
                    std::max(0, t.rank_max_rank), kExact);
      std::uint64_t most = 0, least = 0, total = 0;
      std::string most_read;
      for (const auto& [file, n] : t.readers) {
        total += n;
        if (n > most) {
          most = n;
          most_read = file;
        }
        least = least == 0 ? n : std::min(least, n);
      }
      checks.number(name + ".files_read", r.find("files_read"), static_cast<double>(t.readers.size()), kExact);
      checks.number(name + ".readers_per_file_max", r.find("readers_per_file_max"), static_cast<double>(most), kExact, true);
      checks.number(name + ".readers_per_file_min", r.find("readers_per_file_min"), static_cast<double>(least), kExact);
      checks.number(name + ".readers_per_file_mean", r.find("readers_per_file_mean"),
                    t.readers.empty() ? 0.0 : static_cast<double>(total) / static_cast<double>(t.readers.size()), kRounding);
      const JsonValue file = r.find("most_read_file");
      if (!file.valid() || !file.is_string() || file.str() != most_read)
        checks.problem(name + ".most_read_file", fmt::format("the records' most read file is '{}'", most_read));
    }
  if (reported != loads.size())
    checks.problem("trainio/checkpoint/checkpoints", fmt::format("{} resharded loads in the summary, {} in the records", reported, loads.size()));
}

}  // namespace trainio::verify
