// A read-only memory map of a whole file. Pages are loaded on demand by the
// kernel, so opening a multi-GiB model costs no RSS until its bytes are read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace eventkv {

class MappedFile {
 public:
  // Maps `path`; throws Error naming the path when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace eventkv
