#include "engine/checkpoint/checkpointer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <spdlog/spdlog.h>

#include "engine/cache_control.hpp"
#include "engine/content.hpp"
#include "engine/progress.hpp"
#include "engine/together.hpp"
#include "metrics/trace.hpp"
#include "storage/aligned_buffer.hpp"
#include "storage/file.hpp"
#include "storage/fs.hpp"
#include "storage/new_file.hpp"
#include "storage/s3/s3_endpoint.hpp"
#include "storage/s3/s3_upload.hpp"
#include "storage/io_observer.hpp"
#include "storage/page_residency.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/kernel_touch.hpp"
#include "util/paths.hpp"
#include "util/proc_stats.hpp"
#include "util/rng.hpp"

namespace trainio::engine {

Checkpointer::~Checkpointer() {
  if (prefault_.joinable()) prefault_.join();
}

void Checkpointer::scratch_ready() {
  if (prefault_.joinable()) prefault_.join();
  if (scratch_.size() < scratch_bytes_) scratch_.resize(scratch_bytes_);  // the thread could not (out of memory): fail here
}

Checkpointer::Checkpointer(const config::Workload& w, const mpi::Comm& comm, std::uint64_t run_seed, bool progress,
                           int saved_ranks)
    : w_(w),
      comm_(comm),
      run_seed_(run_seed),
      progress_(progress && comm.is_root()),
      // A job that only loads plans the save it reads; loads read this run's saves otherwise.
      plan_(w, plan::saved_rank_count(w, comm.size(), saved_ranks)),
      root_(plan::checkpoint_root(w)),
      source_rank_(comm.rank()) {
  if (root_.starts_with("s3://")) s3_ = std::make_unique<storage::s3::Client>(storage::s3::endpoint_of(w.storage.storage_options));
  const int saved = plan::saved_rank_count(w, comm.size(), saved_ranks);
  const plan::ParallelLayout load = plan::load_layout(w, comm.size(), saved);
  if (!(load == plan::saved_layout(w, saved))) {
    reshard_plan_ = std::make_unique<plan::ReshardPlan>(w, plan::saved_layout(w, saved), load);
    reshard_ = std::make_unique<ReshardLoader>(*reshard_plan_, comm.rank());
    largest_file_ = reshard_->largest_file();
  }
  mine_ = parts_of(comm.rank());  // saves: a run that saves is the job its loads read
  // recovery_rank_shift: read what the rank one node further on wrote (DLIO shifts by the ranks
  // of a node, so that no node reads back its own page cache).
  if (w.checkpoint.recovery_rank_shift && comm.num_hosts() > 1)
    source_rank_ = (comm.rank() + comm.node_size()) % comm.size();
  else if (w.checkpoint.recovery_rank_shift && comm.is_root())
    spdlog::warn("checkpoint.recovery_rank_shift has no effect on a single host: every rank reads its own files");
  if (!reshard_) source_ = source_rank_ == comm.rank() ? mine_ : parts_of(source_rank_);
  for (const auto* parts : {&mine_, &source_})
    for (const Part& p : *parts) largest_file_ = std::max(largest_file_, p.archive.file_size());
  // An object S3 cannot hold fails every rank here, before any checkpoint's first byte.
  if (s3_)
    for (const Part& p : mine_) storage::s3::check_object_size(p.archive.file_size(), util::join(root_, p.file.name));
  if (w.checkpoint.file_layout != config::CheckpointLayout::torch) {
    std::vector<std::pair<std::string, const format::torch::Archive*>> torch_files;
    for (const Part& p : mine_) torch_files.emplace_back(p.file.name, &p.archive);
    raw_ = raw_files(torch_files, comm.rank(), w.checkpoint.file_layout);
    std::uint64_t largest = 0;
    for (const RawFile& f : raw_) largest = std::max(largest, f.bytes);
    if (!raw_.empty()) scratch_bytes_ = raw_staging_bytes(w.checkpoint.write_buffer_bytes, largest);
  } else if (!mine_.empty() || !source_.empty() || reshard_) {
    scratch_bytes_ = staging_bytes(largest_file_, alignment_);
  }
  if (scratch_bytes_ > 0)
    prefault_ = std::thread([this, n = scratch_bytes_] {
      try {
        util::resize_touched(scratch_, n);  // the writes' first pass over it is not timed
      } catch (...) {
      }
    });
}

std::size_t Checkpointer::staging_bytes(std::uint64_t largest_file, std::size_t alignment) {
  const std::uint64_t unit = std::max<std::uint64_t>(alignment, 4096);
  const std::uint64_t piece = std::min<std::uint64_t>(64u << 20, (largest_file + unit - 1) / unit * unit);
  return static_cast<std::size_t>(2 * (std::max(piece, unit) + unit));
}

std::vector<Checkpointer::Part> Checkpointer::parts_of(int rank) const {
  std::vector<Part> parts;
  for (auto& f : plan_.files_of(rank)) {
    format::torch::Archive archive(f.state);
    parts.push_back({std::move(f), std::move(archive)});
  }
  return parts;
}

std::string Checkpointer::folder(std::uint64_t epoch, std::uint64_t step) const {
  return util::join(root_, plan::CheckpointPlan::folder_name(epoch, step));
}

void Checkpointer::write_file(const Part& part, const std::string& path, std::uint64_t seed) {
  scratch_ready();
  const auto& c = w_.checkpoint;
  RandomContent random(seed);
  format::torch::TensorContent content(c.randomize_tensor ? &random : nullptr);
  if (s3_) {
    // DLIO: with s3_checkpoint.writer(name) as w: torch.save(state, w).
    const auto object = storage::s3::parse_object_path(path);
    storage::s3::Upload out(*s3_, object.bucket, object.key, storage::s3::kPartBytes,
                            storage::s3::Upload::Parts::always_multipart, storage::s3::kPartsInFlight,
                            part.archive.file_size());
    format::torch::save_to(part.archive, out, content, scratch_);
    out.commit();
    return;
  }
  // Without atomic_files the file is written under its own name, as DLIO does; with O_DIRECT it
  // is opened here, otherwise by the re-enactment of Python's open().
  storage::NewFile out(path, {.in_place = !c.atomic_files,
                              .opened_by_library = !c.odirect,
                              .access = storage::Access::write_truncate,
                              .direct = c.odirect});
  if (c.odirect) {
    format::torch::save_direct(part.archive, out.file(), content, scratch_, alignment_);
    if (c.fsync) out.file().fsync();
  } else {
    // DLIO: with open(name, "wb") as f: torch.save(state, f) (then os.fsync(f) when asked).
    format::PyBufferedWriter py;
    py.open(out.local_path());
    format::torch::save(part.archive, py, content, scratch_, overlap_);
    if (c.fsync) py.fsync();
    py.close();
  }
  out.commit();
}

void Checkpointer::read_file(const Part& part, const std::string& path) {
  if (s3_) {
    // DLIO: with s3_checkpoint.reader(name) as r: torch.load(r): the object's size (torch.load
    // seeks to the end), then the whole object, as the CRT reads it.
    const auto object = storage::s3::parse_object_path(path);
    const auto size = s3_->size_of(object.bucket, object.key);
    if (!size)
      throw data_error(fmt::format("checkpoint object '{}' is missing", path),
                       "write the checkpoint first (checkpoint.num_checkpoints_write), or read fewer");
    char magic[4] = {};
    s3_->read_object(object.bucket, object.key, magic, storage::s3::kPartBytes, storage::s3::kPartsInFlight);
    if (*size != part.archive.file_size() || std::memcmp(magic, "PK\x03\x04", 4) != 0)
      throw data_error(fmt::format("checkpoint object '{}' holds {} bytes, not the {} of the archive written there", path,
                                   *size, part.archive.file_size()),
                       "the checkpoint folder holds other objects: point checkpoint.checkpoint_folder elsewhere");
    return;
  }
  if (!storage::file_size(path))
    throw data_error(fmt::format("checkpoint file '{}' is missing", path),
                     "write the checkpoint first (checkpoint.num_checkpoints_write), or read fewer");
  if (w_.checkpoint.odirect) {
    scratch_ready();
    // O_DIRECT: the file front to back in aligned pieces (no framework reads with O_DIRECT).
    storage::File in = storage::File::open(path, {.direct = true});
    std::uint64_t at = 0;
    while (true) {
      const std::size_t got = in.pread_some(scratch_.data(), scratch_.size() / 2, at);
      if (got == 0) break;
      at += got;
    }
    if (at != part.archive.file_size())
      throw data_error(fmt::format("checkpoint file '{}' holds {} bytes, {} were written", path, at, part.archive.file_size()),
                       "the checkpoint folder holds other files: point checkpoint.checkpoint_folder elsewhere");
    in.close();
    return;
  }
  // DLIO: with open(name, "rb") as f: torch.load(f).
  format::PyBufferedFile in;
  in.open(path);
  format::torch::load(part.archive, in, scratch_, [this] { scratch_ready(); });
  in.close();
}

namespace {
metrics::CheckpointRecord new_record(metrics::CheckpointRecord::Kind kind, std::uint64_t epoch, std::uint64_t step,
                                     std::uint64_t index) {
  metrics::CheckpointRecord rec;
  rec.kind = kind;
  rec.index = index;
  rec.block = index;  // checkpoint-only runs number them as DLIO does; training renumbers per epoch
  rec.epoch = epoch;
  rec.step = step;
  rec.folder = plan::CheckpointPlan::folder_name(epoch, step);
  return rec;
}
}  // namespace

metrics::CheckpointRecord Checkpointer::new_save(std::uint64_t epoch, std::uint64_t step, std::uint64_t index) {
  return new_record(metrics::CheckpointRecord::Kind::save, epoch, step, index);
}

metrics::CheckpointRecord Checkpointer::save(std::uint64_t epoch, std::uint64_t step, std::uint64_t index) {
  metrics::CheckpointRecord rec = new_record(metrics::CheckpointRecord::Kind::save, epoch, step, index);
  const std::string dir = folder(epoch, step);
  std::vector<std::string> written;
  std::exception_ptr failure;
  // The staging buffer is trainio's, not the framework's: a save right after start-up waits for
  // its first touch (0.45 s for 2 x 64 MiB on the development VM) before its clock starts. A
  // buffer that cannot be had fails the save as its writes would, agreed with the other ranks.
  try {
    scratch_ready();
  } catch (...) {
    failure = std::current_exception();
  }
  const std::int64_t t0 = util::now_ns();
  rec.start = util::wall_time_iso_of(t0);
  rec.start_ns = t0;
  {
    storage::ScopedObserver observe(&rec.io);
    const LiveLine live(fmt::format("checkpoint save {}", index), LiveLine::Direction::write, comm_.size(), progress_);
    try {
      if (!failure) write_own(epoch, step, index, rec, written);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  const std::int64_t t_own = util::now_ns();  // this rank's writes are done: its own time ends here
  const int failing = comm_.agree(failure == nullptr);
  if (failing >= 0) {
    // Nothing of a failed checkpoint stays behind to be mistaken for a whole one.
    remove_written(written);
    comm_.barrier();
    if (comm_.is_root() && !s3_) storage::remove_empty_dir(dir);
    settle(comm_, failing, failure);
  }
  finish_times(rec, t0, t_own);
  metrics::trace::span("save", "checkpoint", t0, t0 + static_cast<std::int64_t>(rec.seconds * 1e9),
                       fmt::format(R"("index":{},"step":{})", index, step));
  saved_.insert(saved_.end(), written.begin(), written.end());
  return rec;
}

void Checkpointer::write_own(std::uint64_t epoch, std::uint64_t step, std::uint64_t index, metrics::CheckpointRecord& rec,
                             std::vector<std::string>& written) {
  const std::string dir = folder(epoch, step);
  if (!s3_) storage::make_dirs(dir);  // every rank, as DLIO's create_node(exist_ok=True)
  scratch_ready();
  if (w_.checkpoint.odirect && alignment_ == 4096) {
    alignment_ = std::max<std::size_t>(4096, storage::direct_alignment(dir).offset);
    if (alignment_ != 4096 && raw_.empty()) scratch_.resize(scratch_bytes_ = staging_bytes(largest_file_, alignment_));  // whole aligned pieces
  }
  if (w_.checkpoint.file_layout != config::CheckpointLayout::torch) {
    write_raw_own(dir, index, rec, written);
    return;
  }
  for (std::size_t i = 0; i < mine_.size(); ++i) {
    const std::string path = util::join(dir, mine_[i].file.name);
    written.push_back(path);
    // Each checkpoint's bytes are new, as a training job's are (DLIO rewrites the same).
    write_file(mine_[i], path, util::derive_seed(util::derive_seed(run_seed_, 0xC4EC, static_cast<std::uint64_t>(comm_.rank())), index, i));
    rec.tensor_bytes += mine_[i].file.tensor_bytes;
    rec.file_bytes += mine_[i].archive.file_size();
    ++rec.files;
  }
}

void Checkpointer::write_raw_own(const std::string& dir, std::uint64_t index, metrics::CheckpointRecord& rec,
                                 std::vector<std::string>& written) {
  const auto& c = w_.checkpoint;
  if (c.odirect && c.write_buffer_bytes % alignment_ != 0)
    throw config_error(fmt::format("checkpoint.write_buffer_bytes = {} is not a multiple of the O_DIRECT alignment {} of '{}'",
                                   c.write_buffer_bytes, alignment_, dir),
                       fmt::format("set checkpoint.write_buffer_bytes to a multiple of {}", alignment_));
  const RawWriteOptions options{.write_buffer = c.write_buffer_bytes, .direct = c.odirect, .alignment = alignment_,
                                .fsync = c.fsync, .atomic = c.atomic_files};
  for (std::size_t i = 0; i < raw_.size(); ++i) {
    const std::string path = util::join(dir, raw_[i].name);
    written.push_back(path);
    RandomContent random(util::derive_seed(util::derive_seed(run_seed_, 0xC4EC, static_cast<std::uint64_t>(comm_.rank())), index, i));
    format::torch::TensorContent content(c.randomize_tensor ? &random : nullptr);
    write_raw(raw_[i], path, options, content, scratch_, overlap_);
    rec.tensor_bytes += raw_[i].bytes;
    rec.file_bytes += raw_[i].bytes;
    ++rec.files;
  }
}

void Checkpointer::remove_written(const std::vector<std::string>& written) const {
  for (const auto& path : written) {
    try {
      if (s3_) {
        const auto object = storage::s3::parse_object_path(path);
        s3_->remove(object.bucket, object.key);
      } else {
        storage::remove_file(path);
        storage::remove_file(storage::temp_path_for(path));
      }
    } catch (const Error&) {
    }
  }
}

std::uint64_t Checkpointer::own_file_bytes() const {
  std::uint64_t n = 0;
  for (const RawFile& f : raw_) n += f.bytes;
  if (!raw_.empty()) return n;
  for (const Part& p : mine_) n += p.archive.file_size();
  return n;
}

void Checkpointer::finish_times(metrics::CheckpointRecord& rec, std::int64_t t0, std::int64_t t_own) const {
  // Called once the ranks agreed that every one succeeded.
  const std::int64_t t_agreed = util::now_ns();
  std::int64_t t_end = t_own;
  if (w_.checkpoint.rank_sync) {  // DLIO's checkpoint_rank_sync: every rank's time runs to a barrier
    comm_.barrier();
    t_end = util::now_ns();
  }
  rec.io_seconds = util::ns_to_s(t_own - t0);
  rec.seconds = util::ns_to_s(t_end - t0);
  rec.collective_seconds = util::ns_to_s(std::max(t_agreed, t_end) - t0);
  rec.end = util::wall_time_iso_of(t_end);
}

metrics::CheckpointRecord Checkpointer::load(std::uint64_t epoch, std::uint64_t step, std::uint64_t index) {
  metrics::CheckpointRecord rec = new_record(metrics::CheckpointRecord::Kind::load, epoch, step, index);
  const std::string dir = folder(epoch, step);
  const auto before = util::process_storage_read_bytes();
  storage::begin_probe_phase();
  const std::int64_t t0 = util::now_ns();
  rec.start = util::wall_time_iso_of(t0);
  rec.start_ns = t0;
  std::int64_t t_own = t0;
  together(comm_, [&] {
    storage::ScopedObserver observe(&rec.io);
    const LiveLine live(fmt::format("checkpoint load {}", index), LiveLine::Direction::read, comm_.size(), progress_);
    if (reshard_) reshard_->read(dir, scratch_, rec, [this] { scratch_ready(); });
    for (const auto& part : source_) {
      read_file(part, util::join(dir, part.file.name));
      rec.tensor_bytes += part.file.tensor_bytes;
      rec.file_bytes += part.archive.file_size();
      ++rec.files;
    }
    t_own = util::now_ns();
  });
  rec.first_read_end_ns = rec.io.first_read_end_ns();
  finish_times(rec, t0, t_own);
  metrics::trace::span("load", "checkpoint", t0, t0 + static_cast<std::int64_t>(rec.seconds * 1e9),
                       fmt::format(R"("index":{},"step":{})", index, step));
  if (const auto after = util::process_storage_read_bytes(); before && after && !s3_) {  // block counters: not S3's
    rec.process_read_before = before;
    rec.process_read_after = after;
    rec.storage_read_bytes = *after - *before;
    rec.storage_read_known = true;
  }
  return rec;
}

void Checkpointer::evict_saved() {
  if (!s3_) evict_files(saved_, w_.checkpoint.evict, comm_);  // an object store's caches are not this machine's
}

void run_checkpoints(const config::Workload& w, const mpi::Comm& comm, std::uint64_t run_seed,
                     metrics::RankRecord& record,
                     const std::function<void(const metrics::CheckpointRecord&)>& on_checkpoint, bool progress,
                     int saved_ranks) {
  std::unique_ptr<Checkpointer> checkpointer;
  together(comm, [&] { checkpointer = std::make_unique<Checkpointer>(w, comm, run_seed, progress, saved_ranks); });
  const auto& c = w.checkpoint;
  const auto writes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, c.num_checkpoints_write));
  const auto reads = static_cast<std::uint64_t>(std::max<std::int64_t>(0, c.num_checkpoints_read));
  auto pause = [&] {
    if (c.time_between_checkpoints > 0)
      util::sleep_until_ns(util::now_ns() + static_cast<std::int64_t>(c.time_between_checkpoints * 1e9));
    comm.barrier();
  };
  auto done = [&](const metrics::CheckpointRecord& rec) {
    if (on_checkpoint) on_checkpoint(rec);
    record.checkpoints.push_back(rec);  // its timeline: its storage calls are summarised
  };
  for (std::uint64_t i = 1; i <= writes && !stop_asked(comm, record, 1, "checkpoint"); ++i) {
    pause();
    done(checkpointer->save(1, i, i));
  }
  // Reading back what is still in the page cache would measure memory (DLIO does so).
  if (reads > 0 && writes > 0 && record.stop_signal == 0) checkpointer->evict_saved();
  for (std::uint64_t i = 1; i <= reads && record.stop_signal == 0 && !stop_asked(comm, record, 1, "checkpoint"); ++i) {
    pause();
    done(checkpointer->load(1, i, i));
  }
}

}  // namespace trainio::engine
