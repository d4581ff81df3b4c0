#pragma once
// A workload as trainio runs it: every DLIO key, typed, with DLIO's defaults (REFERENCE §1),
// plus trainio's own extensions. Built only by config::load(); everything downstream reads it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/enums.hpp"
#include "config/time_spec.hpp"

namespace trainio::config {

struct ModelSection {
  std::string name = "default";
  std::string type;  // "transformer" enables the parameter model; other values are labels
  std::uint64_t model_size_bytes = 10240;
  std::vector<std::uint64_t> optimization_groups;
  std::int64_t num_layers = -1;
  std::vector<std::uint64_t> layer_parameters;
  ModelDataType model_datatype = ModelDataType::fp16;
  ModelDataType optimizer_datatype = ModelDataType::fp32;
  struct {
    std::int64_t tensor = 1;
    std::int64_t pipeline = 1;
    std::int64_t data = -1;
    std::int64_t zero_stage = 0;
  } parallelism;
  struct {
    std::int64_t vocab_size = 32000;
    std::int64_t hidden_size = 2048;
    std::int64_t ffn_hidden_size = 8192;
    std::int64_t num_attention_heads = 32;
    std::int64_t num_kv_heads = 8;
  } transformer;
};

struct WorkflowSection {
  bool generate_data = false;
  bool train = true;
  bool evaluation = false;
  bool checkpoint = false;
  bool profiling = false;
};

// DLIO's storage_options for S3 (storage_type: s3), as s3torchconnector takes them. Empty
// credentials and endpoint come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
// and AWS_ENDPOINT_URL when the run starts, as the connector's credential chain finds them.
struct S3Options {
  std::string access_key_id;
  std::string secret_access_key;  // never printed nor written to results
  std::string endpoint_url;  // one, or several separated by commas
  EndpointSpread endpoint_spread = EndpointSpread::rank;
  std::string region = "us-east-1";
  bool force_path_style = false;
  std::int64_t max_attempts = 5;
  // The MLCommons DLIO fork's Parquet readers: the columns read (empty: all; see ParquetSection).
  std::vector<std::string> columns;
};

struct StorageSection {
  StorageType storage_type = StorageType::local_fs;
  std::string storage_root = "./";
  S3Options storage_options;
};

struct Hdf5Section {
  std::vector<std::uint64_t> chunk_dims;
  std::int64_t num_dset_per_record = 1;
  std::vector<std::uint64_t> max_shape;
};

// A column of a Parquet dataset, as the MLCommons DLIO fork's `dataset.parquet.columns` gives it:
// `size` elements of `dtype` per row (1: a scalar column, more: a fixed-size list).
struct ParquetColumn {
  std::string name;
  ElementType dtype = ElementType::float32;
  std::uint64_t size = 1;
  bool read = true;  // whether the training reader projects it
  bool operator==(const ParquetColumn&) const = default;
};

struct ParquetSection {
  std::vector<ParquetColumn> columns;  // empty: one column `data`, a list of record_length uint8
  std::int64_t row_group_size = 1024;
  std::string partition_by;
  std::int64_t generation_batch_size = 0;
  bool use_s3dlio_gen = false;
  // trainio extensions
  bool write_statistics = true;  // min/max and null count per column chunk, as pyarrow writes by default
  std::int64_t data_page_version = 1;
  bool pre_buffer = false;  // pyarrow's pre_buffer: coalesce the projected chunks' ranges
};

enum class DataContent { random, compressible };

struct DatasetSection {
  double record_length_bytes = 65536;  // floats occur in DLIO files (114660.07)
  double record_length_bytes_stdev = 0;
  double record_length_bytes_resize = 0;
  std::int64_t num_files_train = 8;
  std::int64_t num_files_eval = 0;
  std::int64_t num_samples_per_file = 1;
  std::string data_folder = "./data/";
  std::int64_t num_subfolders_train = 0;
  std::int64_t num_subfolders_eval = 0;
  Compression compression = Compression::none;
  std::int64_t compression_level = 4;
  std::string file_prefix = "img";
  Format format = Format::tfrecord;
  bool keep_files = true;
  ElementType record_element_type = ElementType::uint8;
  std::vector<std::uint64_t> record_dims;
  Hdf5Section hdf5;
  ParquetSection parquet;
  // trainio extensions
  DataContent data_content = DataContent::random;
  double compression_ratio = 2.0;  // target for data_content: compressible
  bool check_free_space = true;    // refuse to generate a dataset larger than the free space
};

struct ReaderSection {
  DataLoader data_loader = DataLoader::tensorflow;
  std::int64_t batch_size = 1;
  std::int64_t batch_size_eval = 1;
  std::int64_t read_threads = 1;
  std::int64_t computation_threads = 1;
  std::int64_t prefetch_size = 2;
  Shuffle file_shuffle = Shuffle::off;
  Shuffle sample_shuffle = Shuffle::off;
  std::int64_t shuffle_size = 1024;
  ReadType read_type = ReadType::on_demand;
  std::uint64_t transfer_size = 0;  // 0: not set (the framework's default)
  TimeSpec preprocess_time;
  bool odirect = false;
  FileAccess file_access = FileAccess::multi;
  // trainio extensions
  Access access = Access::framework;
  ShuffleScope shuffle_scope = ShuffleScope::global;
  IoEngine io_engine = IoEngine::posix;
  std::int64_t io_depth = 1;
  Evict evict = Evict::none;
  std::uint64_t python_buffer_size = 0;  // 0: the file system's st_blksize, as Python
};

struct TrainSection {
  std::int64_t epochs = 1;
  std::int64_t total_training_steps = -1;
  std::uint64_t seed = 123;
  bool seed_change_epoch = true;
  TimeSpec computation_time;
  double max_seconds = 0;  // trainio extension: stop all ranks at a step boundary after this long
};

struct EvaluationSection {
  TimeSpec eval_time;
  std::int64_t eval_after_epoch = 1;
  std::int64_t epochs_between_evals = 1;
};

struct CheckpointSection {
  std::string checkpoint_folder = "./checkpoints/";
  std::int64_t checkpoint_after_epoch = 1;
  std::int64_t epochs_between_checkpoints = 1;
  std::int64_t steps_between_checkpoints = -1;
  CheckpointType type = CheckpointType::rank_zero;
  CheckpointMode mode = CheckpointMode::standard;
  bool fsync = false;
  std::int64_t num_checkpoints_write = -1;
  std::int64_t num_checkpoints_read = -1;
  double time_between_checkpoints = -1;
  bool rank_sync = false;
  bool randomize_tensor = true;
  bool recovery_rank_shift = false;
  // trainio extensions
  bool odirect = false;       // write and read checkpoint files with O_DIRECT
  bool atomic_files = true;   // write under a temporary name, rename when complete
  Evict evict = Evict::fadvise;  // between the saves and the loads of a checkpoint-only run
  // torch: DLIO's torch.save archives; per_tensor / per_rank: each tensor's raw bytes in a file
  // of its own, or all of a rank's back to back in one file (docs/checkpoints.md).
  CheckpointLayout file_layout = CheckpointLayout::torch;
  std::uint64_t write_buffer_bytes = 64ull << 20;  // the largest write call of tensor bytes
  // Asynchronous saves (docs/checkpoints.md): a snapshot into a host buffer stalls training, a
  // writer thread flushes it while the following steps run.
  bool async = false;
  std::uint64_t snapshot_bandwidth = 25'000'000'000;  // bytes/s of the emulated GPU->host copy (PCIe 4.0 x16)
  std::int64_t async_inflight = 1;                    // checkpoints being flushed at once
  std::uint64_t async_buffer_bytes = 256ull << 20;    // host memory per rank for snapshots
};

struct OutputSection {
  std::string folder;  // empty: trainio-output/<workload>-<timestamp>/
  std::string log_file = "dlio.log";
  std::int64_t exclude_start_steps = 1;
  std::int64_t exclude_end_steps = 0;
  std::int64_t trace_every = 1;  // trainio extension: trace one storage call in this many
};

// trainio's cache tiers in front of the dataset's storage (docs/caching.md).
struct CacheSection {
  CacheTier tier = CacheTier::none;
  std::string path;            // local_ssd: the node-local folder the tier's copies live under
  std::uint64_t capacity = 0;  // bytes per node
  CachePolicy policy = CachePolicy::lru;
  CacheStaging staging = CacheStaging::on_demand;
  bool keep_files = false;  // local_ssd: leave the copies after the run (a later run starts empty)
};

struct MetricSection {
  double au = 0.90;
};

// A remark made while loading: a key that has no effect, an old spelling, etc.
struct ConfigNote {
  std::string key;
  std::string message;
};

struct Workload {
  std::string name;    // the workload's name: shipped name or file stem
  std::string source;  // "shipped:unet3d_h100" or the file path

  Framework framework = Framework::tensorflow;
  ModelSection model;
  WorkflowSection workflow;
  StorageSection storage;
  DatasetSection dataset;
  ReaderSection reader;
  TrainSection train;
  EvaluationSection evaluation;
  CheckpointSection checkpoint;
  OutputSection output;
  MetricSection metric;
  CacheSection cache;

  // Provenance, reported with the results.
  std::vector<std::string> overrides;  // as given on the command line
  std::vector<std::string> set_keys;   // every key the file or an override set, in order
  std::vector<ConfigNote> notes;

  bool is_set(const std::string& key) const;
};

}  // namespace trainio::config
