// What runs forward passes: a shared model and the threads that compute.
// One forward pass at a time per engine.
#pragma once

#include <memory>
#include <string_view>

#include "compute/forward.h"
#include "compute/thread_pool.h"
#include "model/model.h"

namespace eventkv::kv {

// An experiment's precision as runs record it: "exact" (f32 products, the
// results the reference tests check) or "fast" (int8 activations and int8
// panels); throws Error for another name.
std::string_view precision_name(compute::ActivationPrecision products);
compute::ActivationPrecision precision_by_name(std::string_view name);
// The panels a precision's products use: int8 for kInt8, f32 otherwise.
model::Panels panels_for(compute::ActivationPrecision products);

class Engine {
 public:
  // Throws Error for n_threads < 1. `products`: the precision of the weight
  // products of the event-KV passes that name none: the experiments' exact
  // (kF32) or fast (kInt8) precision (compute/matmul.h).
  Engine(std::shared_ptr<const model::Model> model, int n_threads,
         compute::ActivationPrecision products = compute::ActivationPrecision::kF32)
      : model_(std::move(model)), pool_(n_threads), products_(products) {}

  const model::Model& model() const { return *model_; }
  const std::shared_ptr<const model::Model>& shared_model() const { return model_; }
  compute::ThreadPool& pool() { return pool_; }
  int threads() const { return pool_.size(); }
  compute::ActivationPrecision products() const { return products_; }

  // While set, every forward pass appends its rows' residual streams to
  // `capture` (hooks); nullptr stops it.
  void set_capture(compute::ResidualCapture* capture) { capture_ = capture; }
  compute::ResidualCapture* capture() const { return capture_; }

 private:
  std::shared_ptr<const model::Model> model_;
  compute::ThreadPool pool_;
  compute::ActivationPrecision products_;
  compute::ResidualCapture* capture_ = nullptr;
};

}  // namespace eventkv::kv
