// Reads a GGUF (v2/v3) file: header, metadata, tensor infos and a view of the
// tensor data. Every count, length, offset and size is checked against the
// bytes actually present before anything is allocated or read, so a corrupt
// file yields an Error naming the file and the problem, never a crash.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/metadata.h"
#include "gguf/types.h"

namespace eventkv {
class MappedFile;
}

namespace eventkv::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr size_t kMaxTensorNameBytes = 64;
inline constexpr int kMaxDims = 4;

struct TensorInfo {
  std::string name;
  GgmlType type = GgmlType::kF32;
  int n_dims = 0;
  std::array<int64_t, kMaxDims> ne = {1, 1, 1, 1};  // ne[0] is contiguous; missing dims are 1
  uint64_t offset = 0;                              // relative to the start of the data section
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // first byte, inside the file's bytes

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
  size_t row_bytes() const;
  const uint8_t* row(int64_t index) const;  // throws Error when out of range
};

class GgufFile {
 public:
  // Maps and parses the file at `path`. Cost: one pass over the header and
  // metadata; tensor data is not touched.
  static GgufFile open(const std::string& path);

  // Parses bytes the caller keeps alive for the life of the result (tests,
  // fuzzing). `name` stands for the input in error messages.
  static GgufFile parse(std::span<const uint8_t> bytes, const std::string& name);

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return file_size_; }

  const std::vector<MetaEntry>& metadata() const { return metadata_; }
  const MetaValue* find(std::string_view key) const;

  // Typed lookups: nullopt when the key is absent; Error naming the key when
  // it is present with a type that cannot answer.
  std::optional<uint64_t> get_uint(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  const MetaArray* get_array(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view tensor_name) const;
  const TensorInfo& tensor(std::string_view tensor_name) const;  // throws when missing

 private:
  GgufFile() = default;

  std::shared_ptr<const MappedFile> mapping_;  // null when parsing borrowed bytes
  std::string name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  uint64_t file_size_ = 0;
  std::vector<MetaEntry> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;

  friend class Parser;
};

}  // namespace eventkv::gguf
