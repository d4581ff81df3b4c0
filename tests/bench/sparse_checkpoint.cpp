// A checkpoint of any size that costs no disk: every file of one save laid out as trainio writes it
// (local headers, data descriptors, data.pkl, version, central directory and end records at their
// offsets, the file's full length), with the tensors' bytes left as holes, which read as zeros.
// trainio's load checks sizes, magic numbers and headers, not CRCs or tensor bytes, so it loads
// these as it loads a real save (the CRCs in them are 0). For start-up benches of 100 GiB-shaped
// plans (tests/bench/startup.py) on a machine without 100 GiB to spare.
//
// Usage: trainio_sparse_checkpoint WORKLOAD RANKS FOLDER [key=value ...]
// Writes FOLDER/global_epoch1_step1/<file> for every rank's files; prints files and apparent bytes.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "format/torch/torch_file.hpp"
#include "plan/checkpoint_plan.hpp"

using namespace trainio;

namespace {

void put(int fd, const std::string& bytes, std::uint64_t at) {
  if (bytes.empty()) return;
  if (pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)) != static_cast<ssize_t>(bytes.size())) {
    std::perror("pwrite");
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s WORKLOAD RANKS FOLDER [key=value ...]\n", argv[0]);
    return 2;
  }
  const std::vector<std::string> overrides(argv + 4, argv + argc);
  const config::Workload w = config::load(argv[1], overrides);
  const int ranks = std::atoi(argv[2]);
  const std::string dir = std::string(argv[3]) + "/global_epoch1_step1";
  mkdir(argv[3], 0755);
  mkdir(dir.c_str(), 0755);
  const plan::CheckpointPlan plan(w, ranks);
  std::uint64_t files = 0, bytes = 0;
  for (int r = 0; r < ranks; ++r)
    for (const auto& f : plan.files_of(r)) {
      const format::torch::Archive a(f.state);
      const std::string path = dir + "/" + f.name;
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) {
        std::perror(path.c_str());
        return 1;
      }
      const auto& records = a.records();
      for (std::size_t i = 0; i < records.size(); ++i) {
        const auto& rec = records[i];
        put(fd, rec.local_header, rec.header_offset);
        if (i == 0) put(fd, a.pickle(), rec.data_offset);                // data.pkl
        if (i + 1 == records.size()) put(fd, "3\n", rec.data_offset);     // version
        put(fd, a.descriptor(i, 0), rec.data_offset + rec.size);
      }
      put(fd, a.trailer(std::vector<std::uint32_t>(records.size(), 0)), a.central_directory_offset());
      if (ftruncate(fd, static_cast<off_t>(a.file_size())) != 0) {
        std::perror("ftruncate");
        return 1;
      }
      ::close(fd);
      ++files;
      bytes += a.file_size();
    }
  std::printf("%llu files, %llu bytes\n", static_cast<unsigned long long>(files), static_cast<unsigned long long>(bytes));
  return 0;
}
