#include "report/live_json.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "metrics/live_bytes.hpp"
#include "metrics/live_status.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::report {

void LiveJson::check_new(const std::string& path) {
  if (std::filesystem::exists(path))
    throw usage_error(fmt::format("--live-json '{}' exists, and trainio never writes over a file", path),
                      "name a new file, or remove the old one first");
  const std::string folder = util::parent_of(path);
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw usage_error(fmt::format("--live-json '{}': its folder '{}' does not exist", path, folder),
                      "create the folder first, or name a file in a folder that exists");
}

LiveJson::LiveJson(const std::string& path, double interval_s, int ranks)
    : path_(path), interval_s_(interval_s), ranks_(ranks), start_ns_(util::now_ns()), last_ns_(start_ns_) {
  check_new(path);
  file_ = storage::File::open(path, {.access = storage::Access::write_new});
  const metrics::LiveBytes b = metrics::live_bytes();
  last_read_ = b.read;
  last_written_ = b.written;
  metrics::live::activate(true);
  thread_ = std::thread([this] { run(); });
}

LiveJson::~LiveJson() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  metrics::live::activate(false);
  write_line(true);
  try {
    file_.close();
  } catch (const Error& e) {
    spdlog::warn("--live-json: {}", e.what());
  }
}

void LiveJson::stopped(const std::string& reason) {
  std::lock_guard lock(mutex_);
  stopped_ = reason;
}

void LiveJson::run() {
  std::unique_lock lock(mutex_);
  const auto every = std::chrono::nanoseconds(static_cast<std::int64_t>(interval_s_ * 1e9));
  while (!wake_.wait_for(lock, every, [this] { return stopping_; })) write_line(false);
}

void LiveJson::write_line(bool final) {
  if (failed_) return;
  const std::int64_t now = util::now_ns();
  const metrics::live::Snapshot s = metrics::live::snapshot();
  const metrics::LiveBytes b = metrics::live_bytes();
  const double interval = util::ns_to_s(now - last_ns_);
  const double phase_seconds = s.phase_start_ns ? util::ns_to_s((s.phase_end_ns ? s.phase_end_ns : now) - s.phase_start_ns) : 0;
  // A phase's rates exist from its first finished step: before it, nothing was measured (null, not 0).
  const bool steps = (s.kind == "train" || s.kind == "eval") && s.done > 0;
  using json = nlohmann::ordered_json;
  const auto per_second = [&](std::uint64_t bytes) { return interval > 0 ? json(static_cast<double>(bytes) / interval) : json(nullptr); };
  json line = {{"time", util::wall_time_iso()},
               {"elapsed_seconds", util::ns_to_s(now - start_ns_)},
               {"phase", s.kind},
               {"label", s.label},
               {"done", s.done},
               {"total", s.total},
               {"phase_over", s.phase_end_ns != 0},
               {"samples_per_second",
                steps && phase_seconds > 0 ? json(static_cast<double>(s.done) * s.samples_per_unit / phase_seconds) : json(nullptr)},
               {"ranks", ranks_},
               // Rank 0's own: the other ranks' compute draws and reads are their own.
               {"rank0",
                {{"au_percent", steps && phase_seconds > 0 ? json(100 * s.compute_seconds / phase_seconds) : json(nullptr)},
                 {"read_bytes", b.read},
                 {"written_bytes", b.written},
                 {"interval_seconds", interval},
                 {"read_bytes_per_second", per_second(b.read - last_read_)},
                 {"written_bytes_per_second", per_second(b.written - last_written_)}}}};
  if (final) {
    line["final"] = true;
    line["complete"] = stopped_.empty();
    line["stopped"] = stopped_.empty() ? json(nullptr) : json(stopped_);
  }
  last_ns_ = now;
  last_read_ = b.read;
  last_written_ = b.written;
  const std::string text = line.dump() + "\n";
  try {
    file_.write_all(text.data(), text.size());
    complete_bytes_ += text.size();
  } catch (const Error& e) {
    // The stream is for watching; a full disk under it must not end the measured run. A line
    // written in part is cut off, so every line the file holds reads whole.
    failed_ = true;
    spdlog::warn("--live-json stopped: {}", e.what());
    try {
      file_.truncate(complete_bytes_);
    } catch (const Error&) {
    }
  }
}

}  // namespace trainio::report
