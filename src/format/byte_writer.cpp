#include "format/format.hpp"

namespace trainio::format {

void ByteWriter::write(const plan::DataFile& file, const std::string& path, ContentSource& content) {
  storage::File out = storage::File::open(path, {.access = storage::Access::write_new});
  write_bytes(file, out, content);
  out.close();  // a failing close can carry a deferred write error
}

}  // namespace trainio::format
