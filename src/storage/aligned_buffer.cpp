#include "storage/aligned_buffer.hpp"

#include <fcntl.h>
#include <sys/stat.h>

namespace trainio::storage {

DirectAlignment direct_alignment(const std::string& path) {
  DirectAlignment a;
#if defined(STATX_DIOALIGN)
  struct statx st{};
  if (::statx(AT_FDCWD, path.c_str(), 0, STATX_DIOALIGN, &st) == 0 && (st.stx_mask & STATX_DIOALIGN) &&
      st.stx_dio_offset_align > 0) {
    a.memory = st.stx_dio_mem_align;
    a.offset = st.stx_dio_offset_align;
  }
#endif
  // Never below a page: it costs nothing and keeps buffers friendly to every driver.
  if (a.memory < 4096) a.memory = 4096;
  return a;
}

}  // namespace trainio::storage
