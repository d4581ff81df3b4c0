#include "config/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

#include "config/sizes.hpp"
#include "util/paths.hpp"
#include "util/error.hpp"
#include "util/redact.hpp"

namespace trainio::config {

void require(bool ok, const std::string& message, const std::string& hint) {
  if (!ok) throw config_error(message, hint);
}

namespace {

// A name that becomes part of a path inside a configured folder: a '/' or '..' would put files
// (or deletions, with keep_files: false) outside that folder.
void require_plain_name(const std::string& key, const std::string& name, const std::string& inside) {
  const bool plain = !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
                     name.find('\0') == std::string::npos;
  require(plain, fmt::format("{} '{}' is not a plain file name: files must stay inside {}", key, name, inside),
          fmt::format("give {} a name without '/' (and not '.' or '..'); to move the files, set {} instead", key,
                      key == "output.log_file" ? "output.folder or --output" : "dataset.data_folder"));
}

// S3's rules for bucket names (3 to 63 lowercase letters, digits, dots and hyphens, beginning and
// ending with a letter or digit, no "..", not an IPv4 address): what breaks one is refused here,
// not found by a request that fails and suggests creating the bucket.
std::optional<std::string> bucket_problem(const std::string& bucket) {
  if (bucket.empty()) return "the URI has no bucket name";
  const auto bad_char = std::find_if(bucket.begin(), bucket.end(), [](char c) {
    return !(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-');
  });
  const auto alnum = [](char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)); };
  int dots = 0;
  bool ip_like = true;
  for (const char c : bucket) {
    dots += c == '.';
    ip_like = ip_like && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
  }
  const bool valid = bucket.size() >= 3 && bucket.size() <= 63 && bad_char == bucket.end() && alnum(bucket.front()) &&
                     alnum(bucket.back()) && bucket.find("..") == std::string::npos && !(ip_like && dots == 3);
  if (valid) return std::nullopt;
  return fmt::format("'{}' is not a valid S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens, beginning "
                     "and ending with a letter or digit, not an IP address)",
                     bucket);
}

void require_s3_uri(const std::string& key, const std::string& uri) {
  std::string_view rest(uri);
  rest.remove_prefix(std::string_view("s3://").size());
  const std::string bucket(rest.substr(0, rest.find('/')));
  if (const auto problem = bucket_problem(bucket))
    throw config_error(fmt::format("{} '{}': {}", key, uri, *problem),
                       fmt::format("write it as {}=s3://<bucket>/<prefix>, with the bucket's name", key));
}

}  // namespace

// DLIO's rules for storage_type: s3 (its config validation), and what trainio's S3 back end does
// not do yet.
void validate_s3(const Workload& w, bool uses_data) {
  const auto& d = w.dataset;
  const auto& r = w.reader;
  // A checkpoint-only run reads no dataset: its data_folder is not looked at (DLIO would want a
  // dummy s3:// one).
  if (uses_data || d.data_folder.starts_with("s3://")) {
    require(d.data_folder.starts_with("s3://") && d.data_folder.size() > 5,
            fmt::format("storage.storage_type is s3, but dataset.data_folder '{}' is not an s3:// URI", d.data_folder),
            "set dataset.data_folder=s3://<bucket>/<prefix> (the bucket comes from the URI, as in DLIO)");
    require_s3_uri("dataset.data_folder", d.data_folder);
  }
  if (w.workflow.checkpoint && w.checkpoint.checkpoint_folder.starts_with("s3://"))
    require_s3_uri("checkpoint.checkpoint_folder", w.checkpoint.checkpoint_folder);
  if (uses_data) {
    require(d.format == Format::npz || d.format == Format::npy || d.format == Format::parquet,
            fmt::format("dataset.format '{}' cannot be read from S3: DLIO reads only npz and npy there, the MLCommons "
                        "fork parquet too", to_string(d.format)),
            "use dataset.format=npz, npy or parquet with storage_type s3");
    require(w.framework == Framework::pytorch && r.data_loader == DataLoader::pytorch,
            "S3 datasets are read through s3torchconnector, by PyTorch's DataLoader",
            "set framework=pytorch and reader.data_loader=pytorch");
    require(!r.odirect && r.access != Access::sample, "reader.odirect and reader.access: sample read files, not S3 objects",
            "remove reader.odirect and reader.access with storage_type s3");
    require(d.num_subfolders_train <= 1 && d.num_subfolders_eval <= 1,
            "S3 datasets have no subfolders (DLIO asserts none)", "remove dataset.num_subfolders_train and _eval");
  }
  require(!w.workflow.checkpoint || !w.checkpoint.checkpoint_folder.starts_with("s3://") || !w.checkpoint.odirect,
          "checkpoint.odirect writes files, not S3 objects", "remove checkpoint.odirect with an s3:// checkpoint folder");
}

