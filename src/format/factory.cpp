#include <fmt/format.h>

#include "format/tabular/csv.hpp"
#include "format/format.hpp"
#include "format/hdf5/hdf5_file.hpp"
#include "format/image/image.hpp"
#include "format/indexed/indexed_binary.hpp"
#include "format/indexed/indexed_readers.hpp"
#include "format/memory_reader.hpp"
#include "format/session_reader.hpp"
#include "format/native_reader.hpp"
#include "format/numpy/npy_file.hpp"
#include "format/numpy/npz.hpp"
#include "format/parquet/reader.hpp"
#include "format/parquet/validate.hpp"
#include "format/parquet/writer.hpp"
#include "format/s3_object_reader.hpp"
#include "format/synthetic.hpp"
#include "storage/s3/s3_endpoint.hpp"
#include "format/archive/tar.hpp"
#include "format/tfrecord/tfrecord.hpp"
#include "format/tfrecord/tfrecord_python.hpp"
#include "util/error.hpp"

namespace trainio::format {

using config::Format;

namespace {

storage::EngineKind engine_kind(config::IoEngine e) {
  switch (e) {
    case config::IoEngine::posix: return storage::EngineKind::posix;
    case config::IoEngine::mmap: return storage::EngineKind::mmap;
    case config::IoEngine::io_uring: return storage::EngineKind::io_uring;
  }
  return storage::EngineKind::posix;
}

storage::EngineOptions engine_options(const config::Workload& w) {
  return {.kind = engine_kind(w.reader.io_engine),
          .direct = w.reader.odirect,
          .keep_open = w.reader.read_type == config::ReadType::memory,
          .depth = static_cast<unsigned>(w.reader.io_depth)};
}

Error not_built(Format f, const char* what) {
  return config_error(fmt::format("{} dataset.format '{}' is not built into trainio yet", what, config::to_string(f)),
                      "use npz, npy, tfrecord, csv, jpeg, png, indexed_binary, tar, parquet or synthetic for now");
}

}  // namespace

std::unique_ptr<FileWriter> make_writer(const config::Workload& w) {
  const auto& d = w.dataset;
  switch (d.format) {
    case Format::npz:
      return std::make_unique<NpzWriter>(d.compression == config::Compression::zip ? static_cast<int>(d.compression_level) : -1);
    case Format::npy: return std::make_unique<NpyWriter>();
    case Format::tfrecord: return std::make_unique<TfRecordWriter>();
    case Format::csv: return std::make_unique<CsvWriter>();
    case Format::jpeg: return std::make_unique<ImageWriter>(ImageWriter::Codec::jpeg);
    case Format::png: return std::make_unique<ImageWriter>(ImageWriter::Codec::png);
    case Format::indexed_binary:
    case Format::mmap_indexed_binary: return std::make_unique<IndexedBinaryWriter>();
    case Format::tar: return std::make_unique<TarWriter>();
    case Format::hdf5: return std::make_unique<Hdf5Writer>(Hdf5Settings(w));
    case Format::parquet: return std::make_unique<parquet::Writer>(w);
    case Format::synthetic: break;
  }
  throw not_built(d.format, "writing");
}

std::unique_ptr<SampleReader> make_reader(const config::Workload& w, ReaderUse use) {
  // DLIO's synthetic loader hands out batches without reading anything.
  if (w.dataset.format == Format::synthetic || w.reader.data_loader == config::DataLoader::synthetic)
    return std::make_unique<SyntheticReader>();
  // A native loader's reads: one read per sample; DLIO's O_DIRECT readers read whole files.
  if (w.reader.access == config::Access::sample) return std::make_unique<NativeReader>(engine_options(w), sample_extents(w));
  if (w.reader.odirect) return std::make_unique<NativeReader>(engine_options(w), whole_file_extents());
  // In a file session the handle-keeping readers (HDF5, indexed_binary) keep their files open;
  // DLIO closes them every samples_per_file samples, which only moves the close.
  const bool memory = w.reader.read_type == config::ReadType::memory || use == ReaderUse::by_file_session;
  auto loaded_once = [&](std::unique_ptr<SampleReader> r) -> std::unique_ptr<SampleReader> {
    if (use == ReaderUse::by_file_session) return std::make_unique<SessionReader>(std::move(r));
    return w.reader.read_type == config::ReadType::memory ? std::make_unique<MemoryReader>(std::move(r)) : std::move(r);
  };
  if (w.storage.storage_type == config::StorageType::s3) {
    // The fork's ParquetReaderS3Iterable: ranged GETs of footers and row groups.
    if (w.dataset.format == Format::parquet) return std::make_unique<parquet::Reader>(w);
    // config::validate allows npz, npy and parquet only: what DLIO and the fork read from S3.
    const std::string_view magic = w.dataset.format == Format::npz ? std::string_view("PK\x03\x04", 4) : std::string_view("\x93NUMPY", 6);
    return loaded_once(std::make_unique<S3ObjectReader>(storage::s3::endpoint_of(w.storage.storage_options), magic, storage::s3::kPartBytes, storage::s3::kPartsInFlight));
  }
  const std::size_t buffer = w.reader.python_buffer_size;
  switch (w.dataset.format) {
    case Format::npz: return loaded_once(std::make_unique<NpzReader>(buffer));
    case Format::npy: return loaded_once(std::make_unique<NpyReader>(buffer));
    // PyTorch reads TFRecord through Python's file object; DALI (and native_dali) by the index.
    case Format::tfrecord:
      if (w.reader.data_loader == config::DataLoader::pytorch) return std::make_unique<PythonTfRecordReader>(buffer, memory);
      return std::make_unique<DaliTfRecordReader>();
    case Format::tar: return std::make_unique<TarSampleReader>();
    case Format::synthetic: return std::make_unique<SyntheticReader>();
    case Format::hdf5: return std::make_unique<Hdf5Reader>(Hdf5Settings(w), memory, w.reader.read_threads);
    case Format::csv: return loaded_once(std::make_unique<CsvReader>());
    case Format::jpeg: return loaded_once(std::make_unique<ImageReader>(ImageWriter::Codec::jpeg));
    case Format::png: return loaded_once(std::make_unique<ImageReader>(ImageWriter::Codec::png));
    case Format::indexed_binary: return std::make_unique<IndexedBinaryReader>(memory);
    case Format::mmap_indexed_binary: return std::make_unique<MmapIndexedBinaryReader>();
    // The fork's Parquet readers keep footers and row groups read per epoch themselves.
    case Format::parquet: return std::make_unique<parquet::Reader>(w);
  }
  throw internal_error("a format without a reader");
}

void check_workload(const config::Workload& w, const plan::DatasetLayout& layout) {
  if (w.dataset.format == Format::hdf5 && layout.total_files() > 0) hdf5_layout(w, layout.file_by_global_index(0));
  if (w.dataset.format == Format::jpeg) check_image_sizes(ImageWriter::Codec::jpeg, layout);
  if (w.dataset.format == Format::png) check_image_sizes(ImageWriter::Codec::png, layout);
}

std::optional<std::string> validate_file(const config::Workload& w, const plan::DataFile& file) {
  switch (w.dataset.format) {
    case Format::npz: return validate_npz(file);
    case Format::npy: return validate_npy(file);
    case Format::tfrecord: return validate_tfrecord(file);
    case Format::csv: return validate_csv(file);
    case Format::jpeg: return validate_image(file, ImageWriter::Codec::jpeg);
    case Format::png: return validate_image(file, ImageWriter::Codec::png);
    case Format::indexed_binary:
    case Format::mmap_indexed_binary: return validate_indexed_binary(file);
    case Format::tar: return validate_tar(file);
    case Format::synthetic: return std::nullopt;
    case Format::hdf5: return validate_hdf5(Hdf5Settings(w), file);
    case Format::parquet: return parquet::validate_file(w, file);
  }
  throw not_built(w.dataset.format, "validating");
}

}  // namespace trainio::format
