#include "compute/rope.h"

#include <algorithm>
#include <cmath>

namespace eventkv::compute {

namespace {

// The pair index (fractional) whose frequency turns `rotations` times over
// `n_ctx_orig` positions (YaRN's correction dimension, as llama.cpp computes it).
float correction_dim(int64_t n_rot, int64_t n_ctx_orig, float rotations, float base) {
  constexpr float kPi = 3.14159265358979323846f;
  return static_cast<float>(n_rot) *
         std::log(static_cast<float>(n_ctx_orig) / (rotations * 2.0f * kPi)) /
         (2.0f * std::log(base));
}

}  // namespace

RopeParams rope_params(const model::ModelConfig& config, bool local) {
  RopeParams p;
  p.pairing =
      config.rope_type == model::RopeType::kNorm ? RopePairing::kAdjacent : RopePairing::kHalfSplit;
  p.n_rot = local ? config.n_rot_local : config.n_rot;
  p.freq_base = local ? config.rope_freq_base_local : config.rope_freq_base;
  p.freq_scale = local ? 1.0f : config.rope_freq_scale;
  if (!local) p.freq_factors = config.rope_freq_factors;
  if (config.rope_yarn && !local) {
    p.yarn = true;
    const float low = std::floor(correction_dim(config.n_rot, config.rope_n_ctx_orig,
                                                config.rope_yarn_beta_fast, p.freq_base));
    const float high = std::ceil(correction_dim(config.n_rot, config.rope_n_ctx_orig,
                                                config.rope_yarn_beta_slow, p.freq_base));
    p.yarn_low = std::max(0.0f, low);
    p.yarn_high = std::min(static_cast<float>(config.n_rot - 1), high);
    p.mscale = config.rope_mscale;
  }
  return p;
}

RopeParams rotation_only(RopeParams params) {
  params.mscale = 1.0f;
  return params;
}

float attention_temperature(const model::ModelConfig& config, int32_t position) {
  if (config.attn_temperature_scale == 0.0f) return 1.0f;
  const double periods = std::floor(static_cast<double>(position) /
                                    static_cast<double>(config.attn_temperature_length));
  return static_cast<float>(std::log(periods + 1.0) * config.attn_temperature_scale + 1.0);
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
    double inv_freq = std::pow(static_cast<double>(params.freq_base),
                               -2.0 * static_cast<double>(i) / static_cast<double>(params.n_rot));
    if (!params.freq_factors.empty()) inv_freq /= params.freq_factors[static_cast<size_t>(i)];
    // YaRN: the share of the unscaled angle (1 below yarn_low, 0 above yarn_high).
    double unscaled = 0.0;
    if (params.yarn) {
      const double ramp = (static_cast<double>(i) - params.yarn_low) /
                          std::max(0.001, static_cast<double>(params.yarn_high - params.yarn_low));
      unscaled = 1.0 - std::clamp(ramp, 0.0, 1.0);
    }
    for (int64_t p = 0; p < n_positions; ++p) {
      double theta = static_cast<double>(positions[p]) * params.freq_scale * inv_freq;
      if (params.yarn)
        theta = theta * (1.0 - unscaled) + static_cast<double>(positions[p]) * inv_freq * unscaled;
      table.cos[p * half + i] = static_cast<float>(std::cos(theta) * params.mscale);
      table.sin[p * half + i] = static_cast<float>(std::sin(theta) * params.mscale);
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
