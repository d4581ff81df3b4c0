#pragma once
// The process's open-files limit, raised to what a tool that holds many files open needs: the
// soft limit (1,024 on many systems) up to the hard one, which an unprivileged process may do.

#include <cstdint>
#include <string_view>

namespace trainio::util {

// Raises the soft limit to at least `needed` descriptors; throws an io error naming `what` needs
// them and the hard limit when even that is lower.
void ensure_open_files(std::uint64_t needed, std::string_view what);

// Whether a failed open's errno says the file is absent (not a limit or a permission).
bool absent(int error_number);

}  // namespace trainio::util
