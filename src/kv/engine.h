// What runs forward passes: a shared model and the threads that compute.
// One forward pass at a time per engine.
#pragma once

#include <memory>

#include "compute/forward.h"
#include "compute/thread_pool.h"
#include "model/model.h"

namespace eventkv::kv {

class Engine {
 public:
  // Throws Error for n_threads < 1.
  Engine(std::shared_ptr<const model::Model> model, int n_threads)
      : model_(std::move(model)), pool_(n_threads) {}

  const model::Model& model() const { return *model_; }
  const std::shared_ptr<const model::Model>& shared_model() const { return model_; }
  compute::ThreadPool& pool() { return pool_; }
  int threads() const { return pool_.size(); }

  // While set, every forward pass appends its rows' residual streams to
  // `capture` (hooks); nullptr stops it.
  void set_capture(compute::ResidualCapture* capture) { capture_ = capture; }
  compute::ResidualCapture* capture() const { return capture_; }

 private:
  std::shared_ptr<const model::Model> model_;
  compute::ThreadPool pool_;
  compute::ResidualCapture* capture_ = nullptr;
};

}  // namespace eventkv::kv
