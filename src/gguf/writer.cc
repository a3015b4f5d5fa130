#include "gguf/writer.h"

#include <cstring>

#include "gguf/reader.h"
#include "util/atomic_file.h"
#include "util/byte_writer.h"
#include "util/error.h"

namespace eventkv::gguf {
namespace {

// GGUF strings: a u64 length, then the bytes.
void put_string(ByteWriter& sink, const std::string& text) {
  sink.put<uint64_t>(text.size());
  sink.put_bytes(text.data(), text.size());
}

void put_array(ByteWriter& sink, const MetaArray& array) {
  sink.put<uint32_t>(static_cast<uint32_t>(array.element_type));
  sink.put<uint64_t>(array.count);
  if (array.element_type == ValueType::kString) {
    for (const std::string& text : array.strings) put_string(sink, text);
  } else if (array.element_type == ValueType::kArray) {
    for (const MetaArray& nested : array.arrays) put_array(sink, nested);
  } else {
    sink.put_bytes(array.raw.data(), array.raw.size());
  }
}

void put_value(ByteWriter& sink, const MetaValue& value) {
  switch (value.type) {
    case ValueType::kUint8:
      return sink.put(static_cast<uint8_t>(*value.as_uint()));
    case ValueType::kInt8:
      return sink.put(static_cast<int8_t>(*value.as_int()));
    case ValueType::kUint16:
      return sink.put(static_cast<uint16_t>(*value.as_uint()));
    case ValueType::kInt16:
      return sink.put(static_cast<int16_t>(*value.as_int()));
    case ValueType::kUint32:
      return sink.put(static_cast<uint32_t>(*value.as_uint()));
    case ValueType::kInt32:
      return sink.put(static_cast<int32_t>(*value.as_int()));
    case ValueType::kFloat32:
      return sink.put(static_cast<float>(*value.as_float()));
    case ValueType::kBool:
      return sink.put(static_cast<uint8_t>(*value.as_bool() ? 1 : 0));
    case ValueType::kString:
      return put_string(sink, *value.as_string());
    case ValueType::kArray:
      return put_array(sink, *value.as_array());
    case ValueType::kUint64:
      return sink.put(*value.as_uint());
    case ValueType::kInt64:
      return sink.put(*value.as_int());
    case ValueType::kFloat64:
      return sink.put(*value.as_float());
  }
}

template <typename T>
MetaArray packed_array(ValueType type, const std::vector<T>& values) {
  MetaArray array;
  array.element_type = type;
  array.count = values.size();
  array.raw.resize(values.size() * sizeof(T));
  std::memcpy(array.raw.data(), values.data(), array.raw.size());
  return array;
}

}  // namespace

uint64_t tensor_bytes(GgmlType type, const std::vector<int64_t>& ne) {
  const TypeTraits traits = type_traits(type);
  if (ne.empty() || ne[0] % traits.block_elems != 0) {
    fail("tensor of type ", traits.name, ": ne[0] must be a multiple of ", traits.block_elems);
  }
  uint64_t size = static_cast<uint64_t>(ne[0] / traits.block_elems * traits.block_bytes);
  for (size_t d = 1; d < ne.size(); ++d) size *= static_cast<uint64_t>(ne[d]);
  return size;
}

void GgufWriter::set(const std::string& key, MetaValue value) {
  for (MetaEntry& entry : metadata_) {
    if (entry.key == key) {
      entry.value = std::move(value);
      return;
    }
  }
  metadata_.push_back(MetaEntry{key, std::move(value)});
}

void GgufWriter::set_uint32(const std::string& key, uint32_t value) {
  set(key, MetaValue{ValueType::kUint32, uint64_t{value}});
}

void GgufWriter::set_float32(const std::string& key, float value) {
  set(key, MetaValue{ValueType::kFloat32, double{value}});
}

void GgufWriter::set_bool(const std::string& key, bool value) {
  set(key, MetaValue{ValueType::kBool, value});
}

void GgufWriter::set_string(const std::string& key, const std::string& value) {
  set(key, MetaValue{ValueType::kString, value});
}

void GgufWriter::set_strings(const std::string& key, const std::vector<std::string>& values) {
  MetaArray array;
  array.element_type = ValueType::kString;
  array.count = values.size();
  array.strings = values;
  set(key, MetaValue{ValueType::kArray, std::move(array)});
}

void GgufWriter::set_float32s(const std::string& key, const std::vector<float>& values) {
  set(key, MetaValue{ValueType::kArray, packed_array(ValueType::kFloat32, values)});
}

void GgufWriter::set_int32s(const std::string& key, const std::vector<int32_t>& values) {
  set(key, MetaValue{ValueType::kArray, packed_array(ValueType::kInt32, values)});
}

void GgufWriter::set_bools(const std::string& key, const std::vector<bool>& values) {
  const std::vector<uint8_t> bytes(values.begin(), values.end());
  set(key, MetaValue{ValueType::kArray, packed_array(ValueType::kBool, bytes)});
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, const std::vector<int64_t>& ne,
                            std::vector<uint8_t> data) {
  if (ne.empty() || ne.size() > static_cast<size_t>(kMaxDims)) {
    fail("add_tensor '", name, "': 1 to ", kMaxDims, " dimensions required");
  }
  const uint64_t expected = tensor_bytes(type, ne);
  if (data.size() != expected) {
    fail("add_tensor '", name, "': ", data.size(), " bytes given, ", expected, " expected");
  }
  tensors_.push_back(PendingTensor{name, type, ne, std::move(data)});
}

uint64_t GgufWriter::alignment() const {
  for (const MetaEntry& entry : metadata_) {
    if (entry.key == "general.alignment") return *entry.value.as_uint();
  }
  return kDefaultAlignment;
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
  const uint64_t align = alignment();
  ByteWriter sink;
  sink.put<uint32_t>(kMagic);
  sink.put<uint32_t>(3);
  sink.put<uint64_t>(tensors_.size());
  sink.put<uint64_t>(metadata_.size());
  for (const MetaEntry& entry : metadata_) {
    put_string(sink, entry.key);
    sink.put<uint32_t>(static_cast<uint32_t>(entry.value.type));
    put_value(sink, entry.value);
  }
  uint64_t offset = 0;
  for (const PendingTensor& tensor : tensors_) {
    put_string(sink, tensor.name);
    sink.put<uint32_t>(static_cast<uint32_t>(tensor.ne.size()));
    for (const int64_t extent : tensor.ne) sink.put<uint64_t>(static_cast<uint64_t>(extent));
    sink.put<uint32_t>(static_cast<uint32_t>(tensor.type));
    sink.put<uint64_t>(offset);
    offset += tensor.data.size();
    offset += (align - offset % align) % align;
  }
  sink.pad_to(align);
  for (const PendingTensor& tensor : tensors_) {
    sink.put_bytes(tensor.data.data(), tensor.data.size());
    sink.pad_to(align);
  }
  return sink.take();
}

void GgufWriter::write(const std::string& path) const {
  write_file_atomic(path, to_bytes());
}

}  // namespace eventkv::gguf
