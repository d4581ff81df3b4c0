#include "capture/infer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "capture/infer_dataset.hpp"

namespace trainio::capture {

void Inference::set(std::string key, std::string value, std::string evidence, std::string confidence) {
  for (auto& v : values)
    if (v.key == key) {
      v = Value{std::move(key), std::move(value), std::move(evidence), std::move(confidence)};
      return;
    }
  values.push_back(Value{std::move(key), std::move(value), std::move(evidence), std::move(confidence)});
}

const Value* Inference::find(const std::string& key) const {
  for (const auto& v : values)
    if (v.key == key) return &v;
  return nullptr;
}

// Results, logs and traces a job (or a replay) writes about itself are not its checkpoints.
bool is_report(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  for (const char* ext : {".json", ".jsonl", ".csv", ".log", ".txt", ".pfw", ".yaml", ".yml", ".html"})
    if (name.find(ext) != std::string::npos) return true;
  return false;
}

std::optional<std::uint32_t> dataset_dir(const Profile& p) {
  std::optional<std::uint32_t> best;
  std::uint64_t most = 0;
  for (std::uint32_t i = 0; i < p.dirs().size(); ++i) {
    const DirStats& d = p.dirs()[i];
    if (d.read_bytes == 0 || d.write_bytes > 0) continue;
    std::uint64_t bytes = 0;  // a job's configuration files are not its dataset
    for (std::uint32_t f : d.files)
      if (!is_report(p.files()[f].path)) bytes += p.files()[f].read_bytes;
    if (bytes > most) best = i, most = bytes;
  }
  return best;
}

// Python's tempfile probes /tmp with a few bytes: files written less than this are no job output.
constexpr std::uint64_t kLeastWritten = 4096;

std::vector<std::uint32_t> written_files(const Profile& p) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < p.files().size(); ++i)
    if (p.files()[i].write_bytes >= kLeastWritten && !is_report(p.files()[i].path)) out.push_back(i);
  return out;
}

namespace {

template <typename T>
T median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::string seconds_text(double s) { return fmt::format("{:.4g}", s); }

}  // namespace

int concurrent_readers(const Profile& p, std::uint32_t dir) {
  std::vector<std::pair<std::int64_t, int>> edges;
  for (const auto& [pid, proc] : p.processes())
    if (std::find(proc.read_dirs.begin(), proc.read_dirs.end(), dir) != proc.read_dirs.end())
      edges.emplace_back(proc.first_read_ns, 1), edges.emplace_back(proc.last_read_ns + 1, -1);
  std::sort(edges.begin(), edges.end());
  int now = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, now += d);
  return most;
}

