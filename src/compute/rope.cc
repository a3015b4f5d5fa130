#include "compute/rope.h"

#include <cmath>

namespace eventkv::compute {

RopeParams rope_params(const model::ModelConfig& config, bool local) {
  RopeParams p;
  p.pairing =
      config.rope_type == model::RopeType::kNorm ? RopePairing::kAdjacent : RopePairing::kHalfSplit;
  p.n_rot = config.n_rot;
  p.freq_base = local ? config.rope_freq_base_local : config.rope_freq_base;
  p.freq_scale = local ? 1.0f : config.rope_freq_scale;
  return p;
}

RopeParams layer_rope(const model::ModelConfig& config, int64_t il) {
  return rope_params(config, config.is_local_layer(il));
}

RopeTable make_rope_table(const RopeParams& params, const int32_t* positions, int64_t n_positions) {
  const int64_t half = params.n_rot / 2;
  RopeTable table;
  table.cos.resize(static_cast<size_t>(n_positions * half));
  table.sin.resize(table.cos.size());
  for (int64_t i = 0; i < half; ++i) {
    const double inv_freq =
        std::pow(static_cast<double>(params.freq_base),
                 -2.0 * static_cast<double>(i) / static_cast<double>(params.n_rot));
    for (int64_t p = 0; p < n_positions; ++p) {
      const double theta = static_cast<double>(positions[p]) * params.freq_scale * inv_freq;
      table.cos[p * half + i] = static_cast<float>(std::cos(theta));
      table.sin[p * half + i] = static_cast<float>(std::sin(theta));
    }
  }
  return table;
}

void apply_rope(const RopeParams& params, const RopeTable& table, int64_t index, float* heads,
                int64_t n_heads, int64_t head_dim) {
  const int64_t half = params.n_rot / 2;
  const float* cos_row = table.cos.data() + index * half;
  const float* sin_row = table.sin.data() + index * half;
  const int64_t stride = params.pairing == RopePairing::kAdjacent ? 1 : half;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* head = heads + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      float* x0 = head + (params.pairing == RopePairing::kAdjacent ? 2 * i : i);
      float* x1 = x0 + stride;
      const float a = *x0;
      const float b = *x1;
      *x0 = a * cos_row[i] - b * sin_row[i];
      *x1 = a * sin_row[i] + b * cos_row[i];
    }
  }
}

}  // namespace eventkv::compute
