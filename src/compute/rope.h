// Rotary position embedding. theta_i = position * freq_scale * base^(-2i/n_rot)
// for pair i < n_rot / 2; dimensions at or past n_rot pass through. With
// YaRN, pair i's angle blends the scaled angle and the unscaled one
// (position * base^(-2i/n_rot)) by a ramp that is 1 (unscaled) below
// pair yarn_low and 0 (scaled) above yarn_high, and cos and sin are
// multiplied by mscale. With freq_factors (gemma4's proportional RoPE),
// pair i's frequency is divided by freq_factors[i].
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
  bool yarn = false;
  float yarn_low = 0.0f;  // pair indices where the ramp starts and ends
  float yarn_high = 0.0f;
  float mscale = 1.0f;
  std::vector<float> freq_factors;  // [n_rot / 2] or empty
};

// cos and sin of every (position, pair): [n_positions, n_rot / 2] each,
// computed in double and rounded once.
struct RopeTable {
  std::vector<float> cos;
  std::vector<float> sin;
};

// RoPE of a model's global or local (sliding-window) layers: local layers use
// their own base and rotated dimensions, and no scaling or frequency factors.
RopeParams rope_params(const model::ModelConfig& config, bool local);
RopeParams layer_rope(const model::ModelConfig& config, int64_t il);

RopeTable make_rope_table(const RopeParams& params, const int32_t* positions, int64_t n_positions);

// The same rotation without the magnitude scale: moving a key that already
// carries it from one position to another (a rotation by the difference).
RopeParams rotation_only(RopeParams params);

// mistral3's query multiplier at `position` (1 without a temperature).
float attention_temperature(const model::ModelConfig& config, int32_t position);

// Rotates `n_heads` heads of `head_dim` values each, at row `index` of the table.
void apply_rope(const RopeParams& params, const RopeTable& table, int64_t index, float* heads,
                int64_t n_heads, int64_t head_dim);

}  // namespace eventkv::compute
