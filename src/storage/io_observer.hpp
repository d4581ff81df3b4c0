#pragma once
// How the storage layer reports what it did. Every call through storage::File (and the few other
// storage paths) is timed and handed to the calling thread's observer (if any), which the engine
// installs and the metrics layer implements. One virtual call per storage call: cheap next to a
// system call.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainio::storage {

// mmap counts mapping a file; touch counts reading mapped pages (page faults do the I/O).
enum class Op : std::uint8_t { open, stat, read, write, seek, close, fsync, mkdir, rename, unlink, ioctl, fcntl, mmap, touch };
inline constexpr int kOpCount = 14;
const char* op_name(Op op);
// Reads and writes move data; every other call is metadata (Darshan's split of time).
inline bool moves_data(Op op) { return op == Op::read || op == Op::write || op == Op::touch; }

// One storage call.
struct OpEvent {
  Op op = Op::open;
  std::uint64_t bytes = 0;      // bytes moved (reads, writes, touches)
  std::int64_t start_ns = 0;    // when the call began (util::now_ns)
  std::int64_t ns = 0;          // how long it took
  std::uint64_t offset = 0;     // where a read or write began in the file
  bool has_offset = false;
  // Darshan's access pattern, per open file: a read or write that starts beyond where the
  // previous one ended is sequential; exactly where it ended, consecutive (and sequential).
  bool sequential = false;
  bool consecutive = false;
  bool data = true;             // on a data file (dataset, checkpoint), not an index or marker
  std::uint64_t file = 0;       // hash of the file's path; 0 for calls on no file
  std::string_view path;        // the path as the call named it; valid during on_op() only
  // Reads only: the page-cache residency of the read's pages, probed before it on a sample of
  // reads (storage/page_residency.hpp), and whether it bypassed the cache (O_DIRECT).
  std::uint32_t probed_pages = 0;      // 0: not probed
  std::uint32_t resident_pages = 0;    // of them, resident before the read
  std::uint32_t stayed_out_pages = 0;  // of the others, still not resident after it
  std::int32_t probe_error = 0;        // errno of a probe that failed
  bool direct = false;
  bool remote = false;  // a request to an object store (S3): no page cache of this machine involved
};

// A request to an object store (storage/s3/s3_client.hpp), as its client saw it: retries included.
// Each is also reported as the storage call it stands for (OpEvent, marked remote).
enum class Request : std::uint8_t {
  get, put, head, delete_object, create_upload, upload_part, complete_upload, abort_upload, head_bucket, list_uploads
};
inline constexpr int kRequestKinds = 10;
const char* request_name(Request r);

struct RequestEvent {
  Request kind = Request::get;
  int status = 0;                  // the last HTTP status (0: no answer)
  int attempts = 1;
  std::uint64_t bytes = 0;         // body bytes sent or received
  std::int64_t start_ns = 0;
  std::int64_t first_byte_ns = 0;  // time to the first byte of the answer, of the last attempt
  std::int64_t total_ns = 0;       // all attempts and the waits between them
  std::uint16_t endpoint = 0;      // which of the workload's endpoints (storage_options.endpoint_url) it went to
  // The status of each try that was retried (0: no answer), in order; tries past the eighth
  // count as the eighth.
  static constexpr int kRetriesKept = 8;
  std::uint16_t retried_status[kRetriesKept] = {};
  void note_retry(int status) {
    retried_status[std::min(attempts, kRetriesKept) - 1] = static_cast<std::uint16_t>(status > 0 && status < 600 ? status : 0);
  }
};

class IoObserver {
 public:
  virtual ~IoObserver() = default;
  virtual void on_op(const OpEvent& e) = 0;
  virtual void on_request(const RequestEvent&) {}
};

// The observer for storage calls made by the current thread; nullptr records nothing.
void set_thread_observer(IoObserver* observer);
IoObserver* thread_observer();

// Installs an observer for the lifetime of a scope.
class ScopedObserver {
 public:
  explicit ScopedObserver(IoObserver* observer) : previous_(thread_observer()) {
    set_thread_observer(observer);
  }
  ~ScopedObserver() { set_thread_observer(previous_); }
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  IoObserver* previous_;
};

// Which files hold data: those under these folders (the dataset's, the checkpoints'), except
// indexes (*.idx) and trainio's marker. Set once before any reader or writer starts; with no
// folders set every file counts as data.
void set_data_folders(std::vector<std::string> folders);
bool is_data_file(std::string_view path);
// A file's identity in the characterization; a temporary name hashes as the file it becomes.
std::uint64_t path_hash(std::string_view path);
// The path that path_hash() stands for: a temporary name's final name, any other path itself.
std::string hashed_path(std::string_view path);

// Reports a call on a path (no open file) to the thread's observer; `bytes` for transfers made
// by a library on its own descriptors (MPI-IO).
void observe_path_op(Op op, std::string_view path, std::int64_t start_ns, std::uint64_t bytes = 0);

}  // namespace trainio::storage
