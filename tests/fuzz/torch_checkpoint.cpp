// Fuzz target: loading a PyTorch checkpoint file (torch.load as trainio re-enacts it, the read
// side of checkpoint recovery). The expected archive is a small state dict; an empty corpus is
// seeded with the file torch.save (trainio's) writes for it. Any other bytes must end in a
// dataset error naming the file, never a crash or an unbounded read.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/overlap_thread.hpp"
#include "format/python_io.hpp"
#include "format/torch/torch_file.hpp"
#include "fuzz_support.hpp"

using namespace trainio;

namespace {

const format::torch::Archive& archive() {
  static const format::torch::Archive a = [] {
    plan::StateDict s;
    s.add("0", plan::TensorSpec{300, config::ModelDataType::fp16});
    s.add("1", plan::TensorSpec{5, config::ModelDataType::fp32});
    return format::torch::Archive(s);
  }();
  return a;
}

const std::string& path() {
  static const std::string p = fuzz::scratch_folder() + "/model.pt";
  return p;
}

util::Bytes& scratch() {
  static util::Bytes s(64 * 1024);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  const std::string corpus = fuzz::empty_corpus(*argc, *argv);
  if (corpus.empty()) return 0;
  format::PyBufferedWriter out;
  out.open(path());
  format::torch::TensorContent ones(nullptr);
  engine::OverlapThread beside;
  format::torch::save(archive(), out, ones, scratch(), beside);
  out.close();
  fuzz::add_seed(corpus, "model.pt", fuzz::read_file(path()));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::write_file(path(), std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean_errors([&] {
    format::PyBufferedFile in;
    in.open(path());
    (void)format::torch::load(archive(), in, scratch());
    in.close();
  });
  return 0;
}
