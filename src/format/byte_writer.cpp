#include "format/format.hpp"

#include "util/error.hpp"

namespace trainio::format {

std::uint64_t FileWriter::write_shared(const plan::DataFile&, const std::string&, SharedWriting&, ContentSource&) {
  throw internal_error("this format cannot be written by several ranks at once");
}

std::uint64_t SampleReader::read_run_from_memory(const SampleRequest& r, std::uint64_t stride, std::uint64_t count,
                                               std::uint64_t& bytes) {
  SampleRequest one = r;
  bytes = 0;
  std::uint64_t served = 0;
  for (std::uint64_t each = 0; served < count && read_from_memory(one, each); ++served) {
    bytes += each;
    one.sample += stride;
  }
  return served;
}

SampleRange share_of(std::uint64_t samples, int rank, int ranks) {
  const auto r = static_cast<std::uint64_t>(rank), n = static_cast<std::uint64_t>(ranks);
  return {samples * r / n, samples * (r + 1) / n};
}

std::uint64_t largest_share(std::uint64_t samples, int ranks) {
  const auto n = static_cast<std::uint64_t>(ranks);
  return (samples + n - 1) / n;  // shares of floor(samples * r / n) bounds differ by at most one
}

}  // namespace trainio::format
