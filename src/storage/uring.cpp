#include "storage/uring.hpp"

#include <fmt/format.h>
#include <liburing.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "storage/file.hpp"
#include "storage/in_flight.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::storage {

struct Uring::Ring {
  io_uring ring{};
  std::vector<std::int64_t> started;  // when each read was (last) submitted
  std::vector<ProbeTicket> probes;
  std::vector<unsigned> free_slots;  // shared buffers not in use
  std::vector<unsigned> slot_of;     // each read's shared buffer, while in flight
};

Uring::Uring(unsigned depth) : ring_(std::make_unique<Ring>()), depth_(depth) {}

void Uring::set_up() {
  // One thread submits and reaps: completions can wait until it asks for them (no task-work
  // interrupts), where the kernel has these flags (6.1+).
  io_uring_params params{};
  params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  int rc = io_uring_queue_init_params(depth_, &ring_->ring, &params);
  if (rc == -EINVAL) rc = io_uring_queue_init(depth_, &ring_->ring, 0);
  if (rc < 0)
    throw io_error(fmt::format("io_uring_queue_init({}) failed: {}", depth_, std::strerror(-rc)),
                   "this kernel or container does not allow io_uring: use reader.io_engine=posix");
  ready_ = true;
}

Uring::~Uring() {
  if (ready_) io_uring_queue_exit(&ring_->ring);
}

namespace {

// How long the kernel may refuse a submission (EAGAIN, EBUSY: short of memory, or its completion
// queue full) while none of this ring's reads is with it to make room, before the read fails.
constexpr std::int64_t kRefusalLimitNs = 2'000'000'000;

bool refusal(int rc) { return rc == -EAGAIN || rc == -EBUSY || rc == -EINTR; }

}  // namespace

