// Builds GGUF v3 files: metadata of every value type and tensors in any ggml
// type from their raw bytes. Used by tests and tools to make small models.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gguf/metadata.h"
#include "gguf/types.h"

namespace eventkv::gguf {

class GgufWriter {
 public:
  void set(const std::string& key, MetaValue value);
  void set_uint32(const std::string& key, uint32_t value);
  void set_float32(const std::string& key, float value);
  void set_bool(const std::string& key, bool value);
  void set_string(const std::string& key, const std::string& value);
  void set_strings(const std::string& key, const std::vector<std::string>& values);
  void set_float32s(const std::string& key, const std::vector<float>& values);
  void set_int32s(const std::string& key, const std::vector<int32_t>& values);
  void set_bools(const std::string& key, const std::vector<bool>& values);

  // `ne` lists dimensions with ne[0] contiguous; `data` must hold exactly the
  // tensor's bytes (ne[0] / block * block_bytes * the other dims).
  void add_tensor(const std::string& name, GgmlType type, const std::vector<int64_t>& ne,
                  std::vector<uint8_t> data);

  std::vector<uint8_t> to_bytes() const;
  void write(const std::string& path) const;  // atomic

 private:
  struct PendingTensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> data;
  };

  uint64_t alignment() const;

  std::vector<MetaEntry> metadata_;
  std::vector<PendingTensor> tensors_;
};

// Bytes of a tensor of `type` with dimensions `ne`; throws when ne[0] is not a
// multiple of the block size.
uint64_t tensor_bytes(GgmlType type, const std::vector<int64_t>& ne);

}  // namespace eventkv::gguf
