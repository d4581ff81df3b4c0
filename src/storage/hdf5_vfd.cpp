#include "storage/hdf5_vfd.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "storage/errno_hint.hpp"
#include "storage/file.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"

namespace trainio::storage {

namespace {

thread_local std::optional<Error> driver_error;
thread_local DriverRecording* recording = nullptr;

void note(DriverCall::Kind kind, H5FD_mem_t type = H5FD_MEM_DEFAULT, std::uint64_t offset = 0, std::uint64_t size = 0,
          bool exclusive = false, bool create = false) {
  if (recording) recording->calls.push_back({kind, type, exclusive, create, offset, size});
}

// Keeps the bytes of a metadata transfer (not raw data) in the recording.
void keep_metadata(H5FD_mem_t type, const void* bytes, std::size_t size) {
  if (!recording || type == H5FD_MEM_DRAW) return;
  const auto* first = static_cast<const unsigned char*>(bytes);
  recording->metadata.insert(recording->metadata.end(), first, first + size);
}

// HDF5 owns the H5FD_t at the start of this struct; the rest is ours.
struct DriverFile {
  H5FD_t pub;
  File file;
  haddr_t eoa = 0;
  haddr_t eof = 0;
  std::uint64_t device = 0, inode = 0;
  int fd = -1;  // for H5Fget_vfd_handle
};

DriverFile* self(H5FD_t* f) { return reinterpret_cast<DriverFile*>(f); }
const DriverFile* self(const H5FD_t* f) { return reinterpret_cast<const DriverFile*>(f); }

// Runs a storage step; a trainio error is kept for the caller of the HDF5 function.
template <typename F>
herr_t guarded(F&& step) {
  try {
    step();
    return 0;
  } catch (const Error& e) {
    driver_error = e;
  } catch (const std::exception& e) {
    driver_error = internal_error(e.what());
  }
  return -1;
}

H5FD_t* open_file(const char* name, unsigned flags, hid_t, haddr_t maxaddr) {
  auto* f = new (std::nothrow) DriverFile{};
  if (!f) return nullptr;
  const herr_t rc = guarded([&] {
    Access access = Access::read;
    if (flags & H5F_ACC_RDWR) access = (flags & H5F_ACC_CREAT) ? Access::read_write_new : Access::read_write;
    if ((flags & H5F_ACC_TRUNC) && !(flags & H5F_ACC_EXCL))
      throw usage_error(std::string("refusing to truncate '") + name + "' (trainio writes new files only)");
    const bool create = access == Access::read_write_new;
    if (!f->file.try_reopen(name, {.access = access, .close_on_exec = false})) {  // as sec2 opens
      note(DriverCall::Kind::open_missing);
      throw Error(ErrorKind::io, fmt::format("open('{}') failed: {}", name, std::strerror(ENOENT)),
                  hint_for_errno("open", ENOENT, name));
    }
    const auto st = f->file.stat();
    f->eof = st.size;
    f->device = st.device;
    f->inode = st.inode;
    f->fd = f->file.fd();
    note(DriverCall::Kind::open, H5FD_MEM_DEFAULT, 0, 0, false, create);
    if (recording) recording->file_size = st.size;
  });
  if (rc < 0) {
    delete f;
    return nullptr;
  }
  (void)maxaddr;
  return &f->pub;
}

herr_t close_file(H5FD_t* file) {
  DriverFile* f = self(file);
  const herr_t rc = guarded([&] {
    note(DriverCall::Kind::close);
    if (recording && recording->keep_file)
      recording->kept = std::move(f->file);
    else
      f->file.close();
  });
  delete f;
  return rc;
}

int compare(const H5FD_t* a, const H5FD_t* b) {
  const DriverFile* x = self(a);
  const DriverFile* y = self(b);
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  if (x->inode != y->inode) return x->inode < y->inode ? -1 : 1;
  return 0;
}

herr_t query(const H5FD_t*, unsigned long* flags) {
  // sec2's feature set (HDF5 1.10): the library's caching layers then act as they do for h5py.
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
           H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_POSIX_COMPAT_HANDLE | H5FD_FEAT_SUPPORTS_SWMR_IO |
           H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
  return 0;
}

haddr_t get_eoa(const H5FD_t* file, H5FD_mem_t) { return self(file)->eoa; }
herr_t set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  self(file)->eoa = addr;
  return 0;
}
haddr_t get_eof(const H5FD_t* file, H5FD_mem_t) { return self(file)->eof; }

herr_t get_handle(H5FD_t* file, hid_t, void** handle) {
  *handle = &self(file)->fd;
  return 0;
}

herr_t read(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, void* buffer) {
  DriverFile* f = self(file);
  note(DriverCall::Kind::read, type, addr, size);
  return guarded([&] {
    auto* out = static_cast<unsigned char*>(buffer);
    const auto* first = out;
    const std::size_t wanted = size;
    while (size > 0) {
      const std::size_t n = f->file.pread_some(out, size, addr);
      if (n == 0) {  // past the end of the file, inside the address space: zeros, as sec2
        std::memset(out, 0, size);
        break;
      }
      out += n;
      addr += n;
      size -= n;
    }
    keep_metadata(type, first, wanted);
  });
}

herr_t write(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, const void* buffer) {
  DriverFile* f = self(file);
  note(DriverCall::Kind::write, type, addr, size);
  return guarded([&] {
    f->file.pwrite_all(buffer, size, addr);
    if (addr + size > f->eof) f->eof = addr + size;
    keep_metadata(type, buffer, size);
  });
}

herr_t truncate(H5FD_t* file, hid_t, hbool_t) {
  DriverFile* f = self(file);
  if (f->eoa == f->eof) return 0;
  note(DriverCall::Kind::truncate, H5FD_MEM_DEFAULT, f->eoa);
  return guarded([&] {
    f->file.truncate(f->eoa);
    f->eof = f->eoa;
  });
}

herr_t lock(H5FD_t* file, hbool_t rw) {
  DriverFile* f = self(file);
  note(DriverCall::Kind::lock, H5FD_MEM_DEFAULT, 0, 0, rw != 0);
  return guarded([&] { lock_as_hdf5(f->file, rw != 0); });
}

herr_t unlock(H5FD_t* file) {
  note(DriverCall::Kind::unlock);
  return guarded([&] { self(file)->file.unlock(); });
}

H5FD_class_t make_class() {
  H5FD_class_t c{};
  c.name = "trainio";
  c.maxaddr = static_cast<haddr_t>(INT64_MAX);
  c.fc_degree = H5F_CLOSE_WEAK;
  c.open = open_file;
  c.close = close_file;
  c.cmp = compare;
  c.query = query;
  c.get_eoa = get_eoa;
  c.set_eoa = set_eoa;
  c.get_eof = get_eof;
  c.get_handle = get_handle;
  c.read = read;
  c.write = write;
  c.truncate = truncate;
  c.lock = lock;
  c.unlock = unlock;
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  std::memcpy(c.fl_map, map, sizeof map);
  return c;
}

hid_t driver_id() {
  static const H5FD_class_t cls = make_class();
  static const hid_t id = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as return codes, not prints
    return H5FDregister(&cls);
  }();
  return id;
}

}  // namespace

std::mutex& hdf5_lock() {
  static std::mutex m;
  return m;
}

hid_t trainio_fapl() {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_driver(fapl, driver_id(), nullptr) < 0) throw internal_error("HDF5 refused the trainio driver");
  return fapl;
}

void record_driver_calls(DriverRecording* r) { recording = r; }

void lock_as_hdf5(File& file, bool exclusive) {
  if (!file.try_lock(exclusive))
    throw io_error("'" + file.path() + "' is locked by another process (HDF5 file locking)",
                   "close the other program, or set HDF5_USE_FILE_LOCKING=FALSE");
}

void name_file_as_hdf5(const std::string& path) {
  if (!path.starts_with('/')) {
    char cwd[1024];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {}  // only the call matters: libhdf5 keeps the answer
  }
  const auto start = util::now_ns();
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    throw Error(ErrorKind::io, fmt::format("lstat('{}') failed: {}", path, std::strerror(errno)),
                "check the path; generate the dataset first with 'trainio generate' if it is missing");
  observe_path_op(Op::stat, path, start);
}

std::optional<Error> take_driver_error() {
  std::optional<Error> e;
  e.swap(driver_error);
  return e;
}

}  // namespace trainio::storage
