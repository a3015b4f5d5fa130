#include "compute/forward.h"

#include <cmath>

#include "compute/attention.h"
#include "compute/matmul.h"
#include "compute/rope.h"
#include "compute/vec_ops.h"
#include "util/aligned_vector.h"
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
  if (b.positions.size() != n || b.cells.size() != n || b.visible.size() != n) {
    fail("forward: tokens, positions, cells and visible lists differ in length");
  }
  if (b.kv_cells.size() != b.kv_positions.size())
    fail("forward: kv_cells and kv_positions differ in length");
  for (size_t t = 0; t < n; ++t) {
    if (b.tokens[t] < 0 || b.tokens[t] >= c.n_vocab)
      fail("token id ", b.tokens[t], " is outside the vocabulary of ", c.n_vocab);
    if (b.positions[t] < 0) fail("forward: negative position ", b.positions[t]);
    if (b.cells[t] < 0 || b.cells[t] >= kv.capacity())
      fail("forward: cell ", b.cells[t], " outside the KV capacity ", kv.capacity());
    int32_t previous = -1;
    for (const int32_t j : b.visible[t]) {
      if (j <= previous || static_cast<size_t>(j) >= b.kv_cells.size()) {
        fail("forward: visible indices must ascend within the kv list, got ", j, " after ",
             previous);
      }
      previous = j;
    }
  }
  for (const int32_t row : b.logit_rows) {
    if (row < 0 || static_cast<size_t>(row) >= n) fail("forward: logit row ", row, " out of range");
  }
}

RopeParams rope_for(const ModelConfig& c, bool local) {
  RopeParams p;
  p.pairing =
      c.rope_type == model::RopeType::kNorm ? RopePairing::kAdjacent : RopePairing::kHalfSplit;
  p.n_rot = c.n_rot;
  p.freq_base = local ? c.rope_freq_base_local : c.rope_freq_base;
  p.freq_scale = local ? 1.0f : c.rope_freq_scale;
  return p;
}

// Visible lists of local layers: the window counts back from each query's
// own position, before and after eviction alike.
std::vector<std::vector<int32_t>> windowed(const ForwardBatch& b, int64_t window) {
  std::vector<std::vector<int32_t>> lists(b.visible.size());
  for (size_t t = 0; t < lists.size(); ++t) {
    for (const int32_t j : b.visible[t]) {
      if (b.positions[t] - b.kv_positions[static_cast<size_t>(j)] < window) lists[t].push_back(j);
    }
  }
  return lists;
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

void attention_block(const model::Model& model, int64_t il, KvStorage& kv, const ForwardBatch& b,
                     const std::vector<std::vector<int32_t>>& visible, const RopeTable& rope_table,
                     Activations& a, ThreadPool& pool, ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  const model::LayerWeights& w = model.weights().layers[static_cast<size_t>(il)];
  const auto n = static_cast<int64_t>(b.tokens.size());
  norm_rows(a.x.data(), w.attn_norm, c.rms_eps, n, c.n_embd, a.cur.data(), pool);
  matmul(w.wq, a.cur.data(), n, a.q.data(), pool, precision);
  matmul(w.wk, a.cur.data(), n, a.k.data(), pool, precision);
  matmul(w.wv, a.cur.data(), n, a.v.data(), pool, precision);
  add_bias(a.q, w.bq, n);
  add_bias(a.k, w.bk, n);
  add_bias(a.v, w.bv, n);
  const RopeParams rope = rope_for(c, c.is_local_layer(il));
  shape_heads(c, w.q_norm, rope, rope_table, a.q.data(), n, c.n_head, pool);
  shape_heads(c, w.k_norm, rope, rope_table, a.k.data(), n, c.n_head_kv, pool);
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      kv.write_k(il, b.cells[t], a.k.data() + t * c.kv_dim());
      kv.write_v(il, b.cells[t], a.v.data() + t * c.v_dim());
    }
  });
  AlignedVector<float> keys(b.kv_cells.size() * static_cast<size_t>(c.kv_dim()));
  AlignedVector<float> values(b.kv_cells.size() * static_cast<size_t>(c.v_dim()));
  kv.gather_k(il, b.kv_cells, keys.data());
  kv.gather_v(il, b.kv_cells, values.data());
  const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, c.head_dim_v, c.attention_scale};
  attention(shape, a.q.data(), n, keys.data(), values.data(), visible, a.attn.data(), pool);
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

