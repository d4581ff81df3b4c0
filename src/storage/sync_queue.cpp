#include "storage/sync_queue.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "storage/errno_hint.hpp"
#include "storage/fs.hpp"
#include "storage/in_flight.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::storage {

SyncQueue::SyncQueue(unsigned threads) : threads_wanted_(std::max(1u, threads)) {}

SyncQueue::~SyncQueue() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    waiting_.clear();  // an error path: no new syncs, only the ones under way
  }
  to_sync_.notify_all();
  for (auto& t : threads_) t.join();
  for (auto& job : jobs_) {
    try {
      if (job->synced && job->error == 0) {
        publish(*job);
      } else {
        job->file = File();  // closes without reporting: the error that brought us here matters
        if (job->writing != job->path) remove_file(job->writing);
      }
    } catch (...) {
      // Left under its temporary name, which no reader takes for a data file.
    }
  }
}

void SyncQueue::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    to_sync_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;
    Job* job = waiting_.front();
    waiting_.pop_front();
    lock.unlock();
    const std::int64_t start = util::now_ns();
    int error = 0;
    {
      const InFlightCall in_flight(Op::fsync, job->writing, start);  // a hung mount is named
      if (::fdatasync(job->file.fd()) != 0) error = errno;
    }
    const std::int64_t end = util::now_ns();
    lock.lock();
    job->start_ns = start;
    job->end_ns = end;
    job->error = error;
    job->synced = true;
    synced_.notify_all();
  }
}

void SyncQueue::commit(File file, std::string writing, std::string path) {
  publish_ready(false);
  while (jobs_.size() >= 2 * static_cast<std::size_t>(threads_wanted_)) publish_ready(true);
  auto job = std::make_unique<Job>();
  job->file = std::move(file);
  job->writing = std::move(writing);
  job->path = std::move(path);
  {
    const std::lock_guard lock(mutex_);
    waiting_.push_back(job.get());
    jobs_.push_back(std::move(job));
    if (threads_.size() < threads_wanted_ && threads_.size() < jobs_.size())  // started as files come
      threads_.emplace_back([this] { work(); });
  }
  to_sync_.notify_one();
}

void SyncQueue::publish_ready(bool wait) {
  while (true) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      if (jobs_.empty()) return;
      if (wait) synced_.wait(lock, [&] { return jobs_.front()->synced; });
      if (!jobs_.front()->synced) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    wait = false;
    publish(*job);
  }
}

void SyncQueue::publish(Job& job) {
  if (job.error != 0) {
    const std::string call = fmt::format("fdatasync('{}') failed: {}", job.writing, std::strerror(job.error));
    job.file = File();
    remove_file(job.writing);  // not known to be on storage: rewritten when generation resumes
    throw io_error(call, hint_for_errno("fdatasync", job.error));
  }
  job.file.report_call(Op::fsync, job.start_ns, job.end_ns - job.start_ns);
  job.file.close();
  if (job.writing != job.path) rename_path(job.writing, job.path);
  folders_.insert(util::parent_of(job.path));
}

void SyncQueue::finish() {
  while (true) {
    {
      const std::lock_guard lock(mutex_);
      if (jobs_.empty()) break;
    }
    publish_ready(true);
  }
  for (const auto& folder : folders_) sync_folder(folder, SyncScope::folder_entries);
  folders_.clear();
}

}  // namespace trainio::storage
