#include "probe/outcome.h"

#include <algorithm>
#include <limits>

#include "util/error.h"

namespace eventkv::probe {

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kAligned:
      return "aligned";
    case Outcome::kAnti:
      return "anti";
    case Outcome::kUnmoved:
      return "unmoved";
    case Outcome::kOther:
      return "other";
    case Outcome::kTie:
      return "tie";
  }
  return "?";
}

Outcome classify(int predicted_a, int predicted_b, int value_a, int value_b) {
  if (predicted_a == value_a && predicted_b == value_b) return Outcome::kAligned;
  if (predicted_a == value_b && predicted_b == value_a) return Outcome::kAnti;
  if (predicted_a == predicted_b) return Outcome::kUnmoved;
  return Outcome::kOther;
}

Answer answer_of(const std::vector<double>& log_probs) {
  if (log_probs.empty()) fail("answer_of: no candidates");
  Answer answer{0, std::numeric_limits<double>::infinity()};
  double runner_up = -std::numeric_limits<double>::infinity();
  for (size_t i = 1; i < log_probs.size(); ++i) {
    const double top = log_probs[static_cast<size_t>(answer.candidate)];
    if (log_probs[i] > top) {
      runner_up = top;
      answer.candidate = static_cast<int>(i);
    } else {
      runner_up = std::max(runner_up, log_probs[i]);
    }
  }
  answer.lead = log_probs[static_cast<size_t>(answer.candidate)] - runner_up;
  return answer;
}

Outcome label(const Answer& a, const Answer& b, int value_a, int value_b) {
  if (a.lead < kTieFloor || b.lead < kTieFloor) return Outcome::kTie;
  return classify(a.candidate, b.candidate, value_a, value_b);
}

double paired_margin(const std::vector<double>& a, const std::vector<double>& b, int value_a,
                     int value_b) {
  const auto va = static_cast<size_t>(value_a);
  const auto vb = static_cast<size_t>(value_b);
  return (a[va] - a[vb]) - (b[va] - b[vb]);
}

}  // namespace eventkv::probe
