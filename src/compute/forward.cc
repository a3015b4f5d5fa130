#include "compute/forward.h"

#include <algorithm>
#include <cmath>

#include "compute/attention.h"
#include "compute/matmul.h"
#include "compute/rope.h"
#include "compute/vec_ops.h"
#include "util/error.h"

namespace eventkv::compute {
namespace {

using model::ModelConfig;

// Per-token activations of one batch, reused across layers.
struct Activations {
  Activations(const ModelConfig& c, int64_t n)
      : x(n * c.n_embd),
        cur(n * c.n_embd),
        q(n * c.q_dim()),
        k(n * c.kv_dim()),
        v(n * c.v_dim()),
        attn(n * c.n_head * c.head_dim_v),
        gate(n * c.n_ff),
        up(n * c.n_ff) {}
  std::vector<float> x, cur, q, k, v, attn, gate, up;
};

void check_batch(const ModelConfig& c, const KvStorage& kv, const ForwardBatch& b) {
  const size_t n = b.tokens.size();
  if (n == 0) fail("forward: empty batch");
  if (b.positions.size() != n || b.cells.size() != n)
    fail("forward: tokens, positions and cells differ in length");
  for (size_t t = 0; t < n; ++t) {
    if (b.tokens[t] < 0 || b.tokens[t] >= c.n_vocab)
      fail("token id ", b.tokens[t], " is outside the vocabulary of ", c.n_vocab);
    if (b.positions[t] < 0) fail("forward: negative position ", b.positions[t]);
    if (b.cells[t] < 0 || b.cells[t] >= kv.capacity())
      fail("forward: cell ", b.cells[t], " outside the KV capacity ", kv.capacity());
  }
  b.plan.check(b.cells, kv.capacity());
  for (const int32_t row : b.logit_rows) {
    if (row < 0 || static_cast<size_t>(row) >= n) fail("forward: logit row ", row, " out of range");
  }
}

void add_bias(std::vector<float>& rows, const std::vector<float>& bias, int64_t n) {
  if (bias.empty()) return;
  const auto width = static_cast<int64_t>(bias.size());
  for (int64_t t = 0; t < n; ++t) add_in_place(rows.data() + t * width, bias.data(), width);
}

// Per-head RMSNorm of q or k (qwen3, gemma3), then RoPE, token by token.
void shape_heads(const ModelConfig& c, const std::vector<float>& norm, const RopeParams& rope,
                 const RopeTable& table, float* rows, int64_t n, int64_t n_heads,
                 ThreadPool& pool) {
  const int64_t width = n_heads * c.head_dim;
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* row = rows + t * width;
      if (!norm.empty()) {
        for (int64_t h = 0; h < n_heads; ++h) {
          rms_norm(row + h * c.head_dim, norm.data(), c.rms_eps, c.head_dim, row + h * c.head_dim);
        }
      }
      apply_rope(rope, table, t, row, n_heads, c.head_dim);
    }
  });
}

void norm_rows(const float* in, const std::vector<float>& weight, float eps, int64_t n,
               int64_t width, float* out, ThreadPool& pool) {
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      rms_norm(in + t * width, weight.data(), eps, width, out + t * width);
  });
}

// Rows [first_row, first_row + n) of a batch, run as one forward step.
struct Step {
  int64_t first_row = 0;
  int64_t n = 0;
  std::vector<QueryBlock> blocks;  // the plan's blocks of these rows, renumbered
};

// mistral3: each query row times its position's temperature.
void scale_by_temperature(const ModelConfig& c, const ForwardBatch& b, const Step& step, float* q) {
  for (int64_t t = 0; t < step.n; ++t) {
    const float factor =
        attention_temperature(c, b.positions[static_cast<size_t>(step.first_row + t)]);
    for (int64_t i = 0; i < c.q_dim(); ++i) q[t * c.q_dim() + i] *= factor;
  }
}

