#include "model/model.h"

#include <algorithm>
#include <string_view>

#include "util/hash.h"

namespace eventkv::model {
namespace {

uint64_t hash_text(std::string_view text, uint64_t hash) {
  return fnv1a64({reinterpret_cast<const uint8_t*>(text.data()), text.size()}, hash);
}

// Bytes sampled from the start, middle and end of a tensor: models of one
// architecture with different weights (fine-tunes) get different
// fingerprints without hashing gigabytes.
uint64_t hash_tensor_samples(const gguf::TensorInfo& t, uint64_t hash) {
  constexpr uint64_t kSample = 4096;
  const uint64_t n = std::min(kSample, t.n_bytes);
  for (const uint64_t at : {uint64_t{0}, (t.n_bytes - n) / 2, t.n_bytes - n}) {
    hash = fnv1a64({t.data + at, static_cast<size_t>(n)}, hash);
  }
  return hash;
}

uint64_t compute_fingerprint(const gguf::GgufFile& file) {
  uint64_t hash = kFnvOffset;
  for (const gguf::MetaEntry& entry : file.metadata()) {
    hash = hash_text(entry.key, hash);
    hash = hash_text(gguf::format_value(entry.value, 64), hash);
  }
  for (const gguf::TensorInfo& t : file.tensors()) {
    hash = hash_text(t.name, hash);
    hash = hash_text(std::to_string(static_cast<uint32_t>(t.type)), hash);
    for (const int64_t extent : t.ne) hash = hash_text(std::to_string(extent), hash);
    hash = hash_text(std::to_string(t.offset), hash);
    hash = hash_tensor_samples(t, hash);
  }
  return hash;
}

std::vector<WeightView*> layer_matrices(std::vector<LayerWeights>& layers) {
  std::vector<WeightView*> matrices;
  for (LayerWeights& l : layers) {
    for (WeightView* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_gate, &l.ffn_up, &l.ffn_down,
                          &l.per_layer_gate, &l.per_layer_proj}) {
      if (w->data != nullptr) matrices.push_back(w);  // absent ones (gemma4) are empty
    }
  }
  return matrices;
}

}  // namespace

Model::Model(gguf::GgufFile file)
    : file_(std::move(file)),
      config_(config_from_gguf(file_)),
      weights_(load_weights(file_, config_)),
      tokenizer_(tokenizer::Tokenizer::from_gguf(file_)),
      fingerprint_(compute_fingerprint(file_)) {}

void Model::pack_layer_panels(int64_t budget_bytes) {
  const std::vector<WeightView*> matrices = layer_matrices(weights_.layers);
  int64_t bytes = 0;
  for (const WeightView* w : matrices)
    bytes += w->panel_floats() * static_cast<int64_t>(sizeof(float));
  if (bytes > budget_bytes) return;
  for (WeightView* w : matrices) {
    panels_.push_back(pack_panels(*w));
    w->panels = panels_.back().data();
  }
}

void Model::pack_int8_panels_within(int64_t budget_bytes) {
  std::vector<WeightView*> matrices = layer_matrices(weights_.layers);
  std::erase_if(matrices, [](const WeightView* w) { return !int8_packable(*w); });
  int64_t bytes = 0;
  for (const WeightView* w : matrices) bytes += w->int8_panel_bytes();
  if (bytes > budget_bytes) return;
  // The output matrix too where it fits: several sessions' decode steps
  // spent a quarter of their time on it in int8 dots (SmolLM2, 8 sessions).
  WeightView& output = weights_.output;
  const bool with_output =
      int8_packable(output) && bytes + output.int8_panel_bytes() <= budget_bytes;
  if (with_output) matrices.push_back(&output);
  // Reserved whole: the views point into the vector.
  int8_panels_.reserve(matrices.size());
  for (WeightView* w : matrices) {
    int8_panels_.push_back(pack_int8_panels(*w));
    w->int8 = &int8_panels_.back();
  }
}

int64_t Model::panel_bytes() const {
  int64_t bytes = 0;
  for (const AlignedVector<float>& p : panels_)
    bytes += static_cast<int64_t>(p.size() * sizeof(float));
  for (const Int8Panels& p : int8_panels_) {
    bytes += static_cast<int64_t>(p.q.size() + (p.scale.size() + p.offset.size()) * sizeof(float));
  }
  return bytes;
}

std::shared_ptr<const Model> Model::with_panels(gguf::GgufFile file, int64_t panel_budget_bytes,
                                                Panels panels) {
  auto model = std::shared_ptr<Model>(new Model(std::move(file)));
  if (panel_budget_bytes > 0 && panels == Panels::kF32)
    model->pack_layer_panels(panel_budget_bytes);
  if (panel_budget_bytes > 0 && panels == Panels::kInt8) {
    model->pack_int8_panels_within(panel_budget_bytes);
  }
  return model;
}

std::shared_ptr<const Model> Model::load(const std::string& path, int64_t panel_budget_bytes,
                                         Panels panels) {
  return with_panels(gguf::GgufFile::open(path), panel_budget_bytes, panels);
}

std::shared_ptr<const Model> Model::from_bytes(std::span<const uint8_t> bytes,
                                               const std::string& name, int64_t panel_budget_bytes,
                                               Panels panels) {
  return with_panels(gguf::GgufFile::parse(bytes, name), panel_budget_bytes, panels);
}

}  // namespace eventkv::model
