#include "kv/engine.h"

#include "util/error.h"

namespace eventkv::kv {

std::string_view precision_name(compute::ActivationPrecision products) {
  return products == compute::ActivationPrecision::kInt8 ? "fast" : "exact";
}

model::Panels panels_for(compute::ActivationPrecision products) {
  return products == compute::ActivationPrecision::kInt8 ? model::Panels::kInt8
                                                         : model::Panels::kF32;
}

compute::ActivationPrecision precision_by_name(std::string_view name) {
  if (name == "exact" || name.empty()) return compute::ActivationPrecision::kF32;
  if (name == "fast") return compute::ActivationPrecision::kInt8;
  fail("unknown precision '", name, "' (exact, fast)");
}

}  // namespace eventkv::kv
