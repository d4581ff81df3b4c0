#include "config/schema.hpp"

#include <fmt/format.h>

#include <map>
#include <type_traits>
#include <utility>

#include "config/codecs.hpp"
#include "config/schema_table.hpp"
#include "config/workload.hpp"
#include "util/redact.hpp"

namespace trainio::config {

namespace detail {
namespace {

// A field of Workload, reachable from a mutable workload.
#define FIELD(member) [](Workload & w) -> auto& { return w.member; }

// The key's entry, built once per (field type, value type) pair: the field is reached through a
// plain function pointer, so the 125 keys share a handful of instantiations (one per key made
// this file take ~50 s to compile with a sanitizer).
template <typename M, typename T>
Entry typed_key(std::string path, M& (*ref)(Workload&), Codec<T> codec, KeyStatus status, std::string help,
                bool extension) {
  Entry e;
  e.info = KeyInfo{std::move(path), status, extension, codec.expected, std::move(help), {}, {}};
  e.set = [ref, parse = std::move(codec.parse)](const YAML::Node& node, Workload& w) { ref(w) = parse(node); };
  e.get = [ref, print = std::move(codec.print)](const Workload& w) { return print(ref(const_cast<Workload&>(w))); };
  return e;
}

// The field of a FIELD lambda, as a function pointer.
template <typename Ref>
auto field_pointer(Ref ref) {
  using M = std::remove_reference_t<decltype(ref(std::declval<Workload&>()))>;
  return static_cast<M& (*)(Workload&)>(ref);
}

template <typename Ref, typename T>
Entry key(std::string path, Ref ref, Codec<T> codec, KeyStatus status, std::string help,
          bool extension = false) {
  return typed_key(std::move(path), field_pointer(ref), std::move(codec), status, std::move(help), extension);
}

template <typename Ref>
Entry time_key(std::string path, Ref ref, KeyStatus status, std::string help) {
  Entry e = key(std::move(path), ref, time_spec(), status, std::move(help));
  e.takes_mapping = true;
  return e;
}

// DLIO's `<name>_stdev` companion of a time key: turns the value into a normal distribution.
template <typename Ref>
Entry stdev_key(std::string path, Ref field, KeyStatus status, std::string help) {
  TimeSpec& (*ref)(Workload&) = field;
  const auto seconds = number(0);
  Entry e;
  e.info = KeyInfo{std::move(path), status, false, seconds.expected, std::move(help), {}, {}};
  e.set = [ref, parse = seconds.parse](const YAML::Node& node, Workload& w) {
    TimeSpec& t = ref(w);
    t.stdev = parse(node);
    if (t.kind == TimeSpec::Kind::constant && t.stdev > 0) t.kind = TimeSpec::Kind::normal;
  };
  return e;
}

// A key trainio accepts and notes but that changes nothing here.
Entry noted(std::string path, KeyStatus status, std::string help, std::string hint = {},
            bool takes_mapping = false) {
  Entry e;
  e.info = KeyInfo{std::move(path), status, false, "any value", std::move(help), std::move(hint), {}};
  e.takes_mapping = takes_mapping;
  return e;
}

constexpr auto active = KeyStatus::active;
constexpr auto pending = KeyStatus::pending;
constexpr auto python_only = KeyStatus::python_only;
constexpr auto ignored = KeyStatus::dlio_ignored;

// One function a section: the compilers' optimisers and sanitizers take time superlinear in a
// function's size, and one function of every key took ~50 s to compile with ASan.
// model
[[gnu::noinline]] void model_keys(std::vector<Entry>& t) {
  t.push_back(key("model.name", FIELD(model.name), text(), active, "label of the model, used in output folder names"));
  t.push_back(key("model.type", FIELD(model.type), text(), active, "'transformer' sizes checkpoints from model.transformer; other values are labels"));
  t.push_back(key("model.model_size_bytes", FIELD(model.model_size_bytes), bytes(0), active, "checkpoint model size when model.type is not transformer"));
  t.push_back(key("model.optimization_groups", FIELD(model.optimization_groups), unsigned_list(), active, "optimizer state sizes per group (legacy checkpoint model)"));
  t.push_back(key("model.num_layers", FIELD(model.num_layers), integer_or_unset(1), active, "transformer layers"));
  t.push_back(key("model.layer_parameters", FIELD(model.layer_parameters), unsigned_list(), active, "parameters per layer (legacy checkpoint model)"));
  t.push_back(key("model.model_datatype", FIELD(model.model_datatype), enumeration<ModelDataType>(), active, "element type of model weights in checkpoints"));
  t.push_back(key("model.optimizer_datatype", FIELD(model.optimizer_datatype), enumeration<ModelDataType>(), active, "element type of optimizer state in checkpoints"));
  t.push_back(key("model.parallelism.tensor", FIELD(model.parallelism.tensor), integer(1), active, "tensor-parallel degree"));
  t.push_back(key("model.parallelism.pipeline", FIELD(model.parallelism.pipeline), integer(1), active, "pipeline-parallel degree"));
  t.push_back(key("model.parallelism.data", FIELD(model.parallelism.data), integer_or_unset(1), active, "data-parallel degree (-1: ranks / (tensor x pipeline))"));
  t.push_back(key("model.parallelism.zero_stage", FIELD(model.parallelism.zero_stage), integer(0, 3), active, "DeepSpeed ZeRO stage"));
  t.push_back(key("model.transformer.vocab_size", FIELD(model.transformer.vocab_size), integer(1), active, "vocabulary size"));
  t.push_back(key("model.transformer.hidden_size", FIELD(model.transformer.hidden_size), integer(1), active, "hidden size"));
  t.push_back(key("model.transformer.ffn_hidden_size", FIELD(model.transformer.ffn_hidden_size), integer(1), active, "feed-forward hidden size"));
  t.push_back(key("model.transformer.num_attention_heads", FIELD(model.transformer.num_attention_heads), integer(1), active, "attention heads"));
  t.push_back(key("model.transformer.num_kv_heads", FIELD(model.transformer.num_kv_heads), integer(1), active, "key/value heads"));
  t.push_back(noted("model.model_size", ignored, "old name; DLIO ignores it", "model.model_size_bytes"));
  t.push_back(noted("model.pipeline_parallelism", ignored, "old name; DLIO ignores it", "model.parallelism.pipeline"));
  t.push_back(noted("model.tensor_parallelism", ignored, "old name; DLIO ignores it", "model.parallelism.tensor"));
  t.push_back(noted("model.zero_stage", ignored, "old name; DLIO ignores it", "model.parallelism.zero_stage"));
}

// framework
[[gnu::noinline]] void framework_keys(std::vector<Entry>& t) {
  t.push_back(key("framework", FIELD(framework), enumeration<Framework>(), active, "framework whose I/O is replayed; must agree with reader.data_loader"));
}

// workflow
[[gnu::noinline]] void workflow_keys(std::vector<Entry>& t) {
  t.push_back(key("workflow.generate_data", FIELD(workflow.generate_data), boolean(), active, "generate the dataset before training (complete files that match are kept)"));
  t.push_back(key("workflow.train", FIELD(workflow.train), boolean(), active, "run the training replay"));
  t.push_back(key("workflow.evaluation", FIELD(workflow.evaluation), boolean(), active, "run evaluation phases on the valid/ files"));
  t.push_back(key("workflow.checkpoint", FIELD(workflow.checkpoint), boolean(), active, "write checkpoints (during training, or checkpoint-only when train is false: saves, then loads)"));
  t.push_back(key("workflow.profiling", FIELD(workflow.profiling), boolean(), active, "write trace-<rank>-of-<size>.pfw: Chrome-trace events of phases, steps and storage calls (Perfetto opens them)"));
  t.push_back(noted("workflow.debug", ignored, "old key; DLIO ignores it", "--log-level debug"));
  t.push_back(noted("workflow.do_eval", ignored, "old name; DLIO ignores it", "workflow.evaluation"));
}

// storage
[[gnu::noinline]] void storage_keys(std::vector<Entry>& t) {
  t.push_back(key("storage.storage_type", FIELD(storage.storage_type), enumeration<StorageType>(), active, "local_fs and parallel_fs are POSIX paths (parallel_fs a label for shared file systems); s3 an S3 bucket (data_folder s3://bucket/prefix)"));
  t.push_back(key("storage.storage_root", FIELD(storage.storage_root), text(), active, "prefixed to data_folder and checkpoint_folder (an absolute folder or an s3:// URI ignores it)"));
  t.push_back(key("storage.storage_options.access_key_id", FIELD(storage.storage_options.access_key_id), text(), active, "S3 access key (else AWS_ACCESS_KEY_ID)"));
  t.push_back(key("storage.storage_options.secret_access_key", FIELD(storage.storage_options.secret_access_key), text(), active, "S3 secret key (else AWS_SECRET_ACCESS_KEY); shown and written as ***"));
  t.push_back(key("storage.storage_options.endpoint_url", FIELD(storage.storage_options.endpoint_url), text(), active, "S3 endpoint, http(s)://host[:port] (else AWS_ENDPOINT_URL); several separated by commas"));
  t.push_back(key("storage.storage_options.s3_endpoint_spread", FIELD(storage.storage_options.endpoint_spread), enumeration<EndpointSpread>(), active, "with several endpoints: rank (rank r uses endpoint r % N, as the MLCommons DLIO fork) or request (each client's requests round robin over all, starting at its rank's)"));
  t.push_back(key("storage.storage_options.region", FIELD(storage.storage_options.region), text(), active, "S3 region the requests are signed for"));
  t.push_back(key("storage.storage_options.s3_force_path_style", FIELD(storage.storage_options.force_path_style), boolean(), active, "address buckets as http://host/bucket/key instead of http://bucket.host/key"));
  t.push_back(key("storage.storage_options.s3_max_attempts", FIELD(storage.storage_options.max_attempts), integer(1), active, "tries of one S3 request, the first included (5xx, 429 and lost connections are retried)"));
  t.push_back(key("storage.storage_options.columns", FIELD(storage.storage_options.columns), text_list(), active, "parquet: the columns the reader projects (empty: those of dataset.parquet.columns with read: true)"));
  t.push_back(noted("storage.storage_options.storage_library", python_only, "I/O library of the DLIO fork's Parquet readers (s3dlio, direct, posix); trainio reads through its own storage layer"));
  t.push_back(noted("storage.storage_options.prefetch_workers", python_only, "thread pool of the DLIO fork's Parquet readers; trainio's reader threads are reader.read_threads"));
  t.push_back(noted("storage.fsspec_plugin", python_only, "fsspec back end of a DLIO fork; no effect"));
  t.push_back(noted("storage.fsspec_extra_params", python_only, "fsspec back end of a DLIO fork; no effect", {}, true));
}

// dataset
[[gnu::noinline]] void dataset_keys(std::vector<Entry>& t) {
  t.push_back(key("dataset.record_length_bytes", FIELD(dataset.record_length_bytes), number(1), active, "bytes per sample; a 2-D sample of floor(sqrt(n))^2 elements unless record_dims is set"));
  t.push_back(key("dataset.record_length_bytes_stdev", FIELD(dataset.record_length_bytes_stdev), number(0), active, "spread of sample sizes; each file draws its size (seeded, same for any rank count)"));
  t.push_back(key("dataset.record_length_bytes_resize", FIELD(dataset.record_length_bytes_resize), number(0), active, "size of the in-memory sample after decoding; does not change what is read"));
  t.push_back(key("dataset.num_files_train", FIELD(dataset.num_files_train), integer(1), active, "training files"));
  t.push_back(key("dataset.num_files_eval", FIELD(dataset.num_files_eval), integer(0), active, "evaluation files (in valid/)"));
  t.push_back(key("dataset.num_samples_per_file", FIELD(dataset.num_samples_per_file), integer(1), active, "samples in each file"));
  t.push_back(key("dataset.data_folder", FIELD(dataset.data_folder), text(), active, "dataset folder; files go to <folder>/train and <folder>/valid"));
  t.push_back(key("dataset.num_subfolders_train", FIELD(dataset.num_subfolders_train), integer(0), active, "spread training files over this many subfolders (file i in i % n) when > 1"));
  t.push_back(key("dataset.num_subfolders_eval", FIELD(dataset.num_subfolders_eval), integer(0), active, "the same for evaluation files"));
  t.push_back(noted("dataset.enable_chunking", ignored, "old HDF5 key; DLIO's current generator ignores it", "dataset.hdf5.chunk_dims"));
  t.push_back(noted("dataset.chunk_size", ignored, "old HDF5 key; DLIO's current generator ignores it", "dataset.hdf5.chunk_dims"));
  t.push_back(key("dataset.compression", FIELD(dataset.compression), enumeration<Compression>(), active, "hdf5: gzip/lzf; npz: zip (deflate, as numpy's savez_compressed)"));
  t.push_back(key("dataset.compression_level", FIELD(dataset.compression_level), integer(0, 9), active, "compression level for gzip/zip"));
  t.push_back(key("dataset.file_prefix", FIELD(dataset.file_prefix), text(), active, "file name prefix"));
  t.push_back(key("dataset.format", FIELD(dataset.format), enumeration<Format>(), active, "on-disk format of the dataset"));
  t.push_back(key("dataset.keep_files", FIELD(dataset.keep_files), boolean(), active, "false: delete the generated dataset when the run ends"));
  t.push_back(key("dataset.record_element_type", FIELD(dataset.record_element_type), enumeration<ElementType>(), active, "element type of a sample (numpy dtype name)"));
  t.push_back(key("dataset.record_dims", FIELD(dataset.record_dims), unsigned_list(), active, "explicit sample shape; overrides record_length_bytes"));
  t.push_back(key("dataset.check_free_space", FIELD(dataset.check_free_space), boolean(), active, "refuse to generate a dataset larger than the data folder's free space (false: for file systems that compress, or report no free space)", true));
  t.push_back(noted("dataset.generation_buffer_size", python_only, "DLIO's generation buffer; trainio streams files through a fixed small buffer"));
  t.push_back(key("dataset.hdf5.chunk_dims", FIELD(dataset.hdf5.chunk_dims), unsigned_list(), active, "HDF5 chunk shape (first along samples; a per-sample shape gets a leading 1)"));
  t.push_back(key("dataset.hdf5.num_dset_per_record", FIELD(dataset.hdf5.num_dset_per_record), integer(1), active, "HDF5 datasets a record is split across (records_0..k-1)"));
  t.push_back(key("dataset.hdf5.max_shape", FIELD(dataset.hdf5.max_shape), unsigned_list(), active, "HDF5 maximum (resizable) shape of a sample"));
  t.push_back(key("dataset.parquet.columns", FIELD(dataset.parquet.columns), parquet_columns(), active, "Parquet column schema (DLIO fork): name, dtype, size (elements per row; > 1 a fixed-size list), read"));
  t.push_back(key("dataset.parquet.row_group_size", FIELD(dataset.parquet.row_group_size), integer(1), active, "rows per Parquet row group (the unit the reader fetches)"));
  t.push_back(key("dataset.parquet.partition_by", FIELD(dataset.parquet.partition_by), text(), active, "Hive partitioning column of the DLIO fork; not supported (config error when set)"));
  t.push_back(noted("dataset.parquet.generation_batch_size", python_only, "rows per pyarrow write batch in the DLIO fork; trainio streams rows through a fixed buffer"));
  t.push_back(noted("dataset.parquet.read_mode", python_only, "reader mode of MLPerf's Parquet files (default, row_group); trainio reads row groups as the DLIO fork does"));
  t.push_back(noted("dataset.parquet.use_s3dlio_gen", python_only, "the DLIO fork's Rust generator for S3; no effect"));
  t.push_back(key("dataset.parquet.write_statistics", FIELD(dataset.parquet.write_statistics), boolean(), active, "write min/max/null-count statistics per column chunk (pyarrow's default)", true));
  t.push_back(key("dataset.parquet.data_page_version", FIELD(dataset.parquet.data_page_version), integer(1, 2), active, "Parquet data page version: 1 (pyarrow's default) or 2", true));
  t.push_back(key("dataset.parquet.pre_buffer", FIELD(dataset.parquet.pre_buffer), boolean(), active, "read a row group's projected chunks as pyarrow's pre_buffer does (ranges coalesced: holes < 8 KiB, ranges <= 32 MiB); off in the fork", true));
  {
    Codec<DataContent> content;
    content.expected = "random or compressible";
    content.parse = [](const YAML::Node& n) {
      const std::string v = scalar_text(n, "random or compressible");
      if (v == "random") return DataContent::random;
      if (v == "compressible") return DataContent::compressible;
      throw BadValue{"random or compressible"};
    };
    content.print = [](const DataContent& c) {
      return std::string(c == DataContent::random ? "random" : "compressible");
    };
    t.push_back(key("dataset.data_content", FIELD(dataset.data_content), content, active, "random (incompressible) bytes, or compressible ones for storage with inline compression/dedup", true));
  }
  t.push_back(key("dataset.compression_ratio", FIELD(dataset.compression_ratio), number(1, 1000), active, "how much compressible content shrinks (2 = to half); each 4 KiB block stays unique", true));
  t.push_back(noted("dataset.record_length", active, "DLIO 1.0's name; read as record_length_bytes when that is absent (DLIO 2.0 ignores it)", "dataset.record_length_bytes"));
  t.push_back(noted("dataset.record_length_stdev", active, "DLIO 1.0's name; read as record_length_bytes_stdev when that is absent", "dataset.record_length_bytes_stdev"));
  t.push_back(noted("dataset.record_length_std", ignored, "misspelling found in DLIO files; DLIO ignores it", "dataset.record_length_bytes_stdev"));
  t.push_back(noted("dataset.record_length_resize", active, "DLIO 1.0's name; read as record_length_bytes_resize when that is absent", "dataset.record_length_bytes_resize"));
  t.push_back(noted("dataset.record_element_bytes", ignored, "DLIO derives it from record_element_type", "dataset.record_element_type"));
  t.push_back(noted("dataset.eval_num_samples_per_file", ignored, "DLIO ignores it; evaluation files hold num_samples_per_file samples"));
  t.push_back(noted("dataset.daos_pool", python_only, "DAOS fork of DLIO; no effect"));
  t.push_back(noted("dataset.daos_cont", python_only, "DAOS fork of DLIO; no effect"));
}

// reader
[[gnu::noinline]] void reader_keys(std::vector<Entry>& t) {
  t.push_back(key("reader.data_loader", FIELD(reader.data_loader), enumeration<DataLoader>(), active, "whose loader is replayed: pytorch, tensorflow, dali, native_dali (DALI's own readers: access sample), synthetic (no I/O)"));
  t.push_back(key("reader.batch_size", FIELD(reader.batch_size), integer(1), active, "samples per training step per rank"));
  t.push_back(key("reader.batch_size_eval", FIELD(reader.batch_size_eval), integer(1), active, "samples per evaluation step per rank"));
  t.push_back(key("reader.read_threads", FIELD(reader.read_threads), integer(0, 1024), active, "reader threads: pytorch workers, tensorflow interleave slots, dali workers; 0 reads in the training thread (tensorflow: 1)"));
  t.push_back(key("reader.computation_threads", FIELD(reader.computation_threads), integer(1, 1024), active, "tensorflow map threads over TFRecord batches, spending preprocess_time per record"));
  t.push_back(key("reader.prefetch_size", FIELD(reader.prefetch_size), integer(0, 1 << 20), active, "batches ready ahead: pytorch prefetch_factor = ceil(prefetch_size / read_threads) per worker; tensorflow prefetch; dali queue depth (2 when 0)"));
  t.push_back(key("reader.file_shuffle", FIELD(reader.file_shuffle), enumeration<Shuffle>(), active, "file order: off, seed (train.seed), random (fresh each run), cache_aware (as sample_shuffle)"));
  t.push_back(key("reader.sample_shuffle", FIELD(reader.sample_shuffle), enumeration<Shuffle>(), active, "sample order: off, seed, random, cache_aware (seed, then each rank reads what the cache tier holds first; trainio)"));
  t.push_back(key("reader.shuffle_size", FIELD(reader.shuffle_size), integer(1), active, "tensorflow shuffle buffer in records (TFRecord, with sample_shuffle on)"));
  t.push_back(key("reader.read_type", FIELD(reader.read_type), enumeration<ReadType>(), active, "on_demand opens and closes the file per sample; memory keeps what a reader thread opened (whole-file formats load once)"));
  t.push_back(key("reader.transfer_size", FIELD(reader.transfer_size), bytes(0), active, "read size of tensorflow's TFRecord reader (buffer_size); 0: 256 KiB, tensorflow's default"));
  t.push_back(time_key("reader.preprocess_time", FIELD(reader.preprocess_time), active, "CPU time per sample spent in the reader thread (emulated by sleeping)"));
  t.push_back(stdev_key("reader.preprocess_time_stdev", FIELD(reader.preprocess_time), active, "spread of preprocess_time (normal distribution)"));
  t.push_back(key("reader.odirect", FIELD(reader.odirect), boolean(), active, "read with O_DIRECT, bypassing the page cache (whole files, as DLIO's O_DIRECT readers; single samples with access: sample)"));
  t.push_back(key("reader.file_access", FIELD(reader.file_access), enumeration<FileAccess>(), pending, "how ranks open shared files (multi, shared, collective, mpio, posix)"));
  t.push_back(key("reader.access", FIELD(reader.access), enumeration<Access>(), active, "framework: the storage calls of the framework's reader; sample: one read of the sample's bytes (a native loader)", true));
  t.push_back(key("reader.shuffle_scope", FIELD(reader.shuffle_scope), enumeration<ShuffleScope>(), active, "global: any rank may read any sample, reshuffled every epoch; local: a rank keeps its files and shuffles within them", true));
  t.push_back(key("reader.io_engine", FIELD(reader.io_engine), enumeration<IoEngine>(), active, "with access: sample, how bytes move: posix (pread), mmap (touch the pages), io_uring (io_depth reads in flight)", true));
  t.push_back(key("reader.io_depth", FIELD(reader.io_depth), integer(1, 4096), active, "reads in flight per reader thread with io_engine: io_uring", true));
  t.push_back(key("reader.evict", FIELD(reader.evict), enumeration<Evict>(), active, "empty the page cache of the dataset before each epoch: fadvise (per file) or drop_caches (machine-wide, root)", true));
  t.push_back(key("reader.python_buffer_size", FIELD(reader.python_buffer_size), bytes(0), active, "buffer of Python's open() that framework readers re-enact; 0: the file system's st_blksize, as Python", true));
  t.push_back(noted("reader.data_loader_sampler", python_only, "DLIO's sampler class choice; trainio derives the access order from the loader"));
  t.push_back(noted("reader.data_loader_classname", python_only, "custom Python loader class; trainio replays its built-in loaders"));
  t.push_back(noted("reader.reader_classname", python_only, "custom Python reader class; trainio replays its built-in readers"));
  t.push_back(noted("reader.multiprocessing_context", python_only, "Python multiprocessing start method; trainio uses threads"));
  t.push_back(noted("reader.pin_memory", python_only, "PyTorch pinned host memory; no storage effect"));
  t.push_back(noted("reader.dont_use_mmap", python_only, "DLIO reader detail; no effect"));
  t.push_back(noted("reader.transformed_record_dims", python_only, "in-memory sample shape after transforms; no storage effect"));
  t.push_back(noted("reader.transformed_record_element_type", python_only, "in-memory sample type after transforms; no storage effect"));
}

// train
[[gnu::noinline]] void train_keys(std::vector<Entry>& t) {
  t.push_back(key("train.epochs", FIELD(train.epochs), integer(1), active, "passes over the training files"));
  t.push_back(key("train.total_training_steps", FIELD(train.total_training_steps), integer_or_unset(1), active, "step cap for the whole run (DLIO caps each epoch instead)"));
  t.push_back(key("train.seed", FIELD(train.seed), unsigned_integer(), active, "seed of shuffles and emulated times"));
  t.push_back(key("train.seed_change_epoch", FIELD(train.seed_change_epoch), boolean(), active, "reseed with seed + epoch so every epoch has a new order"));
  t.push_back(time_key("train.computation_time", FIELD(train.computation_time), active, "emulated accelerator time per step"));
  t.push_back(stdev_key("train.computation_time_stdev", FIELD(train.computation_time), active, "spread of computation_time (normal distribution)"));
  t.push_back(key("train.max_seconds", FIELD(train.max_seconds), number(0), active, "stop training after this many seconds, all ranks at the same step (0: no limit)", true));
  t.push_back(noted("train.epoch", ignored, "misspelling found in DLIO files; DLIO ignores it and runs 1 epoch", "train.epochs"));
  t.push_back(noted("train.total_eval_steps", ignored, "DLIO ignores it"));
}

// cache (trainio)
[[gnu::noinline]] void cache_keys(std::vector<Entry>& t) {
  t.push_back(key("cache.tier", FIELD(cache.tier), enumeration<CacheTier>(), active, "a cache in front of the dataset's storage: none, local_ssd (copies in a node-local folder), memory (node shared memory)", true));
  t.push_back(key("cache.path", FIELD(cache.path), text(), active, "local_ssd: the node-local folder the tier's copies go under (a trainio-tier.<host> folder inside it)", true));
  t.push_back(key("cache.capacity", FIELD(cache.capacity), bytes(0), active, "the tier's size per node, shared by the node's ranks (\"64GiB\"); files count in 4 KiB pages", true));
  t.push_back(key("cache.policy", FIELD(cache.policy), enumeration<CachePolicy>(), active, "what leaves a full tier: lru (least recently read), fifo (first filled), static (fill once, never evict)", true));
  t.push_back(key("cache.staging", FIELD(cache.staging), enumeration<CacheStaging>(), active, "on_demand: a file enters on its first read; before_first_epoch: the node's ranks fill the tier before training", true));
  t.push_back(key("cache.keep_files", FIELD(cache.keep_files), boolean(), active, "local_ssd: leave the tier's copies after the run (the next run still starts empty)", true));
}

// evaluation
[[gnu::noinline]] void evaluation_keys(std::vector<Entry>& t) {
  t.push_back(time_key("evaluation.eval_time", FIELD(evaluation.eval_time), active, "emulated accelerator time per evaluation step"));
  t.push_back(stdev_key("evaluation.eval_time_stdev", FIELD(evaluation.eval_time), active, "spread of eval_time (normal distribution)"));
  t.push_back(key("evaluation.eval_after_epoch", FIELD(evaluation.eval_after_epoch), integer(1), active, "first epoch (1-based) followed by an evaluation"));
  t.push_back(key("evaluation.epochs_between_evals", FIELD(evaluation.epochs_between_evals), integer(1), active, "epochs between evaluations"));
  t.push_back(noted("evaluation.steps_between_evals", ignored, "DLIO ignores it"));
}

// checkpoint
[[gnu::noinline]] void checkpoint_keys(std::vector<Entry>& t) {
  t.push_back(key("checkpoint.checkpoint_folder", FIELD(checkpoint.checkpoint_folder), text(), active, "where checkpoints are written"));
  t.push_back(key("checkpoint.checkpoint_after_epoch", FIELD(checkpoint.checkpoint_after_epoch), integer(1), active, "first epoch (1-based) that ends with a checkpoint"));
  t.push_back(key("checkpoint.epochs_between_checkpoints", FIELD(checkpoint.epochs_between_checkpoints), integer(1), active, "epochs between checkpoints"));
  t.push_back(key("checkpoint.steps_between_checkpoints", FIELD(checkpoint.steps_between_checkpoints), integer_or_unset(1), active, "steps between checkpoints (-1: per epoch instead)"));
  t.push_back(key("checkpoint.type", FIELD(checkpoint.type), enumeration<CheckpointType>(), active, "rank_zero: only the layout's writers save (with ZeRO 0, the first data-parallel replica); all_ranks: every replica saves its copy (DLIO ignores it; trainio honours it)"));
  t.push_back(key("checkpoint.mode", FIELD(checkpoint.mode), enumeration<CheckpointMode>(), active, "default, or subset (a subset of ranks, node-local storage)"));
  t.push_back(key("checkpoint.fsync", FIELD(checkpoint.fsync), boolean(), active, "fsync each checkpoint file after writing it (DLIO's fsync never takes effect)"));
  t.push_back(key("checkpoint.num_checkpoints_write", FIELD(checkpoint.num_checkpoints_write), integer_or_unset(0), active, "checkpoint-only mode: checkpoints to write"));
  t.push_back(key("checkpoint.num_checkpoints_read", FIELD(checkpoint.num_checkpoints_read), integer_or_unset(0), active, "checkpoint-only mode: checkpoints to read back"));
  t.push_back(key("checkpoint.time_between_checkpoints", FIELD(checkpoint.time_between_checkpoints), number(-1), active, "checkpoint-only mode: seconds between checkpoints"));
  t.push_back(key("checkpoint.rank_sync", FIELD(checkpoint.rank_sync), boolean(), active, "barrier after each save"));
  t.push_back(key("checkpoint.randomize_tensor", FIELD(checkpoint.randomize_tensor), boolean(), active, "random (true) or constant checkpoint content"));
  t.push_back(key("checkpoint.recovery_rank_shift", FIELD(checkpoint.recovery_rank_shift), boolean(), active, "read a shard written by a rank on another node"));
  t.push_back(key("checkpoint.odirect", FIELD(checkpoint.odirect), boolean(), active, "write and read checkpoint files with O_DIRECT (aligned pieces; the unaligned tail without)", true));
  t.push_back(key("checkpoint.atomic_files", FIELD(checkpoint.atomic_files), boolean(), active, "write each file under a hidden temporary name and rename it when complete, so an interrupted save never leaves a file that looks whole", true));
  t.push_back(key("checkpoint.evict", FIELD(checkpoint.evict), enumeration<Evict>(), active, "empty the page cache of the written checkpoints before a checkpoint-only run reads them: fadvise (per file), drop_caches (machine-wide, root) or none", true));
  t.push_back(key("checkpoint.file_layout", FIELD(checkpoint.file_layout), enumeration<CheckpointLayout>(), active, "torch: the torch.save archives DLIO writes; per_tensor: each tensor's raw bytes in a file of its own; per_rank: all of a rank's tensors back to back in one file (writes only)", true));
  t.push_back(key("checkpoint.write_buffer_bytes", FIELD(checkpoint.write_buffer_bytes), bytes(1), active, "the buffer tensor bytes are written from: the largest write call (a multiple of 4096 with odirect)", true));
  t.push_back(key("checkpoint.async", FIELD(checkpoint.async), boolean(), active, "save in the background: each rank snapshots its shard into a host buffer (the training stall), then a writer thread flushes it while training goes on", true));
  t.push_back(key("checkpoint.snapshot_bandwidth", FIELD(checkpoint.snapshot_bandwidth), bytes(0), active, "async: bytes per second of the emulated GPU-to-host snapshot (\"25GB\": PCIe 4.0 x16)", true));
  t.push_back(key("checkpoint.async_inflight", FIELD(checkpoint.async_inflight), integer(), active, "async: checkpoints being flushed at once; a new one waits for a free slot (stall too)", true));
  t.push_back(key("checkpoint.async_buffer_bytes", FIELD(checkpoint.async_buffer_bytes), bytes(0), active, "async: host memory per rank for snapshots; a larger shard is staged through it in pieces as the flush frees them", true));
  t.push_back(noted("checkpoint.checkpoint_mechanism", python_only, "framework save routine; trainio writes the same files itself"));
  t.push_back(noted("checkpoint.checkpoint_mechanism_classname", python_only, "custom Python checkpoint class"));
  t.push_back(noted("checkpoint.ksm", python_only, "kernel same-page merging for DLIO's in-memory checkpoint; trainio streams from a small buffer", {}, true));
  t.push_back(noted("checkpoint.model_size", active, "DLIO 1.0's name; read as model.model_size_bytes when that is absent", "model.model_size_bytes"));
  t.push_back(noted("checkpoint.num_checkpoints", ignored, "old name; DLIO ignores it", "checkpoint.num_checkpoints_write"));
  t.push_back(noted("checkpoint.recovery_after_steps", ignored, "DLIO ignores it"));
  t.push_back(noted("checkpoint.model_datatype", ignored, "DLIO reads it under model:", "model.model_datatype"));
  t.push_back(noted("checkpoint.optimizer_datatype", ignored, "DLIO reads it under model:", "model.optimizer_datatype"));
  t.push_back(noted("checkpoint.optimization_groups", ignored, "DLIO reads it under model:", "model.optimization_groups"));
  t.push_back(noted("checkpoint.num_layers", ignored, "DLIO reads it under model:", "model.num_layers"));
  t.push_back(noted("checkpoint.layer_parameters", ignored, "DLIO reads it under model:", "model.layer_parameters"));
  t.push_back(noted("checkpoint.checkpoint_daos_pool", python_only, "DAOS fork of DLIO; no effect"));
  t.push_back(noted("checkpoint.checkpoint_daos_cont", python_only, "DAOS fork of DLIO; no effect"));
}

// output
[[gnu::noinline]] void output_keys(std::vector<Entry>& t) {
  t.push_back(key("output.folder", FIELD(output.folder), text(), active, "results folder (default trainio-output/<workload>-<time>/); --output overrides"));
  t.push_back(key("output.log_file", FIELD(output.log_file), text(), active, "log file name inside the results folder"));
  t.push_back(key("output.metric.exclude_start_steps", FIELD(output.exclude_start_steps), integer(0), active, "first steps of each block left out of AU and throughput"));
  t.push_back(key("output.metric.exclude_end_steps", FIELD(output.exclude_end_steps), integer(0), active, "last steps of each block left out of AU"));
  t.push_back(key("output.trace_every", FIELD(output.trace_every), integer(1), active, "with traces on: write one storage call in this many per thread (steps and phases always)", true));
}

// profiling
[[gnu::noinline]] void profiling_keys(std::vector<Entry>& t) {
  t.push_back(noted("profiling.profiler", python_only, "DLIO's external profiler (iostat, darshan); trainio measures I/O itself"));
  t.push_back(noted("profiling.iostat_devices", python_only, "devices for DLIO's iostat profiler; trainio reads /proc/diskstats itself"));
}

// metric
[[gnu::noinline]] void metric_keys(std::vector<Entry>& t) {
  t.push_back(key("metric.au", FIELD(metric.au), number(0, 1), active, "accelerator-utilisation pass threshold (0.90 = 90%)"));
}

// top-level sections DLIO never reads
[[gnu::noinline]] void unread_sections_keys(std::vector<Entry>& t) {
  t.push_back(noted("logging", ignored, "DLIO ignores it; use --log-level", {}, true));
  t.push_back(noted("transformer", ignored, "DLIO ignores a top-level transformer section", "model.transformer", true));
}

std::vector<Entry> build() {
  std::vector<Entry> t;
  model_keys(t);
  framework_keys(t);
  workflow_keys(t);
  storage_keys(t);
  dataset_keys(t);
  reader_keys(t);
  train_keys(t);
  cache_keys(t);
  evaluation_keys(t);
  checkpoint_keys(t);
  output_keys(t);
  profiling_keys(t);
  metric_keys(t);
  unread_sections_keys(t);
  return t;
}

#undef FIELD

}  // namespace

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = [] {
    auto t = build();
    const Workload defaults;
    for (auto& e : t) {
      if (!e.get) continue;
      // Every value shown or written (dumps, summary.json, .hydra files) under the one rule for
      // secrets: a secret key's value as '***' (quoted: a bare * begins a YAML alias), URLs without
      // their user-info.
      e.get = [get = e.get, path = e.info.path](const Workload& w) {
        const std::string v = get(w);
        if (!util::is_secret_key(path)) return util::redact(v);
        return v.empty() || v == "''" || v == "\"\"" ? v : fmt::format("'{}'", util::kRedacted);
      };
      e.info.default_text = e.get(defaults);
    }
    return t;
  }();
  return all;
}

const Entry* find_entry(const std::string& path) {
  static const std::map<std::string, const Entry*> index = [] {
    std::map<std::string, const Entry*> m;
    for (const auto& e : entries()) m[e.info.path] = &e;
    return m;
  }();
  const auto it = index.find(path);
  return it == index.end() ? nullptr : it->second;
}

bool is_section(const std::string& path) {
  for (const auto& s : section_paths())
    if (path == s) return true;
  return false;
}

}  // namespace detail

