#include "plan/reshard.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.hpp"

namespace trainio::plan {

namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

const char* const kFixTensor = "choose checkpoint.load_parallelism.tensor to divide the heads, or load with the save's layout";

}  // namespace

int saved_rank_count(const config::Workload& w, int ranks, int previous_ranks) {
  const bool saves_own = w.workflow.train || w.checkpoint.num_checkpoints_write > 0;
  return saves_own || previous_ranks <= 0 ? ranks : previous_ranks;
}

ParallelLayout saved_layout(const config::Workload& w, int saved_ranks) {
  const auto& par = w.model.parallelism;
  ParallelLayout s{static_cast<int>(par.tensor), static_cast<int>(par.pipeline), 1};
  s.data = par.data > 0 ? static_cast<int>(par.data) : std::max(1, saved_ranks / (s.tensor * s.pipeline));
  return s;
}

ParallelLayout load_layout(const config::Workload& w, int ranks, int saved_ranks) {
  const auto& lp = w.checkpoint.load_parallelism;
  const ParallelLayout saved = saved_layout(w, saved_ranks);
  // No layout asked for and the save's ranks loading: the save's own layout, whatever the ranks
  // (checkpoint.mode: subset runs part of a larger job's layout).
  if (lp.tensor <= 0 && lp.pipeline <= 0 && lp.data <= 0 && ranks == saved_ranks) return saved;
  ParallelLayout l{lp.tensor > 0 ? static_cast<int>(lp.tensor) : saved.tensor,
                   lp.pipeline > 0 ? static_cast<int>(lp.pipeline) : saved.pipeline, 1};
  const int mp = l.tensor * l.pipeline;
  if (ranks % mp != 0)
    throw config_error(fmt::format("checkpoint.load_parallelism: the load runs on {} rank{}, not a multiple of tensor x "
                                   "pipeline = {} x {} = {}",
                                   ranks, ranks == 1 ? "" : "s", l.tensor, l.pipeline, mp),
                       fmt::format("run a multiple of {} ranks, or change checkpoint.load_parallelism.tensor or .pipeline", mp));
  l.data = ranks / mp;
  if (lp.data > 0 && lp.data != l.data)
    throw config_error(fmt::format("checkpoint.load_parallelism.data = {}, but {} ranks / (tensor x pipeline = {}) = {}",
                                   lp.data, ranks, mp, l.data),
                       fmt::format("set checkpoint.load_parallelism.data={} or leave it unset, or run with {} ranks", l.data,
                                   lp.data * mp));
  if (l == saved) return l;
  // A reshard: the tensors must be the transformer's, whose pieces are known element by element.
  const auto& m = w.model;
  auto refuse = [&](const std::string& key, const std::string& what, const std::string& fix) {
    throw config_error(fmt::format("{}: the load's layout (tensor {} x pipeline {} x data {}) differs from the save's "
                                   "(tensor {} x pipeline {} x data {}), and {}",
                                   key, l.tensor, l.pipeline, l.data, saved.tensor, saved.pipeline, saved.data, what),
                       fix);
  };
  if (m.type != "transformer" || !m.layer_parameters.empty() || !m.optimization_groups.empty() || m.num_layers <= 0)
    refuse("checkpoint.load_parallelism", "only a transformer model (model.type: transformer with model.num_layers) can be resharded",
           fmt::format("load on the save's {} ranks with its layout, or describe the model as a transformer", saved.ranks()));
  if (l.pipeline > m.num_layers)
    refuse("checkpoint.load_parallelism.pipeline", fmt::format("{} stages exceed model.num_layers = {}", l.pipeline, m.num_layers),
           "set checkpoint.load_parallelism.pipeline to at most model.num_layers");
  if (m.parallelism.zero_stage == 3 && l.pipeline > 1)
    refuse("checkpoint.load_parallelism.pipeline", "ZeRO stage 3 does not combine with pipeline parallelism",
           "set checkpoint.load_parallelism.pipeline=1");
  if (m.transformer.num_attention_heads % l.tensor != 0 || m.transformer.num_kv_heads % l.tensor != 0)
    refuse("checkpoint.load_parallelism.tensor",
           fmt::format("{} attention heads ({} kv heads) do not divide among {} tensor-parallel ranks",
                       m.transformer.num_attention_heads, m.transformer.num_kv_heads, l.tensor),
           kFixTensor);
  if (w.checkpoint.recovery_rank_shift)
    refuse("checkpoint.recovery_rank_shift", "a resharded load reads every saved file it needs, whichever node wrote it",
           "set checkpoint.recovery_rank_shift=False");
  if (w.checkpoint.odirect)
    refuse("checkpoint.odirect", "a resharded load reads unaligned ranges, which O_DIRECT cannot",
           "set checkpoint.odirect=False");
  if (w.checkpoint.checkpoint_folder.starts_with("s3://"))
    refuse("checkpoint.checkpoint_folder", "resharded loads from an S3 bucket are not built",
           "load with the save's layout, or use a file system");
  return l;
}

