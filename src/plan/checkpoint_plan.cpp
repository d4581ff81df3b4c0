#include "plan/checkpoint_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::plan {

namespace {

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

}  // namespace

std::uint64_t transformer_parameters(const config::ModelSection& m) {
  if (m.num_layers <= 0) return 0;
  const auto& t = m.transformer;
  const std::uint64_t h = u(t.hidden_size), ffn = u(t.ffn_hidden_size), vocab = u(t.vocab_size);
  const std::uint64_t kv = h / u(t.num_attention_heads) * u(t.num_kv_heads);
  const std::uint64_t per_layer = h + h * (h + 2 * kv) + h * h + h + 2 * ffn * h + ffn * h;
  return 2 * vocab * h + per_layer * u(m.num_layers) + h;
}

std::string checkpoint_root(const config::Workload& w) {
  return util::strip_trailing_slashes(util::join(w.storage.storage_root, w.checkpoint.checkpoint_folder));
}

std::string CheckpointPlan::folder_name(std::uint64_t epoch, std::uint64_t step) {
  return fmt::format("global_epoch{}_step{}", epoch, step);
}

CheckpointPlan::CheckpointPlan(const config::Workload& w, int ranks)
    : model_(w.model),
      type_(w.checkpoint.type),
      tp_(static_cast<int>(w.model.parallelism.tensor)),
      pp_(static_cast<int>(w.model.parallelism.pipeline)),
      mp_(tp_ * pp_),
      dp_(0),
      transformer_(w.model.type == "transformer") {
  const auto& par = w.model.parallelism;
  if (par.data > 0) {
    dp_ = static_cast<int>(par.data);
    const std::int64_t job = par.data * mp_;
    if (job < ranks)
      throw config_error(fmt::format("model.parallelism.data x tensor x pipeline = {} x {} x {} = {} ranks, but the run has {}",
                                     par.data, tp_, pp_, job, ranks),
                         fmt::format("run with {} ranks, or raise model.parallelism.data", job));
    subset_ = job > ranks;
    if (subset_ && w.checkpoint.mode != config::CheckpointMode::subset)
      throw config_error(fmt::format("the parallel layout needs {} ranks and the run has {}", job, ranks),
                         "set checkpoint.mode=subset to write only these ranks' part of the checkpoint, or run with all ranks");
  } else {
    if (ranks % mp_ != 0)
      throw config_error(fmt::format("{} rank{} {} not a multiple of tensor x pipeline parallelism = {} x {} = {}", ranks,
                                     ranks == 1 ? "" : "s", ranks == 1 ? "is" : "are", tp_, pp_, mp_),
                         fmt::format("run a multiple of {} ranks, or change model.parallelism", mp_));
    dp_ = ranks / mp_;
  }
  if (transformer_) parameters_ = transformer_parameters(w.model);
  for (int r = 0; r < ranks; ++r) {
    std::uint64_t rank_bytes = 0;
    for (const auto& f : files_of(r)) {
      rank_bytes += f.tensor_bytes;
      (f.name.find("optim_states") != std::string::npos ? optimizer_bytes_ : model_bytes_) += f.tensor_bytes;
    }
    total_bytes_ += rank_bytes;
    max_rank_bytes_ = std::max(max_rank_bytes_, rank_bytes);
    if (rank_bytes > 0) ++writing_ranks_;
  }
}

RankLayout CheckpointPlan::layout_of(int rank) const {
  return {rank % tp_, (rank / tp_) % pp_, rank / mp_, rank % mp_};
}

bool CheckpointPlan::writes(int rank) const {
  // DLIO: with ZeRO 0 only the first data-parallel replica holds distinct state.
  if (model_.parallelism.zero_stage > 0 || type_ == config::CheckpointType::all_ranks) return true;
  return rank < mp_;
}

std::pair<std::uint64_t, std::uint64_t> CheckpointPlan::stage_layers(int pipeline_rank) const {
  return plan::stage_layers(model_, pp_, pipeline_rank);
}

std::vector<std::uint64_t> CheckpointPlan::layer_tensors(std::uint64_t layer) const {
  return layer_tensor_elements(model_, layer, u(tp_), model_.parallelism.zero_stage == 3 ? u(dp_) : 1);
}

std::pair<std::uint64_t, std::uint64_t> stage_layers(const config::ModelSection& m, int pipeline, int stage) {
  // DLIO's get_layer_index(): transformer layers 1..L dealt to stages, the first L % PP stages
  // one more; stage 0 also holds layer 0, the last stage layers L+1 and L+2.
  const std::int64_t layers = m.num_layers;
  const std::int64_t per = layers / pipeline, rem = layers % pipeline, s = stage;
  std::int64_t start = 0, end = 0;
  if (s < rem) {
    start = s * (per + 1) + 1;
    end = start + per;
  } else {
    start = rem * (per + 1) + (s - rem) * per + 1;
    end = start + per - 1;
  }
  const bool predefined = !m.layer_parameters.empty();
  if (!predefined) {
    if (s == pipeline - 1) end = layers + 2;
    if (s == 0) start = 0;
  }
  if (end < start) return {1, 0};  // no layers
  return {u(start), u(end)};
}

