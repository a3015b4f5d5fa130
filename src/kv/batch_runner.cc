#include "kv/batch_runner.h"

#include "util/error.h"

namespace eventkv::kv {

int32_t BatchRunner::add_rows(std::span<const int32_t> tokens,
                              std::span<const compute::KeyRange> context, compute::KeyRange own) {
  if (static_cast<int32_t>(tokens.size()) != own.size() || tokens.empty())
    fail("BatchRunner: ", tokens.size(), " tokens for ", own.size(), " own keys");
  const int32_t first = size();
  const auto& plan = batch_.plan;
  batch_.tokens.insert(batch_.tokens.end(), tokens.begin(), tokens.end());
  batch_.cells.insert(batch_.cells.end(), plan.key_cells.begin() + own.begin,
                      plan.key_cells.begin() + own.end);
  batch_.positions.insert(batch_.positions.end(), plan.key_positions.begin() + own.begin,
                          plan.key_positions.begin() + own.end);
  batch_.plan.add_block(own.size(), context, own);
  return first;
}

std::vector<float> BatchRunner::run(const std::vector<int32_t>& logit_rows,
                                    std::optional<compute::ActivationPrecision> precision) {
  if (batch_.tokens.empty()) fail("BatchRunner: nothing to compute");
  batch_.logit_rows = logit_rows;
  return compute::forward(engine_.model(), arena_.storage(), batch_, engine_.pool(),
                          precision.value_or(engine_.products()), engine_.capture());
}

}  // namespace eventkv::kv