void Uring::read_all(std::span<AsyncRead> reads, char* slots, std::size_t slot_bytes) {
  if (!ready_) set_up();
  io_uring* ring = &ring_->ring;
  // Reused from batch to batch: the hot path allocates nothing once the batch size is reached.
  std::vector<std::int64_t>& started = ring_->started;
  std::vector<ProbeTicket>& probes = ring_->probes;  // page-cache residency, taken before the first submission
  started.assign(reads.size(), 0);
  probes.assign(reads.size(), ProbeTicket{});
  std::vector<unsigned>& free_slots = ring_->free_slots;
  std::vector<unsigned>& slot_of = ring_->slot_of;
  free_slots.clear();
  for (unsigned s = depth_; s > 0; --s) free_slots.push_back(s - 1);
  slot_of.assign(reads.size(), 0);
  // in_flight: reads prepared and not complete, including those the kernel has not taken yet
  // (io_uring_sq_ready): only the taken ones can complete, so only they are waited for.
  std::size_t next = 0, in_flight = 0, finished = 0, oldest = 0;
  std::size_t last = 0;  // the read submitted last, named when a submission fails
  std::string failure;
  std::string hint;
  // Submitted one by one, as fio does: on virtualised disks a burst of submissions is served as a
  // burst, and the queue then drains before it refills (measured: 60k against 75k IOPS). With
  // DEFER_TASKRUN the same call posts the completions that have arrived. The call is watched by
  // the stall watchdog: a submission can block in the kernel (a buffered read completes inline).
  auto hand_over = [&]() -> int {
    int rc;
    do {
      const InFlightCall watched(Op::read, reads[last].file->path(), started[last]);
      rc = io_uring_submit_and_get_events(ring);
    } while (rc == -EINTR);
    if (rc < 0 && !refusal(rc) && failure.empty()) {
      failure = fmt::format("io_uring_submit_and_get_events for the read of '{}' failed: {}", reads[last].file->path(),
                            std::strerror(-rc));
      hint = "this kernel does not take the read through io_uring: use reader.io_engine=posix";
    }
    return rc;
  };
  auto submit = [&](std::size_t i) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    if (!sqe) throw internal_error("io_uring: no free submission entry below the ring's depth");
    AsyncRead& r = reads[i];
    if (r.buffer == nullptr) {  // a shared buffer, held until the read is complete
      if (slots == nullptr || r.length > slot_bytes) throw internal_error("io_uring: a read without a buffer that fits");
      slot_of[i] = free_slots.back();
      free_slots.pop_back();
      r.buffer = slots + slot_of[i] * slot_bytes;
    }
    if (r.done == 0) probes[i] = r.file->probe_before(r.offset, r.length);
    io_uring_prep_read(sqe, r.file->fd(), r.buffer + r.done, static_cast<unsigned>(r.length - r.done), r.offset + r.done);
    io_uring_sqe_set_data64(sqe, i);
    started[i] = util::now_ns();
    last = i;
    ++in_flight;
    hand_over();
  };
  // On a failed read, stop submitting but reap what is in flight before throwing: the kernel
  // must not write into buffers after their owner has moved on.
  auto release = [&](std::size_t i) {
    if (slots != nullptr && reads[i].buffer == slots + slot_of[i] * slot_bytes) {
      free_slots.push_back(slot_of[i]);
      reads[i].buffer = nullptr;
    }
  };
  std::int64_t refused_since = 0;
  while (true) {
    while (failure.empty() && next < reads.size() && in_flight < depth_) submit(next++);
    std::size_t queued = io_uring_sq_ready(ring);
    if (queued > 0 && failure.empty()) {
      hand_over();  // the kernel refused them before: try again
      queued = io_uring_sq_ready(ring);
    }
    const std::size_t taken = in_flight - queued;
    if (taken == 0) {
      if (queued == 0 || !failure.empty()) break;  // all done, or failed with nothing left to reap
      // Refused, and no read of ours with the kernel whose completion would make room: back off.
      const std::int64_t now = util::now_ns();
      if (refused_since == 0) refused_since = now;
      if (now - refused_since > kRefusalLimitNs) {
        failure = fmt::format("io_uring refused to take the read of '{}' for {:.0f} s: {}", reads[last].file->path(),
                              static_cast<double>(now - refused_since) * 1e-9, std::strerror(EAGAIN));
        hint = "the kernel is short of memory for io_uring: free memory on the node, or use reader.io_engine=posix";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    refused_since = 0;
    io_uring_cqe* cqe = nullptr;
    int rc;
    {
      // The read waited for longest stands for the wait (reads are taken in order, mostly
      // complete in order): the stall watchdog names it if nothing completes.
      // Reads are submitted in index order: one below `next` that is not started has left flight.
      while (oldest < next && started[oldest] == 0) ++oldest;
      const std::size_t named = oldest < next ? oldest : last;
      const InFlightCall watched(Op::read, reads[named].file->path(), started[named]);
      rc = io_uring_wait_cqe(ring, &cqe);
    }
    if (rc < 0 && rc != -EINTR) throw io_error(fmt::format("io_uring_wait_cqe failed: {}", std::strerror(-rc)));
    // Reap everything that has completed.
    unsigned head = 0, count = 0;
    io_uring_for_each_cqe(ring, head, cqe) {
      ++count;
      const auto i = static_cast<std::size_t>(io_uring_cqe_get_data64(cqe));
      AsyncRead& r = reads[i];
      --in_flight;
      if (cqe->res < 0) {
        if (failure.empty())
          failure = fmt::format("read('{}', {} bytes at {}) failed: {}", r.file->path(),
                                r.length - r.done, r.offset + r.done, std::strerror(-cqe->res));
        started[i] = 0;
        release(i);
        continue;
      }
      r.file->report_transfer(Op::read, static_cast<std::uint64_t>(cqe->res), r.offset + r.done, started[i], probes[i]);
      probes[i] = {};  // a short read's continuation is not probed again
      r.done += static_cast<std::size_t>(cqe->res);
      if (cqe->res == 0 || r.done == r.length) {
        ++finished;
        started[i] = 0;
        release(i);
      } else if (failure.empty()) {
        submit(i);  // a short read: continue from where it stopped, into the same buffer
      } else {
        started[i] = 0;
        release(i);
      }
    }
    io_uring_cq_advance(ring, count);
  }
  if (io_uring_sq_ready(ring) > 0) {
    // Entries the kernel never took would go with the next batch's first submission, into
    // buffers nobody owns any more: a new ring for the next batch.
    io_uring_queue_exit(ring);
    ready_ = false;
  }
  if (!failure.empty())
    throw io_error(failure, hint);
}

}  // namespace trainio::storage
