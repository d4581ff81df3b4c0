#pragma once
// Buffers touched by the kernel before a measurement, not only by the process. Under shadow
// paging (PVM-style nested virtualisation, as on the development VM) the guest kernel has page
// tables of its own: its first access to each page of a user buffer (the first write() from it,
// or read() into it) traps to the hypervisor, about 7 us a page once, so the first 4 MiB write
// from a new buffer took 7-9 ms against 1 ms for the next (docs/building.md, docs/checkpoints.md).
// A memset touches the pages for the process only; the kernel's own write into them covers both.

#include <cstddef>

#include "util/page_aligned.hpp"

namespace trainio::util {

// Zeroes `size` bytes at `data` by read()ing /dev/zero into them; memset where /dev/zero cannot
// be read.
void zero_through_kernel(void* data, std::size_t size);

// `buffer` made `size` bytes long, all zero, every page touched by the process and the kernel.
void resize_touched(Bytes& buffer, std::size_t size);

}  // namespace trainio::util
