#pragma once
// Checked HDF5 calls: every identifier is owned (closed when it goes out of scope) and every
// failure becomes a trainio::Error naming the call and the file, with the storage error behind
// it when the trainio driver met one.

#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

namespace trainio::format::h5 {

// Throws for a negative HDF5 return value.
void check(long long status, const char* call, const std::string& path);

// The dimensions of a simple dataspace (H5Sget_simple_extent_ndims, then _dims), checked.
std::vector<hsize_t> simple_extent(hid_t space, const std::string& path);

class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer closer, const char* call, const std::string& path) : id_(id), closer_(closer) {
    check(id, call, path);
  }
  ~Id() {
    if (id_ >= 0 && closer_) closer_(id_);
  }
  Id(Id&& o) noexcept : id_(std::exchange(o.id_, -1)), closer_(o.closer_) {}
  Id& operator=(Id&& o) noexcept {
    if (this != &o) {
      if (id_ >= 0 && closer_) closer_(id_);
      id_ = std::exchange(o.id_, -1);
      closer_ = o.closer_;
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT: used as a plain hid_t in HDF5 calls
  // Gives up ownership (the caller closes the identifier).
  hid_t release() { return std::exchange(id_, -1); }
  // Closes now, reporting a failure (closing a file flushes it).
  void close(const char* call, const std::string& path) {
    if (id_ < 0) return;
    const hid_t id = std::exchange(id_, -1);
    check(closer_(id), call, path);
  }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

}  // namespace trainio::format::h5