// The cache tiers' rules: what a tier needs, and the loaders and readers it can stand in front of.
void validate_cache(const Workload& w) {
  const auto& c = w.cache;
  const auto& r = w.reader;
  const bool aware = r.sample_shuffle == Shuffle::cache_aware || r.file_shuffle == Shuffle::cache_aware;
  if (c.tier == CacheTier::none) {
    require(!aware, "reader.sample_shuffle (or file_shuffle) 'cache_aware' prefers what a cache tier holds, but cache.tier is none",
            "set cache.tier=local_ssd or memory with cache.capacity, or use sample_shuffle=seed");
    return;
  }
  const std::string tier(to_string(c.tier));
  require(c.capacity >= 4096, fmt::format("cache.tier is {}, but cache.capacity is {} bytes", tier, c.capacity),
          "set cache.capacity to the tier's size per node, e.g. cache.capacity=64GiB (at least 4KiB)");
  require(w.storage.storage_type != StorageType::s3, "cache tiers stand in front of file systems; S3 datasets are not cached yet",
          "remove cache.tier, or use a dataset on a file system");
  require(r.data_loader != DataLoader::tensorflow,
          "cache tiers serve loaders that read samples by index (pytorch, dali, native_dali); the tensorflow loader streams files",
          "use reader.data_loader=pytorch or dali with a cache tier, or remove cache.tier");
  require(r.data_loader != DataLoader::synthetic && w.dataset.format != Format::synthetic,
          "the synthetic loader and format read nothing for a cache tier to hold", "remove cache.tier");
  require(r.read_type != ReadType::memory,
          "reader.read_type 'memory' keeps every file a reader opened: a cache tier would have nothing to serve",
          "use reader.read_type=on_demand with a cache tier");
  if (c.tier == CacheTier::local_ssd) {
    require(!c.path.empty(), "cache.tier is local_ssd, but cache.path is not set",
            "set cache.path to a folder on the node-local SSD (trainio creates trainio-tier.<host> inside it)");
    require(!(r.access == Access::sample && r.io_engine == IoEngine::mmap),
            "reader.io_engine 'mmap' keeps each file it mapped; the local_ssd tier's copies come and go under it",
            "use reader.io_engine=posix or io_uring with cache.tier=local_ssd, or cache.tier=memory");
    require(w.dataset.format != Format::indexed_binary && w.dataset.format != Format::mmap_indexed_binary,
            fmt::format("dataset.format '{}' reads index files beside each data file; the local_ssd tier copies data files only",
                        to_string(w.dataset.format)),
            "use cache.tier=memory for indexed binary datasets");
    require(!util::is_within(c.path, w.dataset.data_folder) && !util::is_within(w.dataset.data_folder, c.path),
            fmt::format("cache.path '{}' and dataset.data_folder '{}' overlap: the tier's copies would mix with the dataset",
                        c.path, w.dataset.data_folder),
            "give cache.path a folder outside the data folder (and not one that contains it)");
  }
}

