// Rotary position embedding. theta_i = position * freq_scale * base^(-2i/n_rot)
// for pair i < n_rot / 2; dimensions at or past n_rot pass through.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace eventkv::compute {

enum class RopePairing { kAdjacent, kHalfSplit };  // (2i, 2i+1) or (i, i + n_rot/2)

struct RopeParams {
  RopePairing pairing = RopePairing::kAdjacent;
  int64_t n_rot = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
};

// cos and sin of every (position, pair): [n_positions, n_rot / 2] each,
// computed in double and rounded once.
struct RopeTable {
  std::vector<float> cos;
  std::vector<float> sin;
};

// RoPE of a model's global or local (sliding-window) layers: local layers use
// their own base and no scaling.
RopeParams rope_params(const model::ModelConfig& config, bool local);
RopeParams layer_rope(const model::ModelConfig& config, int64_t il);

RopeTable make_rope_table(const RopeParams& params, const int32_t* positions, int64_t n_positions);

// Rotates `n_heads` heads of `head_dim` values each, at row `index` of the table.
void apply_rope(const RopeParams& params, const RopeTable& table, int64_t index, float* heads,
                int64_t n_heads, int64_t head_dim);

}  // namespace eventkv::compute
