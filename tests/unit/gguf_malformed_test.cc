// Handcrafted corrupt files: each must fail with an Error that names the file
// and the problem, never crash or allocate beyond the input.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "util/error.h"
#include "util/rng.h"

namespace eventkv::gguf {
namespace {

// Builds GGUF bytes field by field, so a test can put any value anywhere.
class RawGguf {
 public:
  RawGguf& u32(uint32_t v) { return put(v); }
  RawGguf& u64(uint64_t v) { return put(v); }
  RawGguf& str(const std::string& s) {
    u64(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  RawGguf& header(uint64_t n_tensors, uint64_t n_kv) {
    return u32(kMagic).u32(3).u64(n_tensors).u64(n_kv);
  }
  RawGguf& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(4).u32(v); }
  RawGguf& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type,
                  uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (const uint64_t extent : ne) u64(extent);
    return u32(type).u64(offset);
  }
  RawGguf& pad(size_t alignment = 32) {
    while (bytes.size() % alignment != 0) bytes.push_back(0);
    return *this;
  }
  RawGguf& zeros(size_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }

  std::vector<uint8_t> bytes;

 private:
  template <typename T>
  RawGguf& put(T v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
    return *this;
  }
};

// Expects parsing to throw an Error whose one-line message names the input
// and contains `fragment`.
void expect_error(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  try {
    (void)GgufFile::parse(bytes, "bad.gguf");
    ADD_FAILURE() << "parsed without error; expected: " << fragment;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("bad.gguf: ", 0), 0u) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ4_0 = 2;

TEST(Malformed, EmptyAndTruncatedHeaders) {
  expect_error({}, "truncated file: magic");
  expect_error({'G', 'G', 'U', 'F', 3}, "truncated file: version");
  expect_error(RawGguf().u32(kMagic).u32(3).u64(0).bytes, "truncated file: metadata count");
}

TEST(Malformed, WrongMagicOrVersion) {
  expect_error(RawGguf().u32(0x46554746).u32(3).u64(0).u64(0).bytes, "bad magic");
  expect_error(RawGguf().u32(kMagic).u32(1).u64(0).u64(0).bytes, "unsupported GGUF version 1");
  expect_error(RawGguf().u32(kMagic).u32(4).u64(0).u64(0).bytes, "unsupported GGUF version 4");
  expect_error(RawGguf().u32(kMagic).u32(0x03000000).u64(0).u64(0).bytes, "big-endian");
}

TEST(Malformed, AbsurdCounts) {
  expect_error(RawGguf().header(uint64_t{1} << 60, 0).bytes, "tensor count");
  expect_error(RawGguf().header(0, uint64_t{1} << 60).bytes, "metadata count");
  expect_error(RawGguf().header(0, ~uint64_t{0}).bytes, "larger than the file can hold");
}

TEST(Malformed, AbsurdStringLengths) {
  expect_error(RawGguf().header(0, 1).u64(uint64_t{1} << 62).zeros(8).bytes, "metadata key length");
  expect_error(RawGguf().header(0, 1).u64(100).zeros(8).bytes, "truncated file: metadata key");
  expect_error(RawGguf().header(0, 1).str("k").u32(8).u64(~uint64_t{0}).bytes,
               "string value of 'k' length");
  expect_error(RawGguf().header(1, 0).u64(1000).zeros(64).bytes, "tensor name length 1000 exceeds");
}

TEST(Malformed, AbsurdArrays) {
  expect_error(RawGguf().header(0, 1).str("a").u32(9).u32(4).u64(uint64_t{1} << 61).bytes,
               "array 'a' length");
  expect_error(RawGguf().header(0, 1).str("a").u32(9).u32(8).u64(1000).bytes,
               "array 'a' length 1000");
  RawGguf deep;
  deep.header(0, 1).str("deep").u32(9);
  for (int i = 0; i < 20; ++i) deep.u32(9).u64(1);
  deep.zeros(64);
  expect_error(deep.bytes, "nested deeper than");
}

TEST(Malformed, BadValues) {
  expect_error(RawGguf().header(0, 1).str("k").u32(13).bytes, "unknown value type 13");
  expect_error(RawGguf().header(0, 1).str("k").u32(9).u32(42).bytes, "unknown element type 42");
  RawGguf bad_bool;
  bad_bool.header(0, 1).str("flag").u32(7).bytes.push_back(2);
  expect_error(bad_bool.bytes, "invalid bool byte 2");
  expect_error(RawGguf().header(0, 2).kv_u32("k", 1).kv_u32("k", 2).bytes,
               "duplicate metadata key 'k'");
  expect_error(RawGguf().header(0, 1).kv_u32("", 1).bytes, "empty key");
}

TEST(Malformed, BadAlignment) {
  expect_error(RawGguf().header(0, 1).kv_u32("general.alignment", 48).bytes, "power of two");
  expect_error(RawGguf().header(0, 1).kv_u32("general.alignment", 0).bytes, "power of two");
  expect_error(RawGguf().header(0, 1).str("general.alignment").u32(10).u64(32).bytes,
               "stored as u32");
}

TEST(Malformed, BadTensorShapes) {
  expect_error(RawGguf().header(1, 0).tensor("t", {1, 1, 1, 1, 1}, kF32, 0).bytes, "5 dimensions");
  expect_error(RawGguf().header(1, 0).str("t").u32(0).zeros(32).bytes, "0 dimensions");
  expect_error(RawGguf().header(1, 0).tensor("t", {0}, kF32, 0).bytes, "invalid dimension 0");
  expect_error(RawGguf().header(1, 0).tensor("t", {~uint64_t{0}}, kF32, 0).bytes,
               "invalid dimension");
  expect_error(RawGguf().header(1, 0).tensor("t", {30}, kQ4_0, 0).bytes,
               "not a multiple of its block size 32");
  expect_error(
      RawGguf().header(1, 0).tensor("t", {uint64_t{1} << 40, uint64_t{1} << 40}, kF32, 0).bytes,
      "larger than the file");
  expect_error(RawGguf().header(1, 0).tensor("", {4}, kF32, 0).bytes, "empty name");
}

TEST(Malformed, UnknownTensorTypes) {
  expect_error(RawGguf().header(1, 0).tensor("t", {32}, 99, 0).bytes, "unknown type id 99");
  expect_error(RawGguf().header(1, 0).tensor("t", {32}, 9, 0).bytes, "unknown type id 9");
}

TEST(Malformed, BadTensorPlacement) {
  expect_error(RawGguf().header(1, 0).tensor("t", {4}, kF32, 8).pad().zeros(64).bytes,
               "not aligned");
  expect_error(RawGguf().header(1, 0).tensor("t", {4}, kF32, 0).pad().zeros(8).bytes,
               "past the end");
  expect_error(
      RawGguf().header(1, 0).tensor("t", {4}, kF32, uint64_t{1} << 62).pad().zeros(16).bytes,
      "past the end");
  expect_error(RawGguf().header(1, 0).tensor("t", {4}, kF32, 0).bytes, "past the end");
  expect_error(RawGguf()
                   .header(2, 0)
                   .tensor("t", {4}, kF32, 0)
                   .tensor("t", {4}, kF32, 32)
                   .pad()
                   .zeros(64)
                   .bytes,
               "duplicate tensor name 't'");
  expect_error(RawGguf()
                   .header(2, 0)
                   .tensor("a", {16}, kF32, 0)
                   .tensor("b", {4}, kF32, 32)
                   .pad()
                   .zeros(96)
                   .bytes,
               "overlap");
}

TEST(Malformed, ValidRawFileParses) {
  const auto bytes = RawGguf()
                         .header(2, 1)
                         .kv_u32("n", 7)
                         .tensor("a", {4}, kF32, 0)
                         .tensor("b", {32}, kQ4_0, 32)
                         .pad()
                         .zeros(64)
                         .bytes;
  const GgufFile file = GgufFile::parse(bytes, "good.gguf");
  EXPECT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.tensor("b").n_bytes, 18u);
}

std::vector<uint8_t> valid_file() {
  GgufWriter writer;
  writer.set_string("general.architecture", "llama");
  writer.set_strings("tokenizer.ggml.tokens", {"a", "b", "c"});
  writer.set_float32s("tokenizer.ggml.scores", {0.1f, 0.2f, 0.3f});
  writer.add_tensor("w", GgmlType::kQ4_0, {64, 2}, std::vector<uint8_t>(72, 3));
  writer.add_tensor("v", GgmlType::kF32, {8}, std::vector<uint8_t>(32, 0));
  return writer.to_bytes();
}

TEST(Malformed, EveryTruncationFailsCleanly) {
  const std::vector<uint8_t> bytes = valid_file();
  const GgufFile whole = GgufFile::parse(bytes, "whole.gguf");
  uint64_t needed = 0;
  for (const TensorInfo& t : whole.tensors())
    needed = std::max(needed, whole.data_offset() + t.offset + t.n_bytes);
  for (size_t length = 0; length < bytes.size(); ++length) {
    const std::vector<uint8_t> prefix(bytes.begin(),
                                      bytes.begin() + static_cast<std::ptrdiff_t>(length));
    if (length < needed) {
      EXPECT_THROW((void)GgufFile::parse(prefix, "cut.gguf"), Error) << "length " << length;
    } else {
      EXPECT_NO_THROW((void)GgufFile::parse(prefix, "cut.gguf")) << "length " << length;
    }
  }
}

TEST(Malformed, RandomByteFlipsFailCleanlyOrParse) {
  const std::vector<uint8_t> original = valid_file();
  Rng rng(12345);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bytes = original;
    const int flips = 1 + static_cast<int>(rng.below(4));
    for (int f = 0; f < flips; ++f)
      bytes[rng.below(bytes.size())] = static_cast<uint8_t>(rng.next_u64());
    try {
      (void)GgufFile::parse(bytes, "flipped.gguf");
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace eventkv::gguf
