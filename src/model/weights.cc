#include "model/weights.h"

#include <algorithm>
#include <string>

#include "compute/quant_types.h"
#include "util/error.h"

namespace eventkv::model {
namespace {

class TensorLoader {
 public:
  explicit TensorLoader(const gguf::GgufFile& file) : file_(file) {}

  // A matrix stored as [n_in, n_out] (n_out rows of n_in).
  WeightView matrix(const std::string& name, int64_t n_in, int64_t n_out) const {
    const gguf::TensorInfo& t = file_.tensor(name);
    if (t.n_dims != 2 || t.ne[0] != n_in || t.ne[1] != n_out) {
      fail(file_.name(), ": tensor '", name, "' has shape ", shape(t), ", expected [", n_in, ", ",
           n_out, "]");
    }
    require_computable(t);
    return WeightView{t.type, n_in, n_out, t.data, t.row_bytes()};
  }

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

  std::vector<float> vector(const std::string& name, int64_t n) const {
    const gguf::TensorInfo& t = file_.tensor(name);
    if (t.n_elements() != n || t.ne[0] != n) {
      fail(file_.name(), ": tensor '", name, "' has shape ", shape(t), ", expected [", n, "]");
    }
    require_computable(t);
    std::vector<float> values(static_cast<size_t>(n));
    compute::dequantize_row(t.type, t.data, values.data(), n);
    return values;
  }

 private:
  void require_computable(const gguf::TensorInfo& t) const {
    if (!gguf::type_traits(t.type).dequantizable) {
      fail(file_.name(), ": tensor '", t.name, "' has type ", gguf::type_name(t.type),
           ", which eventkv cannot compute with");
    }
  }

  static std::string shape(const gguf::TensorInfo& t) {
    std::string text = "[";
    for (int d = 0; d < t.n_dims; ++d) text += (d > 0 ? ", " : "") + std::to_string(t.ne[d]);
    return text + "]";
  }

