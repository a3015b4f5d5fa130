// The outcome of a donor pair (SPEC section 2): each side's answer, the pair's
// label and its paired logit margin, as the probe labels pairs while measuring.
// The statistics over many pairs are analysis/stats.h.
#pragma once

#include <string_view>
#include <vector>

namespace eventkv::probe {

enum class Outcome { kAligned, kAnti, kUnmoved, kOther, kTie };

std::string_view outcome_name(Outcome outcome);

// A-served predicted `predicted_a`, B-served `predicted_b`; A's true value is
// value_a and B's value_b (candidate indices).
Outcome classify(int predicted_a, int predicted_b, int value_a, int value_b);

// The noise floor of an answer, in nats. Two correct computations of one
// pair give scores up to 2.9e-5 nats apart (eventkv rerun of 27 stored
// SmolLM2 pairs under the AVX-512, AVX2 and x86-64 kernels against the
// archive's scores, 1,620 scores: sums in other orders), so the lead of a
// side's top candidate over the runner-up can move by up to 5.8e-5. The
// floor lies above that (and is rerun's tolerance across builds). A side
// leading by less gives no answer, and its pair is a tie: counted among
// the pairs, never aligned or anti.
inline constexpr double kTieFloor = 1e-4;
// Answers resting on a lead below this are near the floor (reported per
// cell, so a reader sees how many labels a tenfold noise would move).
inline constexpr double kNearTieFloor = 10 * kTieFloor;

// A side's answer: the top candidate and its lead over the runner-up
// (infinite with one candidate).
struct Answer {
  int candidate = 0;
  double lead = 0.0;
};

Answer answer_of(const std::vector<double>& log_probs);

// classify() of the two answers, or kTie when either leads by less than
// kTieFloor.
Outcome label(const Answer& a, const Answer& b, int value_a, int value_b);

// The paired logit margin toward the donors' values: how much more the
// A-served side prefers A's value over B's than the B-served side does.
double paired_margin(const std::vector<double>& a, const std::vector<double>& b, int value_a,
                     int value_b);

}  // namespace eventkv::probe
