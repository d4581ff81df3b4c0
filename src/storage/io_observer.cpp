#include "storage/io_observer.hpp"

#include <utility>

#include "storage/fs.hpp"
#include "util/clock.hpp"
#include "util/fnv.hpp"
#include "util/paths.hpp"

namespace trainio::storage {

namespace {
thread_local IoObserver* current = nullptr;
std::vector<std::string> data_folders;  // written once, before any thread reads it
}  // namespace

const char* op_name(Op op) {
  static constexpr const char* kNames[kOpCount] = {"open",  "stat",  "read",  "write",  "seek",
                                                   "close", "fsync", "mkdir", "rename", "unlink",
                                                   "ioctl", "fcntl", "mmap",  "touch"};
  return kNames[static_cast<int>(op)];
}

void set_thread_observer(IoObserver* observer) { current = observer; }
IoObserver* thread_observer() { return current; }

void set_data_folders(std::vector<std::string> folders) {
  for (auto& f : folders) f = util::strip_trailing_slashes(f) + "/";
  data_folders = std::move(folders);
}

bool is_data_file(std::string_view path) {
  if (data_folders.empty()) return true;
  if (path.ends_with(".idx") || path.ends_with(".trainio-dataset.json")) return false;
  for (const auto& folder : data_folders)
    if (path.starts_with(folder)) return true;
  return false;
}

namespace {

// A file written under its temporary name "<dir>/.<name>.trainio-tmp" and renamed is one file
// to the user: it stands for "<dir>/<name>", given here in two pieces.
std::pair<std::string_view, std::string_view> identity(std::string_view path) {
  const auto slash = path.rfind('/') + 1;  // 0 when there is no slash
  if (path.ends_with(kTempSuffix) && path.size() > slash + 1 + kTempSuffix.size() && path[slash] == '.')
    return {path.substr(0, slash), path.substr(slash + 1, path.size() - slash - 1 - kTempSuffix.size())};
  return {path, {}};
}

}  // namespace

std::uint64_t path_hash(std::string_view path) {
  const auto [head, tail] = identity(path);
  const std::uint64_t h = util::fnv1a(util::fnv1a(util::kFnvOffset, head), tail);
  return h ? h : 1;
}

std::string hashed_path(std::string_view path) {
  const auto [head, tail] = identity(path);
  std::string out(head);
  out += tail;
  return out;
}

void observe_path_op(Op op, std::string_view path, std::int64_t start_ns, std::uint64_t bytes) {
  if (IoObserver* obs = thread_observer()) {
    OpEvent e;
    e.op = op;
    e.bytes = bytes;
    e.start_ns = start_ns;
    e.ns = util::now_ns() - start_ns;
    e.data = is_data_file(path);
    e.file = path_hash(path);
    e.path = path;
    obs->on_op(e);
  }
}

const char* request_name(Request r) {
  static constexpr const char* kNames[kRequestKinds] = {"GET", "PUT", "HEAD", "DELETE", "CreateMultipartUpload", "UploadPart",
                                                        "CompleteMultipartUpload", "AbortMultipartUpload", "HEAD bucket",
                                                        "ListMultipartUploads"};
  return kNames[static_cast<int>(r)];
}

}  // namespace trainio::storage
