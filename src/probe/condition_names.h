// The names of the five conditions (SPEC section 2), in SPEC order: the probe
// runs and stores its scores under them, and the analysis and the report read
// them back. Names only, so they can use them without the probe's computation.
#pragma once

#include <array>
#include <string_view>

namespace eventkv::probe {

inline constexpr std::string_view kVisible = "visible";
inline constexpr std::string_view kSparseGlobal = "sparse-global";
inline constexpr std::string_view kRecord = "record";
inline constexpr std::string_view kSparseLocal = "sparse-local";
inline constexpr std::string_view kNoCarrier = "no-carrier";

inline constexpr std::array<std::string_view, 5> kConditions = {kVisible, kSparseGlobal, kRecord,
                                                                kSparseLocal, kNoCarrier};

}  // namespace eventkv::probe
