#pragma once
// A checkpoint-only workload and a transformer small enough to check by hand, for the plan tests:
// h 8, 2 heads with 1 kv head (kv = 4), ffn 16, vocab 10, 2 layers. Per layer 8 + 8 x 16 + 64 + 8 +
// 3 x 16 x 8 = 592 parameters; in all 2 x 80 + 2 x 592 + 8 = 1352.

#include <string>
#include <vector>

#include "config/load.hpp"

namespace trainio::test {

// Saves one checkpoint, and loads `reads` of them (unset: the key's default).
inline config::Workload checkpoint_workload(const std::vector<std::string>& overrides, int reads = -1) {
  std::string text = "framework: pytorch\nworkflow:\n  train: false\n  checkpoint: true\ncheckpoint:\n  num_checkpoints_write: 1\n";
  if (reads >= 0) text += "  num_checkpoints_read: " + std::to_string(reads) + "\n";
  return config::load_text(text, "t.yaml", "t", overrides);
}

inline std::vector<std::string> tiny(std::vector<std::string> more) {
  std::vector<std::string> o = {"model.type=transformer", "model.num_layers=2", "model.transformer.hidden_size=8",
                                "model.transformer.num_attention_heads=2", "model.transformer.num_kv_heads=1",
                                "model.transformer.ffn_hidden_size=16", "model.transformer.vocab_size=10"};
  o.insert(o.end(), more.begin(), more.end());
  return o;
}

}  // namespace trainio::test
