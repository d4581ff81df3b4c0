#include "format/hdf5/hdf5_api.hpp"

#include <fmt/format.h>

#include "storage/hdf5_vfd.hpp"
#include "util/error.hpp"

namespace trainio::format::h5 {

namespace {

// The innermost message of HDF5's error stack: the most specific description of what failed.
herr_t keep_last(unsigned, const H5E_error2_t* e, void* out) {
  auto* text = static_cast<std::string*>(out);
  if (e->desc && *e->desc) *text = e->desc;
  return 0;
}

}  // namespace

std::vector<hsize_t> simple_extent(hid_t space, const std::string& path) {
  const int rank = H5Sget_simple_extent_ndims(space);
  check(rank, "H5Sget_simple_extent_ndims", path);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "H5Sget_simple_extent_dims", path);
  return dims;
}

void check(long long status, const char* call, const std::string& path) {
  if (status >= 0) return;
  if (auto storage = storage::take_driver_error()) {
    H5Eclear2(H5E_DEFAULT);
    throw *storage;
  }
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_last, &detail);
  H5Eclear2(H5E_DEFAULT);
  throw data_error(fmt::format("{} on '{}' failed{}{}", call, path, detail.empty() ? "" : ": ", detail),
                   "check that the file is a complete HDF5 file of this dataset (trainio validate)");
}

}  // namespace trainio::format::h5
