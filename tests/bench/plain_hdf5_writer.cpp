// The plain HDF5 writer HDF5 generation is held against (issue 14): the least a client of
// libhdf5 can do to make the files `trainio generate` makes for `dataset.format: hdf5` with one
// dataset per record: create each file under a temporary name (H5Fcreate, latest format, the
// default sec2 driver), one uint8 dataset "records_0" of `samples` x the sample's shape written
// from a buffer filled before the clock starts, an int64 "labels" dataset of zeros, close,
// rename into place (trainio commits every data file so). Prints the wall-clock seconds. No
// content generation, no instrumentation, no trainio code: what libhdf5 itself costs per file
// is in both figures, so their ratio is trainio's own overhead. With `sync`, each file is made
// durable before its rename, as trainio's generation does (opened again and fdatasync'ed once
// libhdf5 closed it), and the folder fsynced at the end; one sync at a time (bench.py runs this
// on a tmpfs, where a sync costs a call, not a wait).
//
// Usage: trainio_plain_hdf5_writer FOLDER FILES SAMPLES SAMPLE_SHAPE [sync]   (SAMPLE_SHAPE: 362x362)

#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

bool write_file(const std::string& path, hid_t fapl, const std::vector<hsize_t>& dims,
                const std::vector<unsigned char>& data, const std::vector<long long>& labels) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl);
  if (file < 0) return false;
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t records = H5Dcreate2(file, "records_0", H5T_STD_U8LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = records >= 0 && H5Dwrite(records, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0;
  H5Dclose(records);
  H5Sclose(space);
  const hid_t label_space = H5Screate_simple(1, dims.data(), nullptr);
  const hid_t label_set = H5Dcreate2(file, "labels", H5T_STD_I64LE, label_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ok = ok && label_set >= 0 && H5Dwrite(label_set, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, labels.data()) >= 0;
  H5Dclose(label_set);
  H5Sclose(label_space);
  return H5Fclose(file) >= 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: %s FOLDER FILES SAMPLES SAMPLE_SHAPE (e.g. 362x362) [sync]\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  const long files = std::atol(argv[2]);
  const long long samples = std::atoll(argv[3]);
  const bool sync = argc > 5 && std::string(argv[5]) == "sync";
  if (files <= 0 || samples <= 0) {
    std::fprintf(stderr, "%s: FILES and SAMPLES must be positive numbers\n", argv[0]);
    return 2;
  }
  std::vector<hsize_t> dims{static_cast<hsize_t>(samples)};
  for (const char* p = argv[4];;) {
    char* end = nullptr;
    const unsigned long long d = std::strtoull(p, &end, 10);
    if (end == p || d == 0 || (*end != 'x' && *end != '\0')) {
      std::fprintf(stderr, "%s: SAMPLE_SHAPE '%s' is not positive numbers joined by x (e.g. 362x362)\n", argv[0], argv[4]);
      return 2;
    }
    dims.push_back(d);
    if (*end == '\0') break;
    p = end + 1;
  }
  hsize_t bytes = 1;
  for (const hsize_t d : dims) bytes *= d;
  std::vector<unsigned char> data(bytes);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  const std::vector<long long> labels(dims[0], 0);
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);  // one for every file, as trainio makes it
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  const auto start = std::chrono::steady_clock::now();
  for (long f = 0; f < files; ++f) {
    const std::string path = folder + "/plain_" + std::to_string(f) + ".hdf5";
    const std::string writing = folder + "/.plain_" + std::to_string(f) + ".hdf5.tmp";
    if (!write_file(writing, fapl, dims, data, labels)) {
      std::fprintf(stderr, "libhdf5 failed on %s\n", writing.c_str());
      return 1;
    }
    if (sync) {
      const int fd = ::open(writing.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::fdatasync(fd) != 0 || ::close(fd) != 0) {
        std::perror(writing.c_str());
        return 1;
      }
    }
    if (std::rename(writing.c_str(), path.c_str()) != 0) {
      std::perror("rename");
      return 1;
    }
  }
  if (sync) {
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0 || ::fsync(dir) != 0 || ::close(dir) != 0) {
      std::perror(folder.c_str());
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  H5Pclose(fapl);
  std::printf("%.6f\n", seconds);
  return 0;
}
