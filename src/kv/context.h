// A plain causal context: tokens are appended at positions 0, 1, 2, ... and
// each sees everything before it. It owns its KV rows; the engine (model and
// threads) is shared. This is what generation and chat use; the event cache
// (kv/event_kv.h) builds on the same forward pass with explicit plans.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "compute/forward.h"
#include "compute/kv_storage.h"
#include "kv/engine.h"

namespace eventkv::kv {

struct ContextParams {
  int64_t n_ctx = 4096;  // capacity in tokens
  compute::KvType kv_type = compute::KvType::kF32;
  int64_t max_batch = 512;  // prompt tokens per forward call
  // Decode products (calls of 1 or 2 tokens): kF32 is exact, kInt8 rounds
  // activations to 8 bits for speed (compute/matmul.h).
  compute::ActivationPrecision decode_precision = compute::ActivationPrecision::kF32;
};

class Context {
 public:
  // Throws Error for n_ctx < 1 or beyond the model's trained context.
  Context(std::shared_ptr<Engine> engine, const ContextParams& params);

  // Appends `tokens` and returns the logits after the last one ([n_vocab]),
  // or after every one ([tokens.size(), n_vocab]) when all_logits is set.
  // Throws Error (and appends nothing) when the tokens would not fit.
  std::vector<float> eval(std::span<const int32_t> tokens, bool all_logits = false);

  int64_t n_past() const { return n_past_; }
  int64_t n_ctx() const { return params_.n_ctx; }
  const model::Model& model() const { return engine_->model(); }
  size_t kv_bytes_held() const { return kv_.bytes_held(); }

  // Forgets every token (frees their rows).
  void clear();

 private:
  std::shared_ptr<Engine> engine_;
  ContextParams params_;
  compute::KvStorage kv_;
  int64_t n_past_ = 0;
};

}  // namespace eventkv::kv
