// GGUF metadata values: the 13 value types, arrays (nested too), and lenient
// typed accessors (any integer type answers an integer question).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace eventkv::gguf {

enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

std::string_view value_type_name(ValueType type);

// Bytes one scalar of `type` occupies in a file; 0 for string and array.
size_t scalar_size(ValueType type);

bool is_valid_value_type(uint32_t type_id);

struct MetaValue;

// Scalars are kept packed as stored (so a million-element u8 array costs a
// megabyte, not a million variants); strings and nested arrays are unpacked.
struct MetaArray {
  ValueType element_type = ValueType::kUint8;
  uint64_t count = 0;
  std::vector<uint8_t> raw;          // scalar elements, little-endian
  std::vector<std::string> strings;  // element_type == kString
  std::vector<MetaArray> arrays;     // element_type == kArray

  MetaValue at(size_t index) const;      // one element, decoded
  std::vector<int64_t> to_ints() const;  // throws Error unless integer elements
  std::vector<float> to_floats() const;  // throws Error unless numeric elements
};

// Unsigned integers are held as uint64_t, signed ones as int64_t, floats as
// double; `type` keeps the stored type so a writer can reproduce the file.
struct MetaValue {
  ValueType type = ValueType::kUint8;
  std::variant<uint64_t, int64_t, double, bool, std::string, MetaArray> data;

  std::optional<uint64_t> as_uint() const;  // any non-negative integer
  std::optional<int64_t> as_int() const;    // any integer that fits
  std::optional<double> as_float() const;   // floats and integers
  std::optional<bool> as_bool() const;
  const std::string* as_string() const;
  const MetaArray* as_array() const;
};

// Decodes one packed scalar of `type` (not string or array).
MetaValue decode_scalar(ValueType type, const uint8_t* bytes);

struct MetaEntry {
  std::string key;
  MetaValue value;
};

// A short human-readable rendering; arrays show their length and first items.
std::string format_value(const MetaValue& value, size_t max_items = 8);

}  // namespace eventkv::gguf