Cadence cadence(const Profile& p, std::uint32_t dir) {
  Cadence c;
  std::vector<int> runs;
  for (const auto& [pid, proc] : p.processes()) {
    std::vector<std::int64_t> t;
    for (const auto& [d, ns] : proc.visits)
      if (d == dir) t.push_back(ns);
    if (t.size() < 4) continue;
    std::vector<std::int64_t> gaps;
    for (std::size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
    const std::int64_t pause = 3 * std::max<std::int64_t>(median(gaps), 1000);
    int run = 1;
    bool first = true;  // a process's first run is prefetch filling its queue: not a batch
    for (std::size_t i = 1; i <= t.size(); ++i) {
      if (i < t.size() && t[i] - t[i - 1] <= pause) {
        ++run;
        continue;
      }
      if (!first) runs.push_back(run);
      first = false;
      run = 1;
    }
  }
  c.runs = runs.size();
  // The commonest run (the larger on a tie): a first sample's slow start (a lazy import) splits
  // a worker's first batch, and a last batch may be short.
  std::map<int, int> times;
  for (int r : runs) ++times[r];
  for (const auto& [length, n] : times)
    if (runs.size() >= 2 && n >= times[c.batch]) c.batch = length;
  return c;
}

Inference infer(const Profile& p, const InferOptions& o) {
  Inference out;
  out.set("model.name", o.name, "the name given to capture", "high");
  const auto ds = dataset_dir(p);
  const auto written = written_files(p);
  if (!ds && written.empty())
    out.unknown.push_back("the job read and wrote no data files the trace shows (only the system's and Python's own)");

  std::string format;
  if (ds) {
    const DirStats& d = p.dirs()[*ds];
    out.dataset_path = d.path;
    const DatasetFacts facts = infer_dataset(p, *ds, o, out);
    format = facts.format;
    const long main_pid = p.first_pid();
    const int readers = concurrent_readers(p, *ds);
    bool main_reads = false, threads = false;
    for (const auto& [pid, proc] : p.processes())
      if (std::find(proc.read_dirs.begin(), proc.read_dirs.end(), *ds) != proc.read_dirs.end()) {
        if (pid == main_pid) main_reads = true;
        if (proc.thread) threads = true;
      }
    // TFRecord is TensorFlow's unless the files were opened by Python's open(), which fstat()s
    // every file it opens (TensorFlow's reader never does): then a Python loop read them.
    const std::uint64_t opens = d.calls[static_cast<int>(Call::open)];
    const bool python_open = opens > 0 && d.calls[static_cast<int>(Call::stat)] >= opens;
    const bool tf = format == "tfrecord" && !python_open;
    const int workers = main_reads && readers <= 1 ? 0 : readers;
    out.set("framework", tf ? "tensorflow" : "pytorch",
            tf                      ? "TFRecord files opened with no stat and read front to back: TensorFlow's reader"
            : format == "tfrecord" ? fmt::format("TFRecord files opened by Python's open() ({} opens, {} stats): a Python "
                                                 "Dataset's reader, not TensorFlow's (which never stats)",
                                                 opens, d.calls[static_cast<int>(Call::stat)])
                                   : "files read one sample at a time, as a PyTorch Dataset does",
            "medium");
    out.set("workflow.generate_data", "True", "the replay needs files of the traced sizes", "high");
    out.set("workflow.train", "True", fmt::format("the job read {}", d.path), "high");
    out.set("reader.data_loader", tf ? "tensorflow" : "pytorch", "as the framework", "medium");
    if (tf) {
      out.set("reader.read_threads", std::to_string(std::max(1, readers)),
              fmt::format("{} process(es) read the files at the same time", readers), "high");
      const std::uint64_t reads = d.read_sizes.total();
      if (reads > 0)
        out.set("reader.transfer_size", std::to_string(d.read_bytes / reads),
                fmt::format("the mean bytes per read ({} reads): the replay makes as many reads of the files", reads),
                "medium");
    } else {
      out.set("reader.read_threads", std::to_string(workers),
              workers == 0 ? "only the main process read the files, between its steps (no loader workers)"
                           : fmt::format("{} {} read the files at the same time (the main process read none of them)", workers,
                                         threads ? "threads" : "worker processes"),
              "high");
    }
    const Cadence c = cadence(p, *ds);
    int batch = c.batch > 0 ? c.batch : 1;
    std::uint64_t handed = 0, handed_opens = 0;
    for (const auto& [pid, proc] : p.processes())
      if (std::find(proc.read_dirs.begin(), proc.read_dirs.end(), *ds) != proc.read_dirs.end())
        handed += proc.batches_handed, handed_opens += proc.opens_handed;
    const std::uint64_t samples_read = facts.files * facts.samples_per_file * std::max<std::uint32_t>(1, facts.passes);
    if (p.steps() > 0) {
      batch = static_cast<int>(std::max<std::uint64_t>(1, (samples_read + p.steps() / 2) / p.steps()));
      out.set("reader.batch_size", std::to_string(batch),
              fmt::format("{} samples read over the {} training steps the application's spans name (DLIO's "
                          "*Framework.compute)",
                          samples_read, p.steps()),
              "high");
    } else if (handed > 0) {
      batch = static_cast<int>(std::max<std::uint64_t>(1, (handed_opens + handed / 2) / handed));
      out.set("reader.batch_size", std::to_string(batch),
              fmt::format("the workers handed {} batches to the main process (PyTorch's /dev/shm/torch_* segments) for "
                          "{} opens of dataset files",
                          handed, handed_opens),
              "high");
    } else if (c.batch > 0)
      out.set("reader.batch_size", std::to_string(batch),
              fmt::format("the commonest run of opens between pauses, over {} runs of {} reader(s)", c.runs, std::max(1, workers)),
              c.runs >= 4 ? "medium" : "low");
    else {
      out.set("reader.batch_size", "1", "not visible: no pauses between opens (or no per-sample opens)", "low");
      out.unknown.push_back("reader.batch_size: the trace shows no batching cadence; 1 assumed");
    }
    if (workers > 0) {
      out.set("reader.prefetch_size", std::to_string(2 * workers),
              fmt::format("PyTorch's default prefetch_factor (2 batches a worker) times {} workers: the trace does not "
                          "show the queue's depth",
                          workers),
              "low");
      out.unknown.push_back("reader.prefetch_size: a trace shows when batches are read, not how deep the queue is");
    }
    // Order: a process's consecutive opens going to later names, or its reads of a file going on.
    const double up_files = d.visit_pairs ? static_cast<double>(d.visit_up) / static_cast<double>(d.visit_pairs) : -1;
    const double up_reads = d.read_pairs ? static_cast<double>(d.read_up) / static_cast<double>(d.read_pairs) : -1;
    if (up_files >= 0 && d.visit_pairs >= 8) {
      const bool shuffled = up_files < 0.8;
      out.set("reader.file_shuffle", shuffled ? "seed" : "off",
              fmt::format("{:.0f}% of a reader's consecutive opens went to a later file name ({} pairs; sequential ~100%, "
                          "shuffled ~50%)",
                          100 * up_files, d.visit_pairs),
              std::abs(up_files - 0.5) < 0.15 || up_files > 0.95 ? "high" : "medium");
      if (facts.samples_per_file <= 1) out.set("reader.sample_shuffle", shuffled ? "seed" : "off", "as the files: one sample each", "medium");
    }
    if (facts.samples_per_file > 1 && up_reads >= 0 && d.read_pairs >= 8) {
      const bool shuffled = up_reads < 0.8;
      out.set("reader.sample_shuffle", shuffled ? "seed" : "off",
              fmt::format("{:.0f}% of a reader's consecutive reads of a file went further on ({} pairs)", 100 * up_reads,
                          d.read_pairs),
              "medium");
    }
    out.unknown.push_back("reader.file_shuffle/sample_shuffle seed: a trace shows an order, not the seed that made it");
    const std::uint32_t epochs = std::max<std::uint32_t>(1, facts.passes);
    // Files opened fewer times than their samples were read stay open (h5py keeps its files open).
    const double opens_per_file = static_cast<double>(opens) / static_cast<double>(facts.files);
    if (facts.samples_per_file > 1 && opens_per_file < static_cast<double>(epochs * facts.samples_per_file) / 2)
      out.set("reader.read_type", "memory",
              fmt::format("a file was opened {:.3g} times for {} samples over {} epoch(s): the job keeps its files open", opens_per_file,
                          facts.samples_per_file, epochs),
              "high");
    out.set("train.epochs", std::to_string(epochs),
            fmt::format("each file was read through {} time(s) (the median, over files, of how often each read offset was "
                        "read, offsets weighted by their bytes)",
                        facts.passes),
            "medium");
    // Compute: the job's time per step, from its first dataset read to the trace's end (a loader's
    // read-ahead ends the reads before the last steps); without workers the reads do not overlap the
    // steps, so their time is taken out.
    const double samples = static_cast<double>(facts.files * facts.samples_per_file);
    const double steps = std::max(1.0, std::floor(samples / batch)) * epochs;
    const double span_s = static_cast<double>(std::max(p.end_ns(), d.last_read_end_ns) - d.first_read_ns) / 1e9;
    const double reads_s = workers > 0 ? 0.0 : d.busy_ns / 1e9;
    const double compute = std::max(0.0, span_s - reads_s) / steps;
    const std::string how =
        workers > 0
            ? fmt::format("the {:.4g} s from the first dataset read to the trace's end over {:.0f} steps: the traced job's "
                          "step time, taken as compute (an upper bound: it includes the workers' start and stop and any "
                          "wait for data)",
                          span_s, steps)
            : fmt::format("the {:.4g} s from the first dataset read to the trace's end, less the {:.4g} s spent in reads, over "
                          "{:.0f} steps",
                          span_s, reads_s, steps);
    if (p.steps() > 0) {
      out.set("train.computation_time", seconds_text(static_cast<double>(p.step_ns()) / 1e9 / static_cast<double>(p.steps())),
              fmt::format("the mean of the {} compute spans the application's trace gives (DLIO's *Framework.compute)",
                          p.steps()),
              "high");
    } else {
      out.set("train.computation_time", seconds_text(compute), how, "low");
      out.unknown.push_back("train.computation_time: from the trace's timing, which the tracer itself slows (strace most)");
    }
    out.set("train.seed", "123", "not in a trace: DLIO's default", "low");
  }

  // Checkpoints: the data files written.
  if (!written.empty()) {
    std::uint64_t bytes = 0;
    std::vector<std::int64_t> starts;
    for (std::uint32_t i : written) {
      bytes += p.files()[i].write_bytes;
      starts.push_back(p.files()[i].first_ns);
    }
    std::sort(starts.begin(), starts.end());
    const double per_file = static_cast<double>(bytes) / static_cast<double>(written.size());
    out.set("workflow.checkpoint", "True", fmt::format("the job wrote {} file(s), {} bytes in all", written.size(), bytes), "high");
    out.set("checkpoint.checkpoint_folder", o.checkpoint_folder,
            fmt::format("the job wrote to {}; the replay writes here", p.dirs()[p.files()[written.front()].dir].path), "high");
    // torch.save writes each tensor larger than Python's buffer in one write: when every file
    // shows the same such writes, they are the state's tensors, replayed as one layer of them.
    const std::vector<std::uint64_t>& tensors = p.files()[written.front()].large_writes;
    const bool same_tensors =
        !tensors.empty() && tensors.size() < FileStats::kLargeWritesKept &&
        std::all_of(written.begin(), written.end(), [&](std::uint32_t i) { return p.files()[i].large_writes == tensors; });
    if (same_tensors) {
      std::string list;
      std::uint64_t tensor_bytes = 0;
      for (const std::uint64_t t : tensors) {
        list += fmt::format("{}{}", list.empty() ? "" : ", ", t);
        tensor_bytes += t;
      }
      out.set("model.model_size_bytes", "0", "the state's tensors are given below instead", "high");
      out.set("model.num_layers", "1", "the tensors replayed as one layer's", "medium");
      out.set("model.layer_parameters", "[" + list + "]",
              fmt::format("every file's writes larger than Python's 4 KiB buffer, in order: torch.save writes each tensor "
                          "that size in one write ({} of the {:.0f} bytes a file; smaller tensors and the file's own "
                          "records go out in buffered writes)",
                          tensor_bytes, per_file),
              "medium");
    } else {
      out.set("model.model_size_bytes", fmt::format("{:.0f}", per_file),
              "bytes written per file (a checkpoint written as one torch.save file)", "medium");
    }
    if (!ds) {
      double gap = 0;
      std::vector<double> gaps;
      for (std::size_t i = 1; i < written.size(); ++i) {
        const FileStats& prev = p.files()[written[i - 1]];
        gaps.push_back(static_cast<double>(p.files()[written[i]].first_ns - prev.last_ns) / 1e9);
      }
      gap = gaps.empty() ? 0 : median(gaps);
      out.set("workflow.train", "False", "the job read no dataset: checkpoints only", "high");
      out.set("checkpoint.num_checkpoints_write", std::to_string(written.size()), "one file per save", "medium");
      out.set("checkpoint.num_checkpoints_read", "0", "no checkpoint file was read back", "high");
      out.set("checkpoint.time_between_checkpoints", seconds_text(std::max(0.0, gap)),
              "median time from the end of one save's writes to the start of the next's", "medium");
    } else {
      const auto* epochs = out.find("train.epochs");
      const long e = epochs ? std::stol(epochs->value) : 1;
      if (static_cast<long>(written.size()) == e) {
        out.set("checkpoint.checkpoint_after_epoch", "1", "one save per epoch", "medium");
        out.set("checkpoint.epochs_between_checkpoints", "1", "one save per epoch", "medium");
      } else {
        out.unknown.push_back("checkpoint cadence: saves do not follow epochs; the replay saves after each epoch");
      }
    }
  } else if (ds) {
    out.set("workflow.checkpoint", "False", "the job wrote no data files", "high");
  }
  out.unknown.push_back("evaluation: capture does not tell evaluation reads from training reads; none replayed");
  return out;
}

}  // namespace trainio::capture