ReshardPlan::ReshardPlan(const config::Workload& w, ParallelLayout saved, ParallelLayout load)
    : model_(w.model),
      type_(w.checkpoint.type),
      saved_(saved),
      load_(load),
      saved_plan_(w, saved.ranks()),
      parameters_(saved_plan_.parameters()) {}

int ReshardPlan::saved_stage_of(std::uint64_t layer) const {
  for (int s = 0; s < saved_.pipeline; ++s) {
    const auto [first, last] = stage_layers(model_, saved_.pipeline, s);
    if (layer >= first && layer <= last) return s;
  }
  return saved_.pipeline - 1;
}

// The storage key of tensor `index` of `layer` in its saved file: keys count the non-empty
// tensors in the order the file's dict holds them (layers of the stage, then their tensors).
std::size_t ReshardPlan::model_key(int stage, std::uint64_t layer, std::size_t index, bool layer_file) const {
  const std::uint64_t shard = model_.parallelism.zero_stage == 3 ? u(saved_.data) : 1;
  auto count = [&](std::uint64_t l, std::size_t below) {
    const auto sizes = layer_tensor_elements(model_, l, u(saved_.tensor), shard);
    return static_cast<std::size_t>(std::count_if(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(std::min(below, sizes.size())),
                                                  [](std::uint64_t e) { return e > 0; }));
  };
  std::size_t key = count(layer, index);
  if (!layer_file)
    for (std::uint64_t l = stage_layers(model_, saved_.pipeline, stage).first; l < layer; ++l) key += count(l, ~std::size_t{0});
  return key;
}

void ReshardPlan::add(ReshardReads& out, int saved_rank, const std::string& name, ReshardPiece piece) const {
  auto it = std::find_if(out.files.begin(), out.files.end(), [&](const ReshardFile& f) { return f.file.name == name; });
  if (it == out.files.end()) {
    ReshardFile f;
    f.saved_rank = saved_rank;
    for (auto& file : saved_plan_.files_of(saved_rank))
      if (file.name == name) f.file = std::move(file);
    if (f.file.name.empty()) throw internal_error(fmt::format("saved rank {} writes no file {}", saved_rank, name));
    out.files.push_back(std::move(f));
    it = out.files.end() - 1;
  }
  it->pieces.push_back(piece);
}

void ReshardPlan::model_reads(int rank, ReshardReads& out) const {
  const std::uint64_t T = u(load_.tensor), D = u(load_.data), Ts = u(saved_.tensor), Ds = u(saved_.data);
  const int tp = rank % load_.tensor, pp = (rank / load_.tensor) % load_.pipeline;
  const std::uint64_t dp = u(rank / (load_.tensor * load_.pipeline));
  const std::int64_t zero = model_.parallelism.zero_stage;
  const std::uint64_t es = config::element_size(model_.model_datatype);
  const int mps_count = saved_.tensor * saved_.pipeline;
  const auto [first, last] = stage_layers(model_, load_.pipeline, pp);
  for (std::uint64_t l = first; l <= last; ++l) {
    const auto whole = layer_tensor_elements(model_, l, 1, 1);
    const int stage = saved_stage_of(l);
    for (std::size_t i = 0; i < whole.size(); ++i) {
      const std::uint64_t E = whole[i];
      const bool split = tensor_parallel(model_, l, i);
      // What this rank holds: [a, b) of the flattened tensor.
      const std::uint64_t St = split ? E / T : E;
      std::uint64_t a = split ? u(tp) * St : 0, len = St;
      if (zero == 3) {
        a += dp * (St / D);
        len = St / D;
      }
      if (len == 0) continue;
      const std::uint64_t b = a + len;
      out.shard_bytes += len * es;
      // The saved pieces: tp slice ts of Sts elements, ZeRO-3 piece ds of Sds inside it.
      const std::uint64_t Sts = split ? E / Ts : E, Sds = zero == 3 ? Sts / Ds : Sts;
      std::uint64_t covered = 0;
      auto take = [&](std::uint64_t ts, std::uint64_t ds) {
        const std::uint64_t start = (split ? ts * Sts : 0) + ds * Sds;
        const std::uint64_t x = std::max(a, start), y = std::min(b, start + Sds);
        if (Sds == 0 || x >= y) return;
        covered += y - x;
        const int mp = static_cast<int>(ts) + saved_.tensor * stage;
        const bool layer_file = (zero == 1 || zero == 2) && saved_.pipeline > 1;
        int dps = 0;
        std::string name;
        if (zero == 3) {
          dps = static_cast<int>(ds);
          name = fmt::format("zero_pp_rank_{}_mp_rank_{}_model_states.pt", dps, mp);
        } else if (zero == 0) {
          dps = type_ == config::CheckpointType::all_ranks ? static_cast<int>(dp % Ds) : 0;
          name = fmt::format("zero_pp_rank_{}_mp_rank_{}_model_states.pt", dps, mp);
        } else {
          name = layer_file ? fmt::format("layer_{}-model_{}_model_states.pt", l, mp) : fmt::format("model_{}_model_states.pt", mp);
        }
        add(out, dps * mps_count + mp, name, {model_key(stage, l, i, layer_file), (x - start) * es, (y - x) * es});
      };
      const std::uint64_t t_first = split && Sts > 0 ? a / Sts : u(tp) % Ts;
      const std::uint64_t t_last = split && Sts > 0 ? std::min(Ts - 1, (b - 1) / Sts) : t_first;
      for (std::uint64_t ts = t_first; ts <= t_last; ++ts) {
        if (zero != 3) {
          take(ts, 0);
          continue;
        }
        if (Sds == 0) continue;
        const std::uint64_t base = split ? ts * Sts : 0;
        const std::uint64_t d_first = a > base ? (a - base) / Sds : 0;
        const std::uint64_t d_last = b - 1 < base ? 0 : std::min(Ds - 1, (b - 1 - base) / Sds);
        for (std::uint64_t ds = d_first; ds <= d_last; ++ds) take(ts, ds);
      }
      out.unsaved_bytes += (len - covered) * es;
    }
  }
}

