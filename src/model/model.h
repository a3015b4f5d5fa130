// A loaded model: the mapped GGUF file, its config, weights and tokenizer. Immutable
// after load and safe to share between threads; callers own KV caches and
// scratch (see compute/forward.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "model/config.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace eventkv::model {

// What Model::load packs the layer matrices into, when they fit the budget.
// kF32: f32 panels for the many-token product (WeightView::panels), same
// results. kInt8: int8 panels (WeightView::int8) for the layer matrices whose
// type packs, and the output matrix too when it packs and fits, which
// many-token products with int8 activations use.
enum class Panels { kF32, kInt8 };

class Model {
 public:
  // Maps the file and validates config and tensors; throws Error. Cost: the
  // header parse plus a copy of the small norm vectors; weights stay mapped.
  // With panel_budget_bytes > 0, the layer matrices are also dequantized into
  // f32 panels (WeightView::panels) when those fit in the budget: faster
  // prefill, about 4 bytes per weight more memory, identical results.
  static std::shared_ptr<const Model> load(const std::string& path, int64_t panel_budget_bytes = 0,
                                           Panels panels = Panels::kF32);
  // For in-memory files (tests): `bytes` must outlive the model.
  static std::shared_ptr<const Model> from_bytes(std::span<const uint8_t> bytes,
                                                 const std::string& name,
                                                 int64_t panel_budget_bytes = 0,
                                                 Panels panels = Panels::kF32);

  const gguf::GgufFile& file() const { return file_; }
  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  const tokenizer::Tokenizer& tokenizer() const { return tokenizer_; }
  // Bytes of panels held, f32 or int8 (0 when the weights are used in their
  // GGUF types).
  int64_t panel_bytes() const;

  // Identifies the model for snapshots: a hash of its metadata, its tensor
  // table (names, types, shapes, offsets) and bytes sampled from every tensor.
  uint64_t fingerprint() const { return fingerprint_; }

 private:
  explicit Model(gguf::GgufFile file);
  static std::shared_ptr<const Model> with_panels(gguf::GgufFile file, int64_t panel_budget_bytes,
                                                  Panels panels);
  void pack_layer_panels(int64_t budget_bytes);
  void pack_int8_panels_within(int64_t budget_bytes);

  gguf::GgufFile file_;
  ModelConfig config_;
  ModelWeights weights_;
  std::vector<AlignedVector<float>> panels_;  // storage of the layers' WeightView::panels
  std::vector<Int8Panels> int8_panels_;       // of WeightView::int8 (reserved: never moves)
  tokenizer::Tokenizer tokenizer_;
  uint64_t fingerprint_ = 0;
};

}  // namespace eventkv::model
