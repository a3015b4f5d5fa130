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

// The widest of a per-layer width over the model's layers.
template <typename Width>
int64_t widest(const ModelConfig& c, Width width) {
  int64_t widest = 0;
  for (int64_t il = 0; il < c.n_layer; ++il) widest = std::max(widest, width(il));
  return widest;
}

// Per-token activations of one batch, reused across layers; each layer uses
// the first n rows of its own width.
struct Activations {
  Activations(const ModelConfig& c, int64_t n)
      : x(n * c.n_embd),
        cur(n * c.n_embd),
        q(n * widest(c, [&](int64_t il) { return c.q_dim(il); })),
        k(n * widest(c, [&](int64_t il) { return c.kv_dim(il); })),
        v(n * widest(c, [&](int64_t il) { return c.v_dim(il); })),
        attn(n * c.n_head * widest(c, [&](int64_t il) { return c.layer(il).head_dim_v; })),
        gate(n * widest(c, [&](int64_t il) { return c.layer(il).n_ff; })),
        up(gate.size()),
        per_layer(n * c.n_layer * c.n_embd_per_layer),
        per_layer_gate(n * c.n_embd_per_layer) {}
  std::vector<float> x, cur, q, k, v, attn, gate, up;
  // gemma4: each token's per-layer inputs, [n][n_layer][n_embd_per_layer],
  // and one layer's gated input, [n][n_embd_per_layer].
  std::vector<float> per_layer, per_layer_gate;
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

// Per-head RMSNorm of q or k (qwen3, gemma3, gemma4), then RoPE, token by token.
void shape_heads(const ModelConfig& c, const std::vector<float>& norm, const RopeParams& rope,
                 const RopeTable& table, float* rows, int64_t n, int64_t n_heads, int64_t head_dim,
                 ThreadPool& pool) {
  const int64_t width = n_heads * head_dim;
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* row = rows + t * width;
      if (!norm.empty()) {
        for (int64_t h = 0; h < n_heads; ++h)
          rms_norm(row + h * head_dim, norm.data(), c.rms_eps, head_dim, row + h * head_dim);
      }
      apply_rope(rope, table, t, row, n_heads, head_dim);
    }
  });
}

// gemma4: RMSNorm of every V head, without a weight.
void norm_value_heads(const ModelConfig& c, float* rows, int64_t n, int64_t n_heads,
                      int64_t head_dim, ThreadPool& pool) {
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin * n_heads; h < end * n_heads; ++h)
      rms_norm(rows + h * head_dim, nullptr, c.rms_eps, head_dim, rows + h * head_dim);
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
void scale_by_temperature(const ModelConfig& c, const ForwardBatch& b, const Step& step,
                          int64_t q_dim, float* q) {
  for (int64_t t = 0; t < step.n; ++t) {
    const float factor =
        attention_temperature(c, b.positions[static_cast<size_t>(step.first_row + t)]);
    for (int64_t i = 0; i < q_dim; ++i) q[t * q_dim + i] *= factor;
  }
}

// Layer il's K and V rows of the step's tokens (from a.cur), into their cells.
void store_kv(const model::Model& model, int64_t il, KvStorage& kv, const ForwardBatch& b,
              const Step& step, const RopeParams& rope, const RopeTable& rope_table, Activations& a,
              ThreadPool& pool, ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  const model::LayerShape& shape = c.layer(il);
  const model::LayerWeights& w = model.weights().layers[static_cast<size_t>(il)];
  const int64_t n = step.n;
  const int64_t k_dim = c.kv_dim(il);
  const int64_t v_dim = c.v_dim(il);
  matmul(w.wk, a.cur.data(), n, a.k.data(), pool, precision);
  if (w.wv.data != nullptr) {
    matmul(w.wv, a.cur.data(), n, a.v.data(), pool, precision);
  } else {  // gemma4's attention_k_eq_v: V is the K projection
    std::copy_n(a.k.data(), n * k_dim, a.v.data());
  }
  add_bias(a.k, w.bk, n);
  add_bias(a.v, w.bv, n);
  shape_heads(c, w.k_norm, rope, rope_table, a.k.data(), n, shape.n_head_kv, shape.head_dim, pool);
  if (c.v_norm) norm_value_heads(c, a.v.data(), n, shape.n_head_kv, shape.head_dim_v, pool);
  const int32_t* cells = b.cells.data() + step.first_row;
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      kv.write_k(il, cells[t], a.k.data() + t * k_dim);
      kv.write_v(il, cells[t], a.v.data() + t * v_dim);
    }
  });
}

