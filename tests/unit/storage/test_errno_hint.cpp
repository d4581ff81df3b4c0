// The "fix:" line of a failed storage call (storage/errno_hint.hpp): by errno, and naming the
// folder the user set when the path lies inside one.
#include <catch2/catch.hpp>

#include <cerrno>
#include <string>

#include "storage/errno_hint.hpp"
#include "unit/text.hpp"

using namespace trainio::storage;
using trainio::test::contains;

namespace {

// Names folders for one test and forgets them after it, whatever it asserts.
struct Named {
  Named() {
    name_folder("/results/run1", "the results folder (--output or output.folder)");
    name_folder("/data", "dataset.data_folder", true);
    name_folder("/data/ckpt", "checkpoint.checkpoint_folder");
  }
  ~Named() { forget_folder_names(); }
  Named(const Named&) = delete;
  Named& operator=(const Named&) = delete;
};
}  // namespace

TEST_CASE("each errno gets its own fix, never an empty one") {
  forget_folder_names();
  CHECK(contains(hint_for_errno("write", ENOSPC), "is full"));
  CHECK(contains(hint_for_errno("write", EDQUOT), "is full"));
  for (const int err : {EACCES, EPERM, EROFS}) CHECK(contains(hint_for_errno("open", err), "permissions"));
  CHECK(contains(hint_for_errno("open", ENOENT), "generate the dataset"));
  CHECK(contains(hint_for_errno("mkdir", ENOTDIR), "a file stands where a folder is expected"));
  CHECK(contains(hint_for_errno("open", EISDIR), "a folder stands where a file is expected"));
  CHECK(contains(hint_for_errno("open", ELOOP), "loop"));
  CHECK(contains(hint_for_errno("open", ENAMETOOLONG), "255 bytes"));
  CHECK(contains(hint_for_errno("open", EINVAL), "O_DIRECT"));  // open's EINVAL: a mode the file system lacks
  CHECK_FALSE(contains(hint_for_errno("pread", EINVAL), "O_DIRECT"));
  CHECK(contains(hint_for_errno("pread", EIO), "I/O error"));
  CHECK_FALSE(hint_for_errno("close", EBADF).empty());
  CHECK_FALSE(hint_for_errno("close", 0).empty());
}

TEST_CASE("a full disk or a missing folder names the folder the user set") {
  const Named named;
  CHECK(hint_for_errno("write", ENOSPC, "/results/run1/summary.json") ==
        "the file system holding the results folder (--output or output.folder) is full: free space there, or point it "
        "elsewhere");
  // The deepest named folder that holds the path.
  CHECK(contains(hint_for_errno("write", ENOSPC, "/data/ckpt/step1/model.pt"), "checkpoint.checkpoint_folder"));
  CHECK(contains(hint_for_errno("write", ENOSPC, "/data/train/img_1.npz"), "dataset.data_folder"));
  // Missing under the results folder: the path is wrong; missing in the dataset: generate it.
  CHECK(hint_for_errno("open", ENOENT, "/results/run1/sub/x") ==
        "check the path: a folder in it is missing (the results folder (--output or output.folder) is '/results/run1')");
  CHECK(contains(hint_for_errno("open", ENOENT, "/data/train/img_1.npz"), "generate the dataset"));
  // Outside every named folder, or a folder that only starts with the same letters: the plain fix.
  CHECK(contains(hint_for_errno("write", ENOSPC, "/elsewhere/f"), "point the data/checkpoint folder elsewhere"));
  CHECK(contains(hint_for_errno("write", ENOSPC, "/results/run10/f"), "point the data/checkpoint folder elsewhere"));
  CHECK(contains(hint_for_errno("write", ENOSPC, "/results/run1/../run2/f"), "point the data/checkpoint folder elsewhere"));
  CHECK(contains(hint_for_errno("write", ENOSPC, ""), "point the data/checkpoint folder elsewhere"));
}
