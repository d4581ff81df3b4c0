#pragma once
// What a reader thread keeps per file (an open descriptor, a memory map, a data address found
// once) for the files it used most recently: at most `capacity` of them, the least recently used
// dropped first (its handle closed by its destructor). Keyed by the file's dense number in the
// dataset (SampleRequest::file), so an entry costs no path string; lookups allocate nothing.
// Every reader that keeps things per file keeps them here.

#include <cstdint>
#include <list>
#include <unordered_map>
#include <utility>

namespace trainio::util {

template <typename Value>
class FileCache {
 public:
  explicit FileCache(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) { index_.reserve(capacity_); }
  FileCache(const FileCache&) = delete;
  FileCache& operator=(const FileCache&) = delete;

  // The value kept for `file`, now the most recently used; null when none is kept.
  Value* find(std::uint64_t file) {
    const auto it = index_.find(file);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.end(), entries_, it->second);
    return &it->second->second;
  }

  // Keeps `value` for `file` (replacing what was kept for it), dropping the least recently used
  // entry when the cache is full. Returns the kept value.
  Value& insert(std::uint64_t file, Value value) {
    if (Value* kept = find(file)) {
      *kept = std::move(value);
      return *kept;
    }
    if (index_.size() >= capacity_) {
      index_.erase(entries_.front().first);
      entries_.pop_front();
    }
    entries_.emplace_back(file, std::move(value));
    index_.emplace(file, std::prev(entries_.end()));
    return entries_.back().second;
  }

  // The value kept for `file`, made by `make()` when none is.
  template <typename Make>
  Value& get_or_insert(std::uint64_t file, Make make) {
    if (Value* kept = find(file)) return *kept;
    return insert(file, make());
  }

  void erase(std::uint64_t file) {
    if (const auto it = index_.find(file); it != index_.end()) {
      entries_.erase(it->second);
      index_.erase(it);
    }
  }

  void clear() {
    index_.clear();
    entries_.clear();
  }
  std::size_t size() const { return index_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  using Entries = std::list<std::pair<std::uint64_t, Value>>;
  std::size_t capacity_;
  Entries entries_;  // least recently used first
  std::unordered_map<std::uint64_t, typename Entries::iterator> index_;
};

}  // namespace trainio::util
