#pragma once
// How alike a real job's trace and its replay's trace are: documented parts, each in [0, 1],
// and their mean (docs/capture.md gives each part's formula).

#include <optional>
#include <string>
#include <vector>

#include "capture/profile.hpp"

namespace trainio::capture {

struct ScorePart {
  std::string name;
  std::optional<double> score;  // nullopt: not comparable (`note` says why); left out of the total
  std::string real, replay;     // the figures compared, as text
  std::string note;
};

struct Score {
  std::vector<ScorePart> parts;
  double total = 0;  // mean of the parts that have a score
};

Score score(const Profile& real, const Profile& replay);

// min(a, b) / max(a, b); 1 when both are 0.
double ratio(double a, double b);
// 1 - |log2(a / b)| / scale, within [0, 1]: two figures' distance in octaves.
double octave_closeness(double a, double b, double scale);
// 1 - (octaves between the distributions) / scale, within [0, 1]; nullopt when either is empty.
std::optional<double> closeness(const LogHistogram& a, const LogHistogram& b, double scale_octaves);

std::string score_text(const Score& s);
std::string score_json(const Score& s);

}  // namespace trainio::capture
