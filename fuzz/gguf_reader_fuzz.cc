// libFuzzer target: any byte string must parse or fail with an Error, never
// crash, hang or allocate beyond the input's size.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compute/quant_types.h"
#include "gguf/reader.h"
#include "model/config.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto file =
        eventkv::gguf::GgufFile::parse(std::span<const uint8_t>(data, size), "fuzz-input");
    for (const auto& tensor : file.tensors()) {
      // Rows longer than the input cannot hold real data; skip their scratch.
      if (!eventkv::gguf::type_traits(tensor.type).dequantizable ||
          tensor.ne[0] > (int64_t{1} << 20))
        continue;
      std::vector<float> row(static_cast<size_t>(tensor.ne[0]));
      eventkv::compute::dequantize_row(tensor.type, tensor.row(0), row.data(), tensor.ne[0]);
    }
    (void)eventkv::model::config_from_gguf(file);
  } catch (const eventkv::Error&) {
  }
  return 0;
}
