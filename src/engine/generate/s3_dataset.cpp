#include "engine/generate/s3_dataset.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/content.hpp"
#include "engine/generate/dataset_marker.hpp"
#include "engine/overlap_thread.hpp"
#include "engine/together.hpp"
#include "plan/fingerprint.hpp"
#include "plan/generation.hpp"
#include "storage/io_observer.hpp"
#include "storage/s3/s3_endpoint.hpp"
#include "storage/s3/s3_upload.hpp"
#include "util/paths.hpp"

namespace trainio::engine {

namespace {

namespace s3 = storage::s3;

s3::ObjectPath marker_object(const plan::DatasetLayout& layout) {
  return s3::parse_object_path(util::join(layout.root(), kMarkerName));
}

// What the marker object says about the dataset under the root (missing: no marker).
DataFolder inspect(s3::Client& client, const plan::DatasetLayout& layout) {
  const s3::ObjectPath marker = marker_object(layout);
  client.check_bucket(marker.bucket);  // a missing bucket or wrong credentials say so here, once
  const auto size = client.size_of(marker.bucket, marker.key);
  if (!size) return {};
  std::string text(*size, '\0');
  client.get(marker.bucket, marker.key, {text.data(), text.size()});
  return marked_folder(text);
}

void put_marker(s3::Client& client, const plan::DatasetLayout& layout, const plan::Fingerprint& fp, bool complete) {
  const s3::ObjectPath marker = marker_object(layout);
  const std::string text = marker_text(fp, complete);
  client.put(marker.bucket, marker.key, {text.data(), text.size()});
}

// An object is kept when the dataset is this workload's and the object has the file's size.
bool complete_already(s3::Client& client, const format::FileWriter& writer, const plan::DataFile& file, bool trusted) {
  if (!trusted) return false;
  const s3::ObjectPath object = s3::parse_object_path(file.path);
  const auto size = client.size_of(object.bucket, object.key);
  const auto expected = writer.expected_size(file);
  return size && (!expected || *size == *expected);
}

}  // namespace

metrics::GenerateRecord generate_s3_dataset(const config::Workload& w, const plan::DatasetLayout& layout,
                                            const mpi::Comm& comm, const GenerateOptions& options) {
  metrics::GenerateRecord record;
  record.ran = true;
  const s3::Endpoint endpoint = s3::endpoint_of(w.storage.storage_options);
  const plan::Fingerprint fp = plan::dataset_fingerprint(w);
  std::int64_t trusted = 0;
  together(comm, [&] {
    if (!comm.is_root()) return;
    s3::Client client(endpoint);
    const DataFolder folder = inspect(client, layout);
    trusted = folder.state == DataFolder::State::trainio && !plan::first_difference(folder.fingerprint, fp);
    if (folder.state == DataFolder::State::trainio && !trusted)
      spdlog::info("the dataset in '{}' was generated for different settings: every object is written again", layout.root());
    put_marker(client, layout, fp, false);
  });
  trusted = comm.broadcast(trusted);

  s3::Client client(endpoint);
  OverlapThread beside;
  const auto writer = format::make_writer(w);
  writer->generate_beside(&beside);
  generate_files(layout, plan::FileShare(layout, comm.rank(), comm.size()), comm, options, record,
                 [&](const plan::DataFile& file) { return complete_already(client, *writer, file, trusted != 0); },
                 [&](const plan::DataFile& file) {
                   const s3::ObjectPath object = s3::parse_object_path(file.path);
                   // The object's size, when the format knows it, sets the part size (S3's 10,000 parts).
                   s3::Upload out(client, object.bucket, object.key, s3::kPartBytes, s3::Upload::Parts::always_multipart,
                                  s3::kPartsInFlight, writer->expected_size(file).value_or(0));
                   writer->write(file, out, *file_content(w, file));
                   out.commit();
                 });
  // Every rank's objects are complete (CompleteMultipartUpload answered) before the marker says so.
  together(comm, [&] {
    if (!comm.is_root()) return;
    s3::Client client(endpoint);
    put_marker(client, layout, fp, true);
  });
  return record;
}

void check_s3_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm) {
  together(comm, [&] {
    if (!comm.is_root()) return;
    s3::Client client(s3::endpoint_of(w.storage.storage_options));
    const DataFolder folder = inspect(client, layout);
    // Without listing the bucket, a prefix without trainio's marker is taken as holding no dataset.
    require_dataset(w, layout.root(), folder.state == DataFolder::State::trainio ? folder : DataFolder{});
  });
}

void remove_s3_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm) {
  const s3::Endpoint endpoint = s3::endpoint_of(w.storage.storage_options);
  std::int64_t ours = 0;
  together(comm, [&] {
    if (!comm.is_root()) return;
    s3::Client client(endpoint);
    ours = inspect(client, layout).state == DataFolder::State::trainio;
  });
  if (!comm.broadcast(ours)) {
    if (comm.is_root()) spdlog::warn("keep_files is false, but '{}' holds no trainio dataset: left in place", layout.root());
    return;
  }
  together(comm, [&] {
    s3::Client client(endpoint);
    const plan::FileShare mine(layout, comm.rank(), comm.size());
    for (std::uint64_t i = 0; i < mine.size(); ++i) {
      const s3::ObjectPath object = s3::parse_object_path(layout.file_by_global_index(mine[i]).path);
      client.remove(object.bucket, object.key);
    }
  });
  together(comm, [&] {
    if (!comm.is_root()) return;
    s3::Client client(endpoint);
    const s3::ObjectPath marker = marker_object(layout);
    client.remove(marker.bucket, marker.key);
  });
}

}  // namespace trainio::engine