void attention_block(const model::Model& model, int64_t il, KvStorage& kv, const ForwardBatch& b,
                     const Step& step, const RopeTable& rope_table, Activations& a,
                     ThreadPool& pool, ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  const model::LayerWeights& w = model.weights().layers[static_cast<size_t>(il)];
  const int64_t n = step.n;
  norm_rows(a.x.data(), w.attn_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  matmul(w.wq, a.cur.data(), n, a.q.data(), pool, precision);
  matmul(w.wk, a.cur.data(), n, a.k.data(), pool, precision);
  matmul(w.wv, a.cur.data(), n, a.v.data(), pool, precision);
  add_bias(a.q, w.bq, n);
  add_bias(a.k, w.bk, n);
  add_bias(a.v, w.bv, n);
  const bool local = c.is_local_layer(il);
  const RopeParams rope = layer_rope(c, il);
  shape_heads(c, w.q_norm, rope, rope_table, a.q.data(), n, c.n_head, pool);
  shape_heads(c, w.k_norm, rope, rope_table, a.k.data(), n, c.n_head_kv, pool);
  if (c.attn_temperature_scale != 0.0f) scale_by_temperature(c, b, step, a.q.data());
  const int32_t* cells = b.cells.data() + step.first_row;
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      kv.write_k(il, cells[t], a.k.data() + t * c.kv_dim());
      kv.write_v(il, cells[t], a.v.data() + t * c.v_dim());
    }
  });
  const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, c.head_dim_v, c.attention_scale};
  const AttentionIo io{a.q.data(), b.positions.data() + step.first_row, &kv,
                       il,         local ? c.sliding_window : 0,        a.attn.data()};
  attention(shape, b.plan, step.blocks, io, pool);
  matmul(w.wo, a.attn.data(), n, a.cur.data(), pool, precision);
  if (!w.post_attention_norm.empty())
    norm_rows(a.cur.data(), w.post_attention_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  add_in_place(a.x.data(), a.cur.data(), n * c.n_embd);
}

void ffn_block(const model::Model& model, int64_t il, int64_t n, Activations& a, ThreadPool& pool,
               ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  const model::LayerWeights& w = model.weights().layers[static_cast<size_t>(il)];
  norm_rows(a.x.data(), w.ffn_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  matmul(w.ffn_gate, a.cur.data(), n, a.gate.data(), pool, precision);
  matmul(w.ffn_up, a.cur.data(), n, a.up.data(), pool, precision);
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* gate = a.gate.data() + t * c.n_ff;
      const float* up = a.up.data() + t * c.n_ff;
      if (c.ffn_activation == model::FfnActivation::kSilu) {
        silu_mul(gate, up, c.n_ff);
      } else {
        gelu_tanh_mul(gate, up, c.n_ff);
      }
    }
  });
  matmul(w.ffn_down, a.gate.data(), n, a.cur.data(), pool, precision);
  if (!w.post_ffw_norm.empty())
    norm_rows(a.cur.data(), w.post_ffw_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  add_in_place(a.x.data(), a.cur.data(), n * c.n_embd);
}

void embed(const model::Model& model, const int32_t* tokens, int64_t n, Activations& a) {
  const ModelConfig& c = model.config();
  const float scale = c.scale_embeddings ? std::sqrt(static_cast<float>(c.n_embd)) : 1.0f;
  for (int64_t t = 0; t < n; ++t) {
    float* row = a.x.data() + t * c.n_embd;
    dequantize_weight_row(model.weights().token_embd, tokens[t], row);
    if (c.scale_embeddings) scale_in_place(row, scale, c.n_embd);
  }
}