void attention_block(const model::Model& model, int64_t il, KvStorage& kv, const ForwardBatch& b,
                     const Step& step, const RopeTable& rope_table, Activations& a,
                     ThreadPool& pool, ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  const model::LayerShape& layer = c.layer(il);
  const model::LayerWeights& w = model.weights().layers[static_cast<size_t>(il)];
  const int64_t n = step.n;
  norm_rows(a.x.data(), w.attn_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  matmul(w.wq, a.cur.data(), n, a.q.data(), pool, precision);
  add_bias(a.q, w.bq, n);
  const bool local = c.is_local_layer(il);
  const RopeParams rope = layer_rope(c, il);
  shape_heads(c, w.q_norm, rope, rope_table, a.q.data(), n, c.n_head, layer.head_dim, pool);
  if (c.attn_temperature_scale != 0.0f) scale_by_temperature(c, b, step, c.q_dim(il), a.q.data());
  // A kv-shared layer (gemma4) attends to the rows its source layer stored.
  if (c.has_kv(il)) store_kv(model, il, kv, b, step, rope, rope_table, a, pool, precision);
  const AttentionShape shape{c.n_head, layer.n_head_kv, layer.head_dim, layer.head_dim_v,
                             c.attention_scale};
  const AttentionIo io{a.q.data(),     b.positions.data() + step.first_row, &kv,
                       layer.kv_layer, local ? c.sliding_window : 0,        a.attn.data()};
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
  const int64_t n_ff = c.layer(il).n_ff;
  norm_rows(a.x.data(), w.ffn_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  matmul(w.ffn_gate, a.cur.data(), n, a.gate.data(), pool, precision);
  matmul(w.ffn_up, a.cur.data(), n, a.up.data(), pool, precision);
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* gate = a.gate.data() + t * n_ff;
      const float* up = a.up.data() + t * n_ff;
      if (c.ffn_activation == model::FfnActivation::kSilu) {
        silu_mul(gate, up, n_ff);
      } else {
        gelu_tanh_mul(gate, up, n_ff);
      }
    }
  });
  matmul(w.ffn_down, a.gate.data(), n, a.cur.data(), pool, precision);
  if (!w.post_ffw_norm.empty())
    norm_rows(a.cur.data(), w.post_ffw_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  add_in_place(a.x.data(), a.cur.data(), n * c.n_embd);
}

// gemma4: a gated projection of the token's per-layer input, added to the
// residual stream after the FFN.
void per_layer_block(const model::Model& model, int64_t il, int64_t n, Activations& a,
                     ThreadPool& pool, ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  const model::LayerWeights& w = model.weights().layers[static_cast<size_t>(il)];
  const int64_t width = c.n_embd_per_layer;
  matmul(w.per_layer_gate, a.x.data(), n, a.per_layer_gate.data(), pool, precision);
  for (int64_t t = 0; t < n; ++t) {
    gelu_tanh_mul(a.per_layer_gate.data() + t * width,
                  a.per_layer.data() + (t * c.n_layer + il) * width, width);
  }
  matmul(w.per_layer_proj, a.per_layer_gate.data(), n, a.cur.data(), pool, precision);
  norm_rows(a.cur.data(), w.per_layer_post_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  add_in_place(a.x.data(), a.cur.data(), n * c.n_embd);
}

// gemma4: every layer's input of each token, from the (scaled) embeddings in
// a.x: (RMSNorm(per_layer_model_proj x / sqrt(n_embd)) + per_layer_token_embd
// row * sqrt(n_embd_per_layer)) / sqrt(2), slice by slice.
void per_layer_inputs(const model::Model& model, const int32_t* tokens, int64_t n, Activations& a,
                      ThreadPool& pool, ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  const model::ModelWeights& w = model.weights();
  const int64_t width = c.n_embd_per_layer;
  const int64_t row_width = c.n_layer * width;
  matmul(w.per_layer_model_proj, a.x.data(), n, a.per_layer.data(), pool, precision);
  const float projection_scale = 1.0f / std::sqrt(static_cast<float>(c.n_embd));
  const float token_scale = std::sqrt(static_cast<float>(width));
  const float mix_scale = 1.0f / std::sqrt(2.0f);
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    std::vector<float> token_row(static_cast<size_t>(row_width));
    for (int64_t t = begin; t < end; ++t) {
      float* row = a.per_layer.data() + t * row_width;
      dequantize_weight_row(w.per_layer_token_embd, tokens[t], token_row.data());
      scale_in_place(row, projection_scale, row_width);
      for (int64_t il = 0; il < c.n_layer; ++il) {
        rms_norm(row + il * width, w.per_layer_proj_norm.data(), c.rms_eps, width,
                 row + il * width);
      }
      scale_in_place(token_row.data(), token_scale, row_width);
      add_in_place(row, token_row.data(), row_width);
      scale_in_place(row, mix_scale, row_width);
    }
  });
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
  if (c.n_embd_per_layer > 0)
    per_layer_inputs(model, b.tokens.data() + step.first_row, step.n, a, pool, precision);
  const int32_t* positions = b.positions.data() + step.first_row;
  const RopeTable global_table = make_rope_table(rope_params(c, false), positions, step.n);
  RopeTable local_table;
  if (c.sliding_window > 0) local_table = make_rope_table(rope_params(c, true), positions, step.n);
  for (int64_t il = 0; il < c.n_layer; ++il) {
    attention_block(model, il, kv, b, step, c.is_local_layer(il) ? local_table : global_table, a,
                    pool, precision);
    ffn_block(model, il, step.n, a, pool, precision);
    if (c.n_embd_per_layer > 0) per_layer_block(model, il, step.n, a, pool, precision);
    const std::vector<float>& output_scale =
        model.weights().layers[static_cast<size_t>(il)].output_scale;
    if (!output_scale.empty()) scale_in_place(a.x.data(), output_scale[0], step.n * c.n_embd);
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