std::vector<std::uint64_t> layer_tensor_elements(const config::ModelSection& m, std::uint64_t layer, std::uint64_t tp,
                                                 std::uint64_t shard) {
  if (!m.layer_parameters.empty()) {
    std::vector<std::uint64_t> out;
    for (const auto p : m.layer_parameters) out.push_back(p / tp);
    return out;
  }
  const auto& t = m.transformer;
  const std::uint64_t h = u(t.hidden_size), ffn = u(t.ffn_hidden_size), vocab = u(t.vocab_size);
  const std::uint64_t kv = h / u(t.num_attention_heads) * u(t.num_kv_heads);
  const std::uint64_t layers = u(m.num_layers);
  if (layer == 0 || layer == layers + 1) return {h * vocab / tp / shard};  // embedding, lm_head
  if (layer == layers + 2) return {h / shard};                             // final norm
  return {h / shard, h * (h + 2 * kv) / tp / shard, h * h / tp / shard, h / shard, h * 2 * ffn / tp / shard,
          h * ffn / tp / shard};
}

bool tensor_parallel(const config::ModelSection& m, std::uint64_t layer, std::size_t index) {
  const std::uint64_t layers = u(m.num_layers);
  if (layer == 0 || layer == layers + 1) return true;
  if (layer == layers + 2) return false;
  return index != 0 && index != 3;  // the two norms are whole on every tensor-parallel rank
}

std::vector<std::uint64_t> CheckpointPlan::optimizer_groups() const {
  const auto& m = model_;
  if (!m.optimization_groups.empty()) return m.optimization_groups;
  if (!transformer_ || m.num_layers <= 0) return {};
  const std::uint64_t n = m.parallelism.zero_stage > 0 ? parameters_ / (u(dp_) * u(mp_)) : parameters_ / u(mp_);
  if (n == 0) return {};
  const std::uint64_t small = 5 * u(m.transformer.hidden_size);
  return {n, small, n, small, n, small};
}

std::vector<CheckpointFile> CheckpointPlan::files_of(int rank) const {
  std::vector<CheckpointFile> files;
  if (!writes(rank)) return files;
  const auto& m = model_;
  const RankLayout at = layout_of(rank);
  auto add = [&](std::string name, StateDict state) {
    const std::uint64_t bytes = state.tensor_bytes();
    files.push_back({std::move(name) + ".pt", std::move(state), bytes});
  };

  // Legacy model: one int8 tensor of model_size_bytes.
  if (!transformer_ && m.model_size_bytes > 0) {
    StateDict s;
    s.add("a", TensorSpec{m.model_size_bytes, config::ModelDataType::int8}, StateDict::Key::literal);
    add(fmt::format("model_states-{}", rank), std::move(s));
  }

  // Layers of this rank's pipeline stage: {layer: {index: tensor}}. Legacy layer_parameters give
  // every layer the same dict of int8 tensors, as DLIO builds it.
  const bool predefined = !m.layer_parameters.empty();
  const bool has_layers = predefined ? m.num_layers > 0 : transformer_ && m.num_layers > 0;
  if (has_layers) {
    const auto [first, last] = stage_layers(at.pp);
    std::vector<std::pair<std::uint64_t, std::shared_ptr<const StateDict>>> layers;
    std::shared_ptr<const StateDict> shared;
    for (std::uint64_t l = first; l <= last; ++l) {
      if (predefined && shared) {
        layers.emplace_back(l, shared);
        continue;
      }
      auto d = std::make_shared<StateDict>();
      const auto dtype = predefined ? config::ModelDataType::int8 : m.model_datatype;
      const auto tensors = layer_tensors(l);
      for (std::size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i] > 0) d->add(std::to_string(i), TensorSpec{tensors[i], dtype});
      if (predefined) shared = d;
      layers.emplace_back(l, std::move(d));
    }
    const std::int64_t zero = m.parallelism.zero_stage;
    if (!layers.empty()) {
      if (zero == 1 || zero == 2) {
        if (at.dp == 0) {
          if (pp_ > 1) {
            for (const auto& [l, d] : layers) add(fmt::format("layer_{}-model_{}_model_states", l, at.mp), *d);
          } else {
            StateDict all;
            for (const auto& [l, d] : layers) all.add(std::to_string(l), d);
            add(fmt::format("model_{}_model_states", at.mp), std::move(all));
          }
        }
      } else {
        StateDict all;
        for (const auto& [l, d] : layers) all.add(std::to_string(l), d);
        add(fmt::format("zero_pp_rank_{}_mp_rank_{}_model_states", at.dp, at.mp), std::move(all));
      }
    }
  }

  // Optimizer state: the groups in optimizer_datatype; legacy groups as DLIO's predefined ones
  // ({'a', 'b'} per group and a combined tensor, int8).
  const auto groups = optimizer_groups();
  if (!groups.empty()) {
    StateDict s;
    if (!m.optimization_groups.empty()) {
      std::uint64_t combined = 0;
      for (std::size_t i = 0; i < groups.size(); ++i) {
        if (groups[i] == 0) continue;
        auto ab = std::make_shared<StateDict>();
        ab->add("a", TensorSpec{groups[i], config::ModelDataType::int8}, StateDict::Key::literal);
        ab->add("b", TensorSpec{groups[i], config::ModelDataType::int8}, StateDict::Key::literal);
        s.add(std::to_string(i), std::move(ab));
        combined += groups[i];
      }
      s.add("combined", TensorSpec{combined, config::ModelDataType::int8}, StateDict::Key::literal);
    } else {
      for (std::size_t i = 0; i < groups.size(); ++i)
        if (groups[i] > 0) s.add(std::to_string(i), TensorSpec{groups[i], m.optimizer_datatype});
    }
    add(fmt::format("zero_pp_rank_{}_mp_rank_{}_optim_states", at.dp, at.mp), std::move(s));
  }
  return files;
}

}  // namespace trainio::plan
