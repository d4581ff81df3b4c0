// "Did you mean ...?" (config/suggest.hpp): the edit distance, the nearest candidate, and the key
// a misspelled or misplaced key path most likely meant.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/suggest.hpp"

using namespace trainio::config;

TEST_CASE("edit distance counts inserts, deletes, substitutions and swaps of neighbours") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "abc") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("epochs", "epoch") == 1);
  CHECK(edit_distance("ab", "ba") == 1);              // a swap is one edit
  CHECK(edit_distance("batch_size", "bacth_size") == 1);
  CHECK(edit_distance("ca", "abc") == 3);             // optimal string alignment: no edit of a swapped pair
  CHECK(edit_distance("flaw", "lawn") == edit_distance("lawn", "flaw"));
}

TEST_CASE("the closest candidate, only when near enough to be a typo") {
  const std::vector<std::string> keys = {"batch_size", "epochs", "read_threads", "computation_time"};
  CHECK(closest("batchsize", keys) == "batch_size");
  CHECK(closest("epoch", keys) == "epochs");
  CHECK(closest("read_thread", keys) == "read_threads");
  CHECK(closest("computation_tme", keys) == "computation_time");
  CHECK(closest("something_else", keys).empty());
  CHECK(closest("batch_size", {}).empty());
  // A third of the word's length is allowed (at least 2): 12 letters allow 4 edits, not 5.
  CHECK(closest("read_thrXXXX", keys) == "read_threads");
  CHECK(closest("reXX_thrXXXX", keys).empty());
  // A pasted 20,000-character key is refused at once, not after a 20,000 x 10 table per key.
  CHECK(closest(std::string(20000, 'a'), keys).empty());
}

TEST_CASE("a key path's suggestion: a near spelling in its section, else its name in another section") {
  CHECK(suggest_key("reader.batchsize") == "reader.batch_size");
  CHECK(suggest_key("reader.bach_size") == "reader.batch_size");
  CHECK(suggest_key("train.batch_size") == "reader.batch_size");  // the name lives in another section
  CHECK(suggest_key("datset.format") == "dataset.format");
  CHECK(suggest_key("train.computaton_time") == "train.computation_time");
  CHECK(suggest_key("train.epoch") == "train.epoch");  // a known key: DLIO files misspell it (noted, ignored)
  CHECK(suggest_key("readerr") == "reader");  // a section misspelled
  CHECK(suggest_key("completely.unrelated_thing_here").empty());
}
