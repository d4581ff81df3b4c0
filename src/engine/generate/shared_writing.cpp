#include "engine/generate/shared_writing.hpp"

#include "mpi/shared_file.hpp"

namespace trainio::engine {

namespace {

class SharedFileOutput final : public format::SharedOutput {
 public:
  explicit SharedFileOutput(mpi::SharedFile file) : file_(std::move(file)) {}
  void write_at_all(std::uint64_t offset, const void* data, std::uint64_t size) override {
    file_.write_at_all(offset, data, size);
  }
  void close() override { file_.close(); }

 private:
  mpi::SharedFile file_;
};

}  // namespace

std::unique_ptr<format::SharedOutput> MpiSharedWriting::create(const std::string& path) {
  return std::make_unique<SharedFileOutput>(mpi::SharedFile::create(comm_, path));
}

std::int64_t MpiSharedWriting::hdf5_file_access() { return mpi::hdf5_parallel_fapl(); }

std::int64_t MpiSharedWriting::hdf5_collective_transfer() { return mpi::hdf5_collective_dxpl(); }

}  // namespace trainio::engine
