#include "gguf/metadata.h"

#include <bit>
#include <cstring>
#include <limits>
#include <sstream>

#include "util/error.h"

namespace eventkv::gguf {

static_assert(std::endian::native == std::endian::little, "GGUF files are read in place");

std::string_view value_type_name(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
      return "u8";
    case ValueType::kInt8:
      return "i8";
    case ValueType::kUint16:
      return "u16";
    case ValueType::kInt16:
      return "i16";
    case ValueType::kUint32:
      return "u32";
    case ValueType::kInt32:
      return "i32";
    case ValueType::kFloat32:
      return "f32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kUint64:
      return "u64";
    case ValueType::kInt64:
      return "i64";
    case ValueType::kFloat64:
      return "f64";
  }
  return "?";
}

size_t scalar_size(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
      return 8;
    case ValueType::kString:
    case ValueType::kArray:
      return 0;
  }
  return 0;
}

bool is_valid_value_type(uint32_t type_id) {
  return type_id <= 12;
}

namespace {

template <typename T>
T load(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

}  // namespace

MetaValue decode_scalar(ValueType type, const uint8_t* bytes) {
  MetaValue value;
  value.type = type;
  switch (type) {
    case ValueType::kUint8:
      value.data = uint64_t{load<uint8_t>(bytes)};
      break;
    case ValueType::kInt8:
      value.data = int64_t{load<int8_t>(bytes)};
      break;
    case ValueType::kUint16:
      value.data = uint64_t{load<uint16_t>(bytes)};
      break;
    case ValueType::kInt16:
      value.data = int64_t{load<int16_t>(bytes)};
      break;
    case ValueType::kUint32:
      value.data = uint64_t{load<uint32_t>(bytes)};
      break;
    case ValueType::kInt32:
      value.data = int64_t{load<int32_t>(bytes)};
      break;
    case ValueType::kFloat32:
      value.data = double{load<float>(bytes)};
      break;
    case ValueType::kBool:
      value.data = load<uint8_t>(bytes) != 0;
      break;
    case ValueType::kUint64:
      value.data = load<uint64_t>(bytes);
      break;
    case ValueType::kInt64:
      value.data = load<int64_t>(bytes);
      break;
    case ValueType::kFloat64:
      value.data = load<double>(bytes);
      break;
    case ValueType::kString:
    case ValueType::kArray:
      fail("decode_scalar: ", value_type_name(type), " is not a scalar");
  }
  return value;
}

MetaValue MetaArray::at(size_t index) const {
  if (index >= count) fail("array index ", index, " out of range ", count);
  if (element_type == ValueType::kString) return MetaValue{ValueType::kString, strings[index]};
  if (element_type == ValueType::kArray) return MetaValue{ValueType::kArray, arrays[index]};
  return decode_scalar(element_type, raw.data() + index * scalar_size(element_type));
}

std::vector<int64_t> MetaArray::to_ints() const {
  std::vector<int64_t> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const auto value = at(i).as_int();
    if (!value) fail("array of ", value_type_name(element_type), " is not an integer array");
    out.push_back(*value);
  }
  return out;
}

std::vector<float> MetaArray::to_floats() const {
  std::vector<float> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const auto value = at(i).as_float();
    if (!value) fail("array of ", value_type_name(element_type), " is not a numeric array");
    out.push_back(static_cast<float>(*value));
  }
  return out;
}

std::optional<uint64_t> MetaValue::as_uint() const {
  if (const auto* u = std::get_if<uint64_t>(&data)) return *u;
  if (const auto* i = std::get_if<int64_t>(&data); i != nullptr && *i >= 0) {
    return static_cast<uint64_t>(*i);
  }
  return std::nullopt;
}

std::optional<int64_t> MetaValue::as_int() const {
  if (const auto* i = std::get_if<int64_t>(&data)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&data);
      u != nullptr && *u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(*u);
  }
  return std::nullopt;
}

std::optional<double> MetaValue::as_float() const {
  if (const auto* d = std::get_if<double>(&data)) return *d;
  if (const auto* u = std::get_if<uint64_t>(&data)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&data)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> MetaValue::as_bool() const {
  if (const auto* b = std::get_if<bool>(&data)) return *b;
  return std::nullopt;
}

const std::string* MetaValue::as_string() const {
  return std::get_if<std::string>(&data);
}

const MetaArray* MetaValue::as_array() const {
  return std::get_if<MetaArray>(&data);
}

namespace {

void write_value(std::ostringstream& out, const MetaValue& value, size_t max_items) {
  if (const auto* s = value.as_string()) {
    out << '"';
    for (const char c : s->substr(0, 80)) out << (c == '\n' ? ' ' : c);
    if (s->size() > 80) out << "...";
    out << '"';
  } else if (const auto* array = value.as_array()) {
    out << value_type_name(array->element_type) << '[' << array->count << "] {";
    for (size_t i = 0; i < array->count && i < max_items; ++i) {
      if (i > 0) out << ", ";
      write_value(out, array->at(i), max_items);
    }
    if (array->count > max_items) out << ", ...";
    out << '}';
  } else if (const auto b = value.as_bool()) {
    out << (*b ? "true" : "false");
  } else if (const auto* d = std::get_if<double>(&value.data)) {
    out << *d;
  } else if (const auto u = value.as_uint()) {
    out << *u;
  } else if (const auto i = value.as_int()) {
    out << *i;
  }
}

}  // namespace

std::string format_value(const MetaValue& value, size_t max_items) {
  std::ostringstream out;
  out.precision(9);
  write_value(out, value, max_items);
  return out.str();
}

}  // namespace eventkv::gguf