void validate(Workload& w) {
  const auto& d = w.dataset;
  const auto& r = w.reader;

  require_plain_name("dataset.file_prefix", d.file_prefix, "the data folder");
  // Credentials in the endpoint's URL would travel, and be shown and kept, in clear.
  require(!util::url_has_user_info(w.storage.storage_options.endpoint_url),
          fmt::format("storage.storage_options.endpoint_url '{}' holds credentials (before its '@')",
                      util::redact(w.storage.storage_options.endpoint_url)),
          "give the endpoint as http(s)://host[:port], and the keys as storage.storage_options.access_key_id and "
          "secret_access_key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)");
  require_plain_name("output.log_file", w.output.log_file, "the results folder");

  // The framework picks the loader when the workload does not name one (DLIO's checkpoint-only
  // workloads say framework: pytorch and nothing about the reader).
  if (!w.is_set("reader.data_loader"))
    w.reader.data_loader = w.framework == Framework::pytorch ? DataLoader::pytorch : DataLoader::tensorflow;

  // A checkpoint-only workflow reads no data: the dataset and loader rules do not apply.
  const bool uses_data = w.workflow.train || w.workflow.generate_data;
  require(!(w.framework == Framework::tensorflow && r.data_loader == DataLoader::pytorch) &&
              !(w.framework == Framework::pytorch && r.data_loader == DataLoader::tensorflow),
          fmt::format("framework '{}' and reader.data_loader '{}' do not go together", to_string(w.framework),
                      to_string(r.data_loader)),
          "set both to pytorch or both to tensorflow (dali works with either)");
  require(d.record_dims.empty() || d.record_length_bytes_stdev == 0,
          "dataset.record_dims and dataset.record_length_bytes_stdev are both set",
          "for samples of varying size give record_length_bytes with record_length_bytes_stdev instead of record_dims");
  require(d.record_dims.size() <= 8, fmt::format("dataset.record_dims has {} dimensions", d.record_dims.size()),
          "trainio supports samples of up to 8 dimensions");
  for (const auto dim : d.record_dims)
    require(dim > 0, "dataset.record_dims has a zero dimension", "every dimension must be at least 1");
  if (uses_data) check_sizes(d);  // sizes and counts that overflow
  if (w.storage.storage_type == StorageType::s3) validate_s3(w, uses_data);
  if (w.workflow.train) validate_cache(w);
  validate_parquet(w);
  require(!w.workflow.checkpoint || !w.checkpoint.checkpoint_folder.starts_with("s3://") ||
              w.storage.storage_type == StorageType::s3,
          fmt::format("checkpoint.checkpoint_folder '{}' is in S3, but storage.storage_type is not s3",
                      w.checkpoint.checkpoint_folder),
          "set storage.storage_type=s3 and its storage_options (endpoint, credentials) for S3 checkpoints");
  if (d.format == Format::jpeg || d.format == Format::png) {
    require(d.record_element_type == ElementType::uint8,
            fmt::format("dataset.format '{}' stores uint8 pixels, but record_element_type is '{}'",
                        to_string(d.format), to_string(d.record_element_type)),
            "remove dataset.record_element_type or set it to uint8");
    require(d.record_dims.size() <= 2,
            fmt::format("dataset.format '{}' stores 2-D grayscale images, but record_dims has {} dimensions",
                        to_string(d.format), d.record_dims.size()),
            "give at most two dimensions");
  }
  if (d.format == Format::hdf5 && !d.record_dims.empty())
    require(d.record_dims[0] % static_cast<std::uint64_t>(d.hdf5.num_dset_per_record) == 0,
            fmt::format("dataset.record_dims[0] = {} does not divide into dataset.hdf5.num_dset_per_record = {} datasets",
                        d.record_dims[0], d.hdf5.num_dset_per_record),
            "make record_dims[0] a multiple of num_dset_per_record");
  const auto& m = w.model;
  require(m.num_layers <= 0 || m.num_layers >= m.parallelism.pipeline,
          fmt::format("model.num_layers = {} is smaller than model.parallelism.pipeline = {}", m.num_layers,
                      m.parallelism.pipeline),
          "every pipeline stage needs at least one layer");
  require(!(m.parallelism.pipeline > 1 && m.parallelism.zero_stage == 3),
          "ZeRO stage 3 does not combine with pipeline parallelism (as in DeepSpeed)",
          "set model.parallelism.pipeline=1 or a lower zero_stage");
  const auto& c = w.checkpoint;
  require(!(c.num_checkpoints_write > 0 && c.num_checkpoints_read > c.num_checkpoints_write),
          fmt::format("checkpoint.num_checkpoints_read = {} is more than num_checkpoints_write = {}",
                      c.num_checkpoints_read, c.num_checkpoints_write),
          "a run can only read back checkpoints it wrote");
  require(!(w.workflow.checkpoint && !w.workflow.train && c.num_checkpoints_write <= 0 && c.num_checkpoints_read <= 0),
          "workflow.checkpoint without train runs checkpoints only, but num_checkpoints_write and num_checkpoints_read are not set",
          "set checkpoint.num_checkpoints_write (and num_checkpoints_read), or workflow.train=true");
  if (c.async) {
    require(c.snapshot_bandwidth > 0, "checkpoint.snapshot_bandwidth is 0: an asynchronous save's snapshot needs a rate",
            "set checkpoint.snapshot_bandwidth to the GPU-to-host rate in bytes per second (e.g. 25GB)");
    require(c.async_inflight >= 1, fmt::format("checkpoint.async_inflight = {} is below 1", c.async_inflight),
            "set checkpoint.async_inflight to 1 or more (checkpoints flushed at once)");
    require(c.async_buffer_bytes >= 4096, fmt::format("checkpoint.async_buffer_bytes = {} is below a page (4096)", c.async_buffer_bytes),
            "set checkpoint.async_buffer_bytes to the host memory a rank may hold for snapshots (e.g. 256MiB)");
    require(w.workflow.train && w.workflow.checkpoint,
            "checkpoint.async overlaps saves with training steps, but the workflow does not train with checkpoints",
            "set workflow.train=true and workflow.checkpoint=true, or checkpoint.async=false (checkpoint-only runs save synchronously)");
    require(c.num_checkpoints_read <= 0,
            fmt::format("checkpoint.async with checkpoint.num_checkpoints_read = {}: loads are synchronous by nature (training waits for its state)",
                        c.num_checkpoints_read),
            "set checkpoint.num_checkpoints_read=-1 with checkpoint.async, or checkpoint.async=false");
    require(!c.checkpoint_folder.starts_with("s3://"),
            "checkpoint.async writes files; S3 checkpoints are not supported asynchronously",
            "set checkpoint.async=false for an s3:// checkpoint folder");
  }
  validate_checkpoint_layout(w);
  require(w.workflow.generate_data || w.workflow.train || w.workflow.checkpoint,
          "the workflow has nothing to do: generate_data, train and checkpoint are all false",
          "set workflow.generate_data=true and/or workflow.train=true");
  require(!(w.workflow.evaluation && d.num_files_eval == 0 && w.workflow.train),
          "workflow.evaluation is on but dataset.num_files_eval is 0",
          "set dataset.num_files_eval to the number of evaluation files, or workflow.evaluation=false");
  if (r.data_loader == DataLoader::native_dali) {
    // DALI's own readers (fn.readers.*) are native code: one read of each sample's bytes.
    const bool framework_asked = r.access == Access::framework &&
        std::find(w.set_keys.begin(), w.set_keys.end(), "reader.access") != w.set_keys.end();
    require(!framework_asked, "reader.data_loader 'native_dali' reads with DALI's own readers, not a framework's",
            "remove reader.access (native_dali reads like access: sample), or use reader.data_loader=dali");
    w.reader.access = Access::sample;
  }
  require(!(r.data_loader == DataLoader::tensorflow && d.format == Format::tfrecord &&
             (r.access == Access::sample || r.odirect)),
          fmt::format("reader.{} does not apply to the tensorflow loader over TFRecord files, which streams whole files "
                      "through transfer_size buffers", r.odirect ? "odirect" : "access=sample"),
          "use reader.data_loader=native_dali for one read per record (with odirect if wanted), or drop the key");
  require(r.io_engine == IoEngine::posix || r.access == Access::sample,
          fmt::format("reader.io_engine '{}' reads single samples: it needs reader.access=sample", to_string(r.io_engine)),
          "set reader.access=sample (framework access replays the framework's own posix calls)");
  require(!(r.io_engine == IoEngine::mmap && r.odirect), "reader.odirect and reader.io_engine=mmap exclude each other",
          "a memory map goes through the page cache: drop one of them");
  const bool compresses = (d.format == Format::npz && d.compression == Compression::zip) ||
                         (d.format == Format::hdf5 && d.compression != Compression::zip && d.compression != Compression::zstd) ||
                         d.format == Format::parquet;
  if (d.compression != Compression::none && !compresses)
    w.notes.push_back({"dataset.compression",
                       fmt::format("dataset.compression '{}' has no effect on '{}' files (npz takes zip; hdf5 gzip, lzf, ...)",
                                   to_string(d.compression), to_string(d.format))});
  if (r.read_threads > 0 && r.prefetch_size == 0)
    w.notes.push_back({"reader.prefetch_size",
                       "reader.prefetch_size is 0: each reader thread keeps one batch in flight (PyTorch's minimum)"});
}

}  // namespace trainio::config
