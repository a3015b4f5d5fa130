// Random tensor data in any dequantizable type, for generated test models.
// Float types get normal values; quantized types get random quants with
// finite scales chosen so dequantized values have roughly `scale` magnitude.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/types.h"
#include "util/rng.h"

namespace eventkv::gguf {

// Bytes for a tensor of `type` with ne = {ne0, rows}; values ~ N(mean, scale)
// for float types.
std::vector<uint8_t> random_tensor_bytes(GgmlType type, int64_t ne0, int64_t rows, Rng& rng,
                                         float scale, float mean = 0.0f);

}  // namespace eventkv::gguf
