#include <catch2/catch.hpp>

#include "config/load.hpp"
#include "unit/plan/npz_workload.hpp"
#include "plan/layout.hpp"

using namespace trainio;
using namespace trainio::plan;

TEST_CASE("file names follow DLIO: prefix, zero-padded index, _of_N, format extension") {
  const DatasetLayout l(test::npz_workload({"dataset.num_files_train=168", "dataset.data_folder=data/unet3d/"}));
  CHECK(l.root() == "data/unet3d");
  CHECK(l.file(Split::train, 0).path == "data/unet3d/train/img_000_of_168.npz");
  CHECK(l.file(Split::train, 167).relative == "train/img_167_of_168.npz");
  const DatasetLayout big(test::npz_workload({"dataset.num_files_train=1000", "dataset.file_prefix=part"}));
  CHECK(big.file(Split::train, 7).relative == "train/part_0007_of_1000.npz");
}

TEST_CASE("subfolders exist only when there are more than one, padded to their count") {
  const DatasetLayout l(test::npz_workload({"dataset.num_files_train=24", "dataset.num_subfolders_train=10",
                                            "dataset.num_files_eval=3", "dataset.num_subfolders_eval=1"}));
  CHECK(l.file(Split::train, 13).relative == "train/03/img_13_of_24.npz");
  CHECK(l.file(Split::eval, 2).relative == "valid/img_2_of_3.npz");
  const auto folders = l.folders();
  CHECK(folders.front() == "train");
  CHECK(folders.size() == 1 + 10 + 1);
}

TEST_CASE("storage_root prefixes the data folder unless it is absolute") {
  CHECK(DatasetLayout(test::npz_workload({"storage.storage_root=/mnt/fs", "dataset.data_folder=data/x"})).root() ==
        "/mnt/fs/data/x");
  CHECK(DatasetLayout(test::npz_workload({"storage.storage_root=/mnt/fs", "dataset.data_folder=/abs/x"})).root() ==
        "/abs/x");
}

TEST_CASE("path_into writes the same path as file() without allocating anew") {
  const DatasetLayout l(test::npz_workload({"dataset.num_files_train=100", "dataset.num_subfolders_train=4"}));
  std::string buf;
  for (std::uint64_t i = 0; i < 100; ++i) {
    l.path_into(Split::train, i, buf);
    CHECK(buf == l.file(Split::train, i).path);
  }
}

TEST_CASE("samples are d x d with d = floor(sqrt(record_length)), or record_dims") {
  const DatasetLayout l(test::npz_workload({"dataset.record_length_bytes=146600628"}));
  const auto s = l.sample_shape(Split::train, 0);
  REQUIRE(s.ndims == 2);
  CHECK(s.dims[0] == 12107);
  CHECK(s.dims[1] == 12107);
  CHECK(s.bytes() == 12107ull * 12107ull);
  const DatasetLayout d(test::npz_workload({"dataset.record_dims=[3,4,5]", "dataset.record_element_type=float32"}));
  CHECK(d.sample_shape(Split::train, 9).bytes() == 3 * 4 * 5 * 4);
  CHECK(d.sample_shape(Split::train, 9).ndims == 3);
}

TEST_CASE("with a stdev each file draws its size, seeded, whatever the rank count") {
  const auto w = test::npz_workload({"dataset.num_files_train=2000", "dataset.record_length_bytes=1048576",
                                     "dataset.record_length_bytes_stdev=262144"});
  const DatasetLayout a(w), b(w);
  double sum = 0, sq = 0;
  bool varies = false;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    const auto bytes = static_cast<double>(a.sample_shape(Split::train, i).bytes());
    CHECK(bytes == static_cast<double>(b.sample_shape(Split::train, i).bytes()));
    varies = varies || bytes != 1048576;
    sum += bytes;
    sq += bytes * bytes;
  }
  CHECK(varies);
  const double mean = sum / 2000, sd = std::sqrt(sq / 2000 - mean * mean);
  CHECK(mean == Approx(1048576).epsilon(0.03));
  // Two sides of stdev s/(2 sqrt(L)) each give a product spread of about s/sqrt(2) (as DLIO's).
  CHECK(sd == Approx(262144 / std::sqrt(2.0)).epsilon(0.1));
  // A huge stdev clamps each side to at least one element.
  const DatasetLayout tiny(
      test::npz_workload({"dataset.record_length_bytes=16", "dataset.record_length_bytes_stdev=1000"}));
  for (std::uint64_t i = 0; i < 50; ++i) CHECK(tiny.sample_shape(Split::train, i).bytes() >= 1);
}

TEST_CASE("generation order lists train files, then eval files") {
  const DatasetLayout l(test::npz_workload({"dataset.num_files_train=3", "dataset.num_files_eval=2"}));
  CHECK(l.total_files() == 5);
  CHECK(l.file_by_global_index(2).split == Split::train);
  CHECK(l.file_by_global_index(3).split == Split::eval);
  CHECK(l.file_by_global_index(4).index == 1);
}

TEST_CASE("pad_index pads to the digits of the count") {
  CHECK(pad_index(7, 168) == "007");
  CHECK(pad_index(7, 9) == "7");
  CHECK(pad_index(99, 100) == "099");
}

TEST_CASE("the nominal sample size comes from record_dims x element size when they are set (as DLIO)") {
  CHECK(DatasetLayout(test::npz_workload({"dataset.record_dims=[10,20]"})).nominal_record_bytes() == 200);
  CHECK(DatasetLayout(test::npz_workload({"dataset.record_dims=[10,20]", "dataset.record_length_bytes=4096"}))
            .nominal_record_bytes() == 200);
  CHECK(DatasetLayout(test::npz_workload({"dataset.record_dims=[10,20]", "dataset.record_element_type=float32"}))
            .nominal_record_bytes() == 800);
  // Without record_dims, record_length_bytes as given (DLIO's MB/s uses it, not the d x d sample).
  CHECK(DatasetLayout(test::npz_workload({"dataset.record_length_bytes=114660.07"})).nominal_record_bytes() ==
        114660.07);
}