void ReshardPlan::optimizer_reads(int rank, ReshardReads& out) const {
  if (parameters_ == 0) return;
  const std::int64_t zero = model_.parallelism.zero_stage;
  const std::uint64_t es = config::element_size(model_.optimizer_datatype);
  const std::uint64_t MPl = u(load_.tensor) * u(load_.pipeline), MPs = u(saved_.tensor) * u(saved_.pipeline);
  const std::uint64_t D = u(load_.data), Ds = u(saved_.data);
  const std::uint64_t mp = u(rank) % MPl, dp = u(rank) / MPl;
  const std::uint64_t n = zero > 0 ? parameters_ / (D * MPl) : parameters_ / MPl;
  const std::uint64_t ns = zero > 0 ? parameters_ / (Ds * MPs) : parameters_ / MPs;
  const std::uint64_t holders = zero > 0 ? Ds * MPs : MPs;
  const std::uint64_t small = 5 * u(model_.transformer.hidden_size);
  if (n == 0) return;  // this place would write no optimizer state
  const std::uint64_t a = (zero > 0 ? mp * D + dp : mp) * n, b = a + n;
  const std::uint64_t groups[6] = {ns, small, ns, small, ns, small};
  auto key = [&](std::size_t g) {
    return static_cast<std::size_t>(std::count_if(groups, groups + g, [](std::uint64_t e) { return e > 0; }));
  };
  auto holder = [&](std::uint64_t k, int& saved_rank) {
    const std::uint64_t mps = zero > 0 ? k / Ds : k;
    const std::uint64_t dps = zero > 0 ? k % Ds : (type_ == config::CheckpointType::all_ranks ? dp % Ds : 0);
    saved_rank = static_cast<int>(dps * MPs + mps);
    return fmt::format("zero_pp_rank_{}_mp_rank_{}_optim_states.pt", dps, mps);
  };
  for (std::size_t g = 0; g < 3; ++g) {
    out.shard_bytes += n * es + small * es;
    if (ns == 0) {
      out.unsaved_bytes += n * es + small * es;
      continue;
    }
    std::uint64_t covered = 0;
    for (std::uint64_t k = a / ns; k < holders && k * ns < b; ++k) {
      const std::uint64_t x = std::max(a, k * ns), y = std::min(b, (k + 1) * ns);
      if (x >= y) continue;
      covered += y - x;
      int saved_rank = 0;
      const std::string name = holder(k, saved_rank);
      add(out, saved_rank, name, {key(2 * g), (x - k * ns) * es, (y - x) * es});
    }
    out.unsaved_bytes += (n - covered) * es;
    // The small per-rank group: from the saved rank holding the start of this rank's partition.
    int saved_rank = 0;
    const std::string name = holder(std::min(a / ns, holders - 1), saved_rank);
    add(out, saved_rank, name, {key(2 * g + 1), 0, small * es});
  }
}

ReshardReads ReshardPlan::reads_of(int rank) const {
  ReshardReads out;
  model_reads(rank, out);
  optimizer_reads(rank, out);
  return out;
}

}  // namespace trainio::plan
