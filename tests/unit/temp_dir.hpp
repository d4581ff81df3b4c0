#pragma once
// A fresh, empty folder for one test, removed afterwards.

#include <cstdlib>
#include <filesystem>
#include <string>

#include <sys/vfs.h>
#include <unistd.h>

namespace trainio::test {

class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    const char* base = std::getenv("TRAINIO_TEST_TMP");
    std::filesystem::path root = base ? base : std::filesystem::temp_directory_path() / "trainio-tests";
    path_ = root / (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string operator/(const std::string& rel) const { return (path_ / rel).string(); }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path path_;
};

// Whether `path` is on a tmpfs, whose pages are the data: never evicted, always resident.
inline bool on_tmpfs(const std::string& path) {
  struct statfs s;
  return ::statfs(path.c_str(), &s) == 0 && s.f_type == 0x01021994;  // TMPFS_MAGIC
}

}  // namespace trainio::test