// The logits of the batch's logit rows that lie in this step, into their
// places in `logits` ([logit_rows.size(), n_vocab]).
void output_logits(const model::Model& model, const ForwardBatch& b, const Step& step,
                   Activations& a, ThreadPool& pool, ActivationPrecision precision,
                   std::vector<float>& logits) {
  const ModelConfig& c = model.config();
  std::vector<size_t> outputs;
  for (size_t i = 0; i < b.logit_rows.size(); ++i) {
    const int64_t row = b.logit_rows[i] - step.first_row;
    if (row >= 0 && row < step.n) outputs.push_back(i);
  }
  if (outputs.empty()) return;
  const auto n_out = static_cast<int64_t>(outputs.size());
  std::vector<float> normed(static_cast<size_t>(n_out * c.n_embd));
  for (int64_t i = 0; i < n_out; ++i) {
    const int64_t row = b.logit_rows[outputs[static_cast<size_t>(i)]] - step.first_row;
    rms_norm(a.x.data() + row * c.n_embd, model.weights().output_norm.data(), c.rms_eps, c.n_embd,
             normed.data() + i * c.n_embd);
  }
  std::vector<float> part(static_cast<size_t>(n_out * c.n_vocab));
  matmul(model.weights().output, normed.data(), n_out, part.data(), pool, precision);
  if (c.final_logit_softcap > 0.0f) {
    for (float& logit : part)
      logit = c.final_logit_softcap * std::tanh(logit / c.final_logit_softcap);
  }
  for (int64_t i = 0; i < n_out; ++i) {
    std::copy(part.begin() + i * c.n_vocab, part.begin() + (i + 1) * c.n_vocab,
              logits.begin() + static_cast<int64_t>(outputs[static_cast<size_t>(i)]) * c.n_vocab);
  }
}

// Copies layer `il`'s output rows of the step into the capture, whose rows
// from `first_row` on this pass fills.
void capture_layer(const ModelConfig& c, const Step& step, int64_t il, const Activations& a,
                   int64_t first_row, ResidualCapture& capture) {
  for (int64_t t = 0; t < step.n; ++t) {
    const int64_t row = first_row + step.first_row + t;
    std::copy_n(a.x.data() + t * c.n_embd, c.n_embd,
                capture.values.data() + (row * c.n_layer + il) * c.n_embd);
  }
}

void run_step(const model::Model& model, KvStorage& kv, const ForwardBatch& b, const Step& step,
              ThreadPool& pool, ActivationPrecision precision, std::vector<float>& logits,
              ResidualCapture* capture, int64_t capture_first_row) {
  const ModelConfig& c = model.config();
  Activations a(c, step.n);
  embed(model, b.tokens.data() + step.first_row, step.n, a);
  const int32_t* positions = b.positions.data() + step.first_row;
  const RopeTable global_table = make_rope_table(rope_params(c, false), positions, step.n);
  RopeTable local_table;
  if (c.sliding_window > 0) local_table = make_rope_table(rope_params(c, true), positions, step.n);
  for (int64_t il = 0; il < c.n_layer; ++il) {
    attention_block(model, il, kv, b, step, c.is_local_layer(il) ? local_table : global_table, a,
                    pool, precision);
    ffn_block(model, il, step.n, a, pool, precision);
    if (capture != nullptr) capture_layer(c, step, il, a, capture_first_row, *capture);
  }
  output_logits(model, b, step, a, pool, precision, logits);
}

}  // namespace

std::vector<float> forward(const model::Model& model, KvStorage& kv, const ForwardBatch& batch,
                           ThreadPool& pool, ActivationPrecision precision,
                           ResidualCapture* capture) {
  const ModelConfig& c = model.config();
  check_batch(c, kv, batch);
  const auto n = static_cast<int64_t>(batch.tokens.size());
  const int64_t capture_first_row = capture != nullptr ? capture->rows : 0;
  if (capture != nullptr) {
    capture->rows += n;
    capture->values.resize(static_cast<size_t>(capture->rows * c.n_layer * c.n_embd));
  }
  for (const int32_t cell : batch.cells) kv.activate(cell);
  std::vector<float> logits(batch.logit_rows.size() * static_cast<size_t>(c.n_vocab));
  // Equal steps, so that none is small enough to take the few-token products.
  const int64_t n_steps = (n + kMaxMicroBatch - 1) / kMaxMicroBatch;
  for (int64_t i = 0; i < n_steps; ++i) {
    Step step;
    step.first_row = n * i / n_steps;
    step.n = n * (i + 1) / n_steps - step.first_row;
    step.blocks = batch.plan.slice(static_cast<int32_t>(step.first_row),
                                   static_cast<int32_t>(step.first_row + step.n));
    run_step(model, kv, batch, step, pool, precision, logits, capture, capture_first_row);
  }
  return logits;
}

}  // namespace eventkv::compute
