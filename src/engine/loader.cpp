#include "engine/loader.hpp"

#include "engine/dali_loader.hpp"
#include "engine/pytorch_loader.hpp"
#include "engine/tensorflow_loader.hpp"

namespace trainio::engine {

std::unique_ptr<Loader> make_loader(const config::Workload& w, const plan::DatasetLayout& layout) {
  switch (w.reader.data_loader) {
    case config::DataLoader::tensorflow:
      if (w.dataset.format == config::Format::tfrecord) return std::make_unique<TensorflowLoader>(w, layout);
      return std::make_unique<PytorchLoader>(w, layout, PytorchLoader::Order::thread_slices);
    case config::DataLoader::dali:
    case config::DataLoader::native_dali:
      return std::make_unique<DaliLoader>(w, layout);
    case config::DataLoader::pytorch:
    case config::DataLoader::synthetic:
      break;
  }
  return std::make_unique<PytorchLoader>(w, layout);
}

}  // namespace trainio::engine
