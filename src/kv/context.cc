#include "kv/context.h"

#include <algorithm>
#include <numeric>

#include "util/error.h"

namespace eventkv::kv {
namespace {

compute::KvStorage make_storage(const model::Model& model, const ContextParams& params) {
  const model::ModelConfig& c = model.config();
  if (params.n_ctx < 1) fail("context size must be at least 1, got ", params.n_ctx);
  if (params.n_ctx > c.n_ctx_train) {
    fail("context size ", params.n_ctx, " exceeds the model's trained context of ", c.n_ctx_train);
  }
  return compute::KvStorage::for_model(c, params.n_ctx, params.kv_type);
}

}  // namespace

Context::Context(std::shared_ptr<Engine> engine, const ContextParams& params)
    : engine_(std::move(engine)), params_(params), kv_(make_storage(engine_->model(), params)) {
  if (params.max_batch < 1) fail("batch size must be at least 1, got ", params.max_batch);
}

std::vector<float> Context::eval(std::span<const int32_t> tokens, bool all_logits) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n == 0) fail("eval: no tokens");
  const int64_t n_vocab = engine_->model().config().n_vocab;
  for (const int32_t token : tokens) {
    if (token < 0 || token >= n_vocab)
      fail("token id ", token, " is outside the vocabulary of ", n_vocab);
  }
  if (n_past_ + n > params_.n_ctx) {
    fail("context overflow: ", n_past_, " + ", n, " tokens exceed the context size ",
         params_.n_ctx);
  }
  std::vector<float> logits;
  for (int64_t begin = 0; begin < n; begin += params_.max_batch) {
    const int64_t end = std::min(n, begin + params_.max_batch);
    compute::ForwardBatch batch;
    batch.tokens.assign(tokens.begin() + begin, tokens.begin() + end);
    batch.positions.resize(static_cast<size_t>(end - begin));
    std::iota(batch.positions.begin(), batch.positions.end(), static_cast<int32_t>(n_past_));
    batch.cells = batch.positions;
    // Cell i holds position i: the rows see the past, then themselves causally.
    std::vector<int32_t> cells(static_cast<size_t>(n_past_ + end - begin));
    std::iota(cells.begin(), cells.end(), 0);
    const compute::KeyRange past =
        batch.plan.add_keys(std::span(cells).first(static_cast<size_t>(n_past_)),
                            std::span(cells).first(static_cast<size_t>(n_past_)));
    const compute::KeyRange own =
        batch.plan.add_keys(std::span(cells).subspan(static_cast<size_t>(n_past_)),
                            std::span(cells).subspan(static_cast<size_t>(n_past_)));
    batch.plan.add_block(static_cast<int32_t>(end - begin), {&past, 1}, own);
    if (all_logits) {
      batch.logit_rows.resize(batch.tokens.size());
      std::iota(batch.logit_rows.begin(), batch.logit_rows.end(), 0);
    } else if (end == n) {
      batch.logit_rows = {static_cast<int32_t>(end - begin - 1)};
    }
    const std::vector<float> part =
        compute::forward(engine_->model(), kv_, batch, engine_->pool(), params_.decode_precision);
    logits.insert(logits.end(), part.begin(), part.end());
    n_past_ += end - begin;
  }
  if (!all_logits) logits.resize(static_cast<size_t>(n_vocab));
  return logits;
}

void Context::clear() {
  for (int64_t cell = 0; cell < n_past_; ++cell) kv_.release(cell);
  n_past_ = 0;
}

}  // namespace eventkv::kv