const std::vector<KeyInfo>& key_catalogue() {
  static const std::vector<KeyInfo> all = [] {
    std::vector<KeyInfo> v;
    for (const auto& e : detail::entries()) v.push_back(e.info);
    return v;
  }();
  return all;
}

const KeyInfo* find_key(const std::string& path) {
  const auto* e = detail::find_entry(path);
  return e ? &e->info : nullptr;
}

const std::vector<std::string>& section_paths() {
  static const std::vector<std::string> all = {
      "model",   "model.parallelism", "model.transformer", "workflow",  "storage", "storage.storage_options",
      "dataset", "dataset.hdf5", "dataset.parquet",      "reader",            "train",     "evaluation",
      "checkpoint", "output",         "output.metric",     "profiling", "metric", "cache"};
  return all;
}

std::vector<std::string> pending_changes(const Workload& w) {
  std::vector<std::string> out;
  for (const auto& e : detail::entries())
    if (e.info.status == KeyStatus::pending && e.get && e.get(w) != e.info.default_text) out.push_back(e.info.path);
  return out;
}

const char* status_label(KeyStatus status) {
  switch (status) {
    case KeyStatus::active: return "used";
    case KeyStatus::pending: return "accepted, not yet used";
    case KeyStatus::python_only: return "no effect (Python-only in DLIO)";
    case KeyStatus::dlio_ignored: return "no effect (DLIO ignores it too)";
  }
  return "?";
}

}  // namespace trainio::config