void embed(const model::Model& model, const ForwardBatch& b, Activations& a) {
  const ModelConfig& c = model.config();
  const float scale = c.scale_embeddings ? std::sqrt(static_cast<float>(c.n_embd)) : 1.0f;
  for (size_t t = 0; t < b.tokens.size(); ++t) {
    float* row = a.x.data() + t * c.n_embd;
    dequantize_weight_row(model.weights().token_embd, b.tokens[t], row);
    if (c.scale_embeddings) scale_in_place(row, scale, c.n_embd);
  }
}

std::vector<float> output_logits(const model::Model& model, const ForwardBatch& b, Activations& a,
                                 ThreadPool& pool, ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  const auto n_out = static_cast<int64_t>(b.logit_rows.size());
  std::vector<float> normed(static_cast<size_t>(n_out * c.n_embd));
  for (int64_t i = 0; i < n_out; ++i) {
    rms_norm(a.x.data() + b.logit_rows[i] * c.n_embd, model.weights().output_norm.data(), c.rms_eps,
             c.n_embd, normed.data() + i * c.n_embd);
  }
  std::vector<float> logits(static_cast<size_t>(n_out * c.n_vocab));
  matmul(model.weights().output, normed.data(), n_out, logits.data(), pool, precision);
  if (c.final_logit_softcap > 0.0f) {
    for (float& logit : logits)
      logit = c.final_logit_softcap * std::tanh(logit / c.final_logit_softcap);
  }
  return logits;
}

}  // namespace

std::vector<float> forward(const model::Model& model, KvStorage& kv, const ForwardBatch& batch,
                           ThreadPool& pool, ActivationPrecision precision) {
  const ModelConfig& c = model.config();
  check_batch(c, kv, batch);
  const auto n = static_cast<int64_t>(batch.tokens.size());
  for (const int32_t cell : batch.cells) kv.activate(cell);
  Activations a(c, n);
  embed(model, batch, a);
  const RopeTable global_table = make_rope_table(rope_for(c, false), batch.positions.data(), n);
  RopeTable local_table;
  std::vector<std::vector<int32_t>> local_visible;
  if (c.sliding_window > 0) {
    local_table = make_rope_table(rope_for(c, true), batch.positions.data(), n);
    local_visible = windowed(batch, c.sliding_window);
  }
  for (int64_t il = 0; il < c.n_layer; ++il) {
    const bool local = c.is_local_layer(il);
    attention_block(model, il, kv, batch, local ? local_visible : batch.visible,
                    local ? local_table : global_table, a, pool, precision);
    ffn_block(model, il, n, a, pool, precision);
  }
  return output_logits(model, batch, a, pool, precision);
}

RopeParams layer_rope(const model::ModelConfig& config, int64_t il) {
  return rope_for(config, config.is_local_layer(il));
}

std::vector<std::vector<int32_t>> causal_visibility(const std::vector<int32_t>& positions,
                                                    const std::vector<int32_t>& kv_positions) {
  std::vector<std::vector<int32_t>> lists(positions.size());
  for (size_t t = 0; t < positions.size(); ++t) {
    for (size_t j = 0; j < kv_positions.size(); ++j) {
      if (kv_positions[j] <= positions[t]) lists[t].push_back(static_cast<int32_t>(j));
    }
  }
  return lists;
}

}  // namespace eventkv::compute
