#pragma once
// What was built: reported in results so a figure can be traced to the code that produced it.

namespace trainio::util {

const char* version();
const char* git_commit();
const char* build_type();
const char* compiler();

}  // namespace trainio::util