  const gguf::GgufFile& file_;
};

LayerWeights load_layer(const TensorLoader& load, const ModelConfig& c, int64_t il) {
  const std::string p = "blk." + std::to_string(il) + ".";
  LayerWeights layer;
  const LayerShape& shape = c.layer(il);
  layer.attn_norm = load.vector(p + "attn_norm.weight", c.n_embd);
  layer.wq = load.matrix(p + "attn_q.weight", c.n_embd, c.q_dim(il));
  if (c.has_kv(il)) {
    layer.wk = load.matrix(p + "attn_k.weight", c.n_embd, c.kv_dim(il));
    // gemma4's attention_k_eq_v layers have no attn_v: V is the K projection.
    if (c.arch != Arch::kGemma4 || load.has(p + "attn_v.weight"))
      layer.wv = load.matrix(p + "attn_v.weight", c.n_embd, c.v_dim(il));
  }
  layer.wo = load.matrix(p + "attn_output.weight", c.n_head * shape.head_dim_v, c.n_embd);
  if (c.qkv_bias) {
    layer.bq = load.vector(p + "attn_q.bias", c.q_dim(il));
    layer.bk = load.vector(p + "attn_k.bias", c.kv_dim(il));
    layer.bv = load.vector(p + "attn_v.bias", c.v_dim(il));
  }
  if (c.qk_norm) {
    layer.q_norm = load.vector(p + "attn_q_norm.weight", shape.head_dim);
    if (c.has_kv(il)) layer.k_norm = load.vector(p + "attn_k_norm.weight", shape.head_dim);
  }
  if (c.post_norms) {
    layer.post_attention_norm = load.vector(p + "post_attention_norm.weight", c.n_embd);
    layer.post_ffw_norm = load.vector(p + "post_ffw_norm.weight", c.n_embd);
  }
  layer.ffn_norm = load.vector(p + "ffn_norm.weight", c.n_embd);
  layer.ffn_gate = load.matrix(p + "ffn_gate.weight", c.n_embd, shape.n_ff);
  layer.ffn_up = load.matrix(p + "ffn_up.weight", c.n_embd, shape.n_ff);
  layer.ffn_down = load.matrix(p + "ffn_down.weight", shape.n_ff, c.n_embd);
  if (c.n_embd_per_layer > 0) {
    layer.per_layer_gate = load.matrix(p + "inp_gate.weight", c.n_embd, c.n_embd_per_layer);
    layer.per_layer_proj = load.matrix(p + "proj.weight", c.n_embd_per_layer, c.n_embd);
    layer.per_layer_post_norm = load.vector(p + "post_norm.weight", c.n_embd);
  }
  if (c.arch == Arch::kGemma4 && load.has(p + "layer_output_scale.weight"))
    layer.output_scale = load.vector(p + "layer_output_scale.weight", 1);
  return layer;
}

// Each 8 columns' 128 bytes into 64: the first 4 columns' quants in the
// low nibbles, the next 4's in the high ones (Int8Panels).
void pack_nibbles(Int8Panels& p) {
  constexpr int64_t kStep = 4 * kInt8GroupRows;  // bytes of 4 columns
  AlignedVector<uint8_t> packed(p.q.size() / 2);
  for (size_t i = 0; i < packed.size(); i += kStep) {
    const uint8_t* low = p.q.data() + 2 * i;
    for (int64_t j = 0; j < kStep; ++j)
      packed[i + j] = static_cast<uint8_t>(low[j] | (low[kStep + j] << 4));
  }
  p.q = std::move(packed);
  p.nibbles = true;
}

}  // namespace

void dequantize_panel(const WeightView& w, int64_t row0, int64_t k0, int64_t len, float* scratch,
                      float* out) {
  const gguf::TypeTraits traits = gguf::type_traits(w.type);
  const size_t offset = static_cast<size_t>(k0 / traits.block_elems * traits.block_bytes);
  const int64_t rows = std::min(kPanelRows, w.n_out - row0);
  for (int64_t r = 0; r < rows; ++r) {
    compute::dequantize_row(w.type, w.data + (row0 + r) * w.row_bytes + offset, scratch + r * len,
                            len);
  }
  std::fill(scratch + rows * len, scratch + kPanelRows * len, 0.0f);
  for (int64_t k = 0; k < len; ++k) {
    for (int64_t r = 0; r < kPanelRows; ++r) out[k * kPanelRows + r] = scratch[r * len + k];
  }
}

AlignedVector<float> pack_panels(const WeightView& w) {
  constexpr int64_t kPanelElems = kPanelRows * kPanelDepth;
  AlignedVector<float> panels(static_cast<size_t>(w.panel_floats()));
  std::vector<float> scratch(static_cast<size_t>(kPanelElems));
  for (int64_t p = 0; p < w.panel_rows(); ++p) {
    for (int64_t c = 0; c < w.panel_columns(); ++c) {
      const int64_t k0 = c * kPanelDepth;
      dequantize_panel(w, p * kPanelRows, k0, std::min(kPanelDepth, w.n_in - k0), scratch.data(),
                       panels.data() + (p * w.panel_columns() + c) * kPanelElems);
    }
  }
  return panels;
}

int64_t WeightView::int8_panel_bytes() const {
  const compute::QuantType* q = compute::find_quant_type(type);
  if (q == nullptr || q->unpack_u8 == nullptr) return 0;
  const int64_t padded_values =
      (n_out + kInt8GroupRows - 1) / kInt8GroupRows * kInt8GroupRows * n_in;
  const int64_t quant_bytes = q->u8_bits == 4 ? padded_values / 2 : padded_values;
  return quant_bytes + padded_values / 16 * 2 * static_cast<int64_t>(sizeof(float));
}

bool int8_packable(const WeightView& w) {
  const compute::QuantType* q = compute::find_quant_type(w.type);
  return q != nullptr && q->unpack_u8 != nullptr && w.n_in % q->block_elems == 0;
}

Int8Panels pack_int8_panels(const WeightView& w, bool nibbles) {
  if (!int8_packable(w))
    fail("int8 panels: tensor type ", gguf::type_name(w.type), " cannot be packed");
  const compute::QuantType& type = *compute::find_quant_type(w.type);
  constexpr int64_t kG = kInt8GroupRows;
  Int8Panels p;
  p.n_in = w.n_in;
  p.n_out = w.n_out;
  p.scale_columns = type.u8_scale_columns;
  const int64_t scale_groups = w.n_in / p.scale_columns;
  p.q.assign(static_cast<size_t>(p.groups() * kG * w.n_in), 0);
  p.scale.assign(static_cast<size_t>(p.groups() * kG * scale_groups), 0.0f);
  p.offset.assign(p.scale.size(), 0.0f);
  std::vector<uint8_t> q(static_cast<size_t>(w.n_in));
  std::vector<float> scale(static_cast<size_t>(scale_groups));
  std::vector<float> offset(scale.size());
  for (int64_t row = 0; row < w.n_out; ++row) {
    type.unpack_u8(w.data + row * w.row_bytes, q.data(), scale.data(), offset.data(), w.n_in);
    const int64_t g = row / kG;
    const int64_t r = row % kG;
    for (int64_t k = 0; k < w.n_in; k += 4) {
      std::copy_n(q.data() + k, 4, p.q.data() + (g * w.n_in + k) * kG + 4 * r);
    }
    for (int64_t c = 0; c < scale_groups; ++c) {
      p.scale[static_cast<size_t>((g * scale_groups + c) * kG + r)] = scale[c];
      p.offset[static_cast<size_t>((g * scale_groups + c) * kG + r)] = offset[c];
    }
  }
  const uint8_t largest = p.q.empty() ? 0 : *std::max_element(p.q.begin(), p.q.end());
  p.quant_bits = largest < 16 ? 4 : largest < 32 ? 5 : largest < 64 ? 6 : 8;
  if (p.quant_bits == 4 && p.scale_columns == 32 && nibbles) pack_nibbles(p);
  return p;
}

ModelWeights load_weights(const gguf::GgufFile& file, const ModelConfig& config) {
  const TensorLoader load(file);
  ModelWeights weights;
  weights.token_embd = load.matrix("token_embd.weight", config.n_embd, config.n_vocab);
  weights.output_norm = load.vector("output_norm.weight", config.n_embd);
  weights.output = config.tied_output ? weights.token_embd
                                      : load.matrix("output.weight", config.n_embd, config.n_vocab);
  if (config.n_embd_per_layer > 0) {
    const int64_t width = config.n_layer * config.n_embd_per_layer;
    weights.per_layer_token_embd =
        load.matrix("per_layer_token_embd.weight", width, config.n_vocab);
    weights.per_layer_model_proj = load.matrix("per_layer_model_proj.weight", config.n_embd, width);
    weights.per_layer_proj_norm =
        load.vector("per_layer_proj_norm.weight", config.n_embd_per_layer);
  }
  weights.layers.reserve(static_cast<size_t>(config.n_layer));
  for (int64_t il = 0; il < config.n_layer; ++il)
    weights.layers.push_back(load_layer(load, config, il));
  return weights;
}

}  // namespace eventkv::model
