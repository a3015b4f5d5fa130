#include "gguf/reader.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "util/error.h"
#include "util/mapped_file.h"

namespace eventkv::gguf {
namespace {

constexpr uint64_t kMaxKeyBytes = 65535;
constexpr int kMaxArrayDepth = 8;
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;  // key length, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes =
    8 + 4 + 8 + 4 + 8;  // name length, n_dims, ne0, type, offset

// Bounds-checked little-endian reads over the file's bytes.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }

  template <typename... Parts>
  [[noreturn]] void error(Parts&&... parts) const {
    fail(name_, ": ", std::forward<Parts>(parts)..., " (at byte ", pos_, ")");
  }

  void need(uint64_t n, std::string_view what) const {
    if (n > remaining()) {
      error("truncated file: ", what, " needs ", n, " bytes, ", remaining(), " left");
    }
  }

  template <typename T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  const uint8_t* take(uint64_t n, std::string_view what) {
    need(n, what);
    const uint8_t* start = bytes_.data() + pos_;
    pos_ += n;
    return start;
  }

  std::string read_string(std::string_view what, uint64_t max_bytes) {
    const auto length = read<uint64_t>(what);
    if (length > max_bytes) error(what, " length ", length, " exceeds the limit of ", max_bytes);
    const uint8_t* start = take(length, what);
    return {reinterpret_cast<const char*>(start), static_cast<size_t>(length)};
  }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& name_;
  uint64_t pos_ = 0;
};

uint64_t min_element_bytes(ValueType type) {
  if (type == ValueType::kString) return 8;
  if (type == ValueType::kArray) return 4 + 8;
  return scalar_size(type);
}

uint64_t align_up(uint64_t offset, uint64_t alignment) {
  return offset + (alignment - offset % alignment) % alignment;
}

}  // namespace

class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, GgufFile& file)
      : bytes_(bytes), file_(file), cursor_(bytes, file.name_) {}

  void run() {
    file_.file_size_ = bytes_.size();
    read_header();
    const auto tensor_count = cursor_.read<uint64_t>("tensor count");
    const auto kv_count = cursor_.read<uint64_t>("metadata count");
    read_metadata(kv_count);
    read_alignment();
    read_tensor_infos(tensor_count);
    place_tensor_data();
  }

 private:
  void read_header() {
    const auto magic = cursor_.read<uint32_t>("magic");
    if (magic != kMagic) cursor_.error("not a GGUF file (bad magic)");
    const auto version = cursor_.read<uint32_t>("version");
    if ((version & 0xFFFFu) == 0) {
      cursor_.error("unsupported byte order: version ", version, " looks big-endian");
    }
    if (version != 2 && version != 3) {
      cursor_.error("unsupported GGUF version ", version, " (eventkv reads versions 2 and 3)");
    }
    file_.version_ = version;
  }

  void read_metadata(uint64_t kv_count) {
    if (kv_count > cursor_.remaining() / kMinKvBytes) {
      cursor_.error("metadata count ", kv_count, " is larger than the file can hold");
    }
    file_.metadata_.reserve(kv_count);
    for (uint64_t i = 0; i < kv_count; ++i) {
      std::string key = cursor_.read_string("metadata key", kMaxKeyBytes);
      if (key.empty()) cursor_.error("metadata entry ", i, " has an empty key");
      if (file_.metadata_index_.count(key) != 0)
        cursor_.error("duplicate metadata key '", key, "'");
      const auto type_id = cursor_.read<uint32_t>("metadata value type");
      if (!is_valid_value_type(type_id)) {
        cursor_.error("metadata key '", key, "' has unknown value type ", type_id);
      }
      MetaValue value = read_value(static_cast<ValueType>(type_id), key, 0);
      file_.metadata_index_.emplace(key, file_.metadata_.size());
      file_.metadata_.push_back(MetaEntry{std::move(key), std::move(value)});
    }
  }

  MetaValue read_value(ValueType type, const std::string& key, int depth) {
    if (type == ValueType::kString) {
      return MetaValue{type,
                       cursor_.read_string("string value of '" + key + "'", cursor_.remaining())};
    }
    if (type == ValueType::kArray) return MetaValue{type, read_array(key, depth)};
    const uint8_t* bytes = cursor_.take(scalar_size(type), "value of '" + key + "'");
    if (type == ValueType::kBool && *bytes > 1) {
      cursor_.error("metadata key '", key, "' has invalid bool byte ", int{*bytes});
    }
    return decode_scalar(type, bytes);
  }

  MetaArray read_array(const std::string& key, int depth) {
    if (depth >= kMaxArrayDepth)
      cursor_.error("arrays nested deeper than ", kMaxArrayDepth, " in '", key, "'");
    const auto type_id = cursor_.read<uint32_t>("array element type");
    if (!is_valid_value_type(type_id)) {
      cursor_.error("array '", key, "' has unknown element type ", type_id);
    }
    MetaArray array;
    array.element_type = static_cast<ValueType>(type_id);
    array.count = cursor_.read<uint64_t>("array length");
    if (array.count > cursor_.remaining() / min_element_bytes(array.element_type)) {
      cursor_.error("array '", key, "' length ", array.count, " is larger than the file can hold");
    }
    if (array.element_type == ValueType::kString) {
      array.strings.reserve(array.count);
      for (uint64_t i = 0; i < array.count; ++i) {
        array.strings.push_back(
            cursor_.read_string("string in array '" + key + "'", cursor_.remaining()));
      }
    } else if (array.element_type == ValueType::kArray) {
      array.arrays.reserve(array.count);
      for (uint64_t i = 0; i < array.count; ++i) array.arrays.push_back(read_array(key, depth + 1));
    } else {
      const uint64_t n_bytes = array.count * scalar_size(array.element_type);
      const uint8_t* start = cursor_.take(n_bytes, "array '" + key + "'");
      array.raw.assign(start, start + n_bytes);
      if (array.element_type == ValueType::kBool) {
        for (const uint8_t b : array.raw) {
          if (b > 1) cursor_.error("array '", key, "' has invalid bool byte ", int{b});
        }
      }
    }
    return array;
  }

  void read_alignment() {
    const MetaValue* value = file_.find("general.alignment");
    if (value == nullptr) return;
    const auto alignment = value->as_uint();
    if (value->type != ValueType::kUint32 || !alignment || *alignment == 0 ||
        (*alignment & (*alignment - 1)) != 0) {
      cursor_.error("general.alignment must be a non-zero power of two stored as u32, got ",
                    format_value(*value));
    }
    file_.alignment_ = *alignment;
  }

  void read_tensor_infos(uint64_t tensor_count) {
    if (tensor_count > cursor_.remaining() / kMinTensorInfoBytes) {
      cursor_.error("tensor count ", tensor_count, " is larger than the file can hold");
    }
    file_.tensors_.reserve(tensor_count);
    for (uint64_t i = 0; i < tensor_count; ++i) {
      TensorInfo info = read_tensor_info();
      if (file_.tensor_index_.count(info.name) != 0) {
        cursor_.error("duplicate tensor name '", info.name, "'");
      }
      file_.tensor_index_.emplace(info.name, file_.tensors_.size());
      file_.tensors_.push_back(std::move(info));
    }
  }

  TensorInfo read_tensor_info() {
    TensorInfo info;
    info.name = cursor_.read_string("tensor name", kMaxTensorNameBytes);
    if (info.name.empty()) cursor_.error("tensor with an empty name");
    const auto n_dims = cursor_.read<uint32_t>("tensor n_dims");
    if (n_dims == 0 || n_dims > kMaxDims) {
      cursor_.error("tensor '", info.name, "' has ", n_dims, " dimensions (1 to ", kMaxDims,
                    " allowed)");
    }
    info.n_dims = static_cast<int>(n_dims);
    for (int d = 0; d < info.n_dims; ++d) {
      const auto extent = cursor_.read<uint64_t>("tensor dimension");
      if (extent == 0 || extent > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        cursor_.error("tensor '", info.name, "' has invalid dimension ", extent);
      }
      info.ne[d] = static_cast<int64_t>(extent);
    }
    const auto type_id = cursor_.read<uint32_t>("tensor type");
    const auto traits = find_type_traits(type_id);
    if (!traits) cursor_.error("tensor '", info.name, "' has unknown type id ", type_id);
    info.type = static_cast<GgmlType>(type_id);
    info.offset = cursor_.read<uint64_t>("tensor offset");
    info.n_bytes = checked_tensor_bytes(info, *traits);
    return info;
  }

  // size = (ne0 / block) * block_bytes * ne1 * ne2 * ne3, refusing overflow
  // and anything larger than the file.
  uint64_t checked_tensor_bytes(const TensorInfo& info, const TypeTraits& traits) const {
    if (info.ne[0] % traits.block_elems != 0) {
      cursor_.error("tensor '", info.name, "' of type ", traits.name, " has ne[0]=", info.ne[0],
                    ", not a multiple of its block size ", traits.block_elems);
    }
    const uint64_t limit = bytes_.size();
    uint64_t size = static_cast<uint64_t>(info.ne[0] / traits.block_elems) * traits.block_bytes;
    for (int d = 1; d < kMaxDims; ++d) {
      const auto extent = static_cast<uint64_t>(info.ne[d]);
      if (size != 0 && extent > limit / size) {
        cursor_.error("tensor '", info.name, "' is larger than the file");
      }
      size *= extent;
    }
    if (size > limit) cursor_.error("tensor '", info.name, "' is larger than the file");
    return size;
  }

  void place_tensor_data() {
    file_.data_offset_ = align_up(cursor_.pos(), file_.alignment_);
    const uint64_t data_size =
        file_.data_offset_ <= bytes_.size() ? bytes_.size() - file_.data_offset_ : 0;
    for (TensorInfo& info : file_.tensors_) {
      if (info.offset % file_.alignment_ != 0) {
        fail(file_.name_, ": tensor '", info.name, "' data offset ", info.offset,
             " is not aligned to ", file_.alignment_);
      }
      if (info.offset > data_size || info.n_bytes > data_size - info.offset) {
        fail(file_.name_, ": tensor '", info.name, "' data [", info.offset, ", ",
             info.offset + info.n_bytes, ") lies past the end of the data section (", data_size,
             " bytes)");
      }
      info.data = bytes_.data() + file_.data_offset_ + info.offset;
    }
    check_no_overlap();
  }

  void check_no_overlap() const {
    std::vector<const TensorInfo*> by_offset;
    by_offset.reserve(file_.tensors_.size());
    for (const TensorInfo& info : file_.tensors_) by_offset.push_back(&info);
    std::sort(by_offset.begin(), by_offset.end(),
              [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i) {
      const TensorInfo& prev = *by_offset[i - 1];
      if (prev.offset + prev.n_bytes > by_offset[i]->offset) {
        fail(file_.name_, ": tensors '", prev.name, "' and '", by_offset[i]->name,
             "' overlap in the data section");
      }
    }
  }

  std::span<const uint8_t> bytes_;
  GgufFile& file_;
  Cursor cursor_;
};

size_t TensorInfo::row_bytes() const {
  const TypeTraits traits = type_traits(type);
  return static_cast<size_t>(ne[0] / traits.block_elems * traits.block_bytes);
}

const uint8_t* TensorInfo::row(int64_t index) const {
  if (index < 0 || index >= n_rows())
    fail("tensor '", name, "': row ", index, " out of range ", n_rows());
  return data + static_cast<size_t>(index) * row_bytes();
}

GgufFile GgufFile::open(const std::string& path) {
  auto mapping = std::make_shared<const MappedFile>(path);
  GgufFile file = parse(mapping->bytes(), path);
  file.mapping_ = std::move(mapping);
  return file;
}

GgufFile GgufFile::parse(std::span<const uint8_t> bytes, const std::string& name) {
  GgufFile file;
  file.name_ = name;
  Parser(bytes, file).run();
  return file;
}

const MetaValue* GgufFile::find(std::string_view key) const {
  const auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].value;
}

namespace {

template <typename T>
std::optional<T> typed_lookup(const GgufFile& file, std::string_view key,
                              std::optional<T> (MetaValue::*accessor)() const,
                              std::string_view wanted) {
  const MetaValue* value = file.find(key);
  if (value == nullptr) return std::nullopt;
  const auto result = (value->*accessor)();
  if (!result) {
    fail(file.name(), ": metadata key '", key, "' should be ", wanted, " but holds ",
         value_type_name(value->type), " ", format_value(*value));
  }
  return result;
}

}  // namespace

std::optional<uint64_t> GgufFile::get_uint(std::string_view key) const {
  return typed_lookup(*this, key, &MetaValue::as_uint, "a non-negative integer");
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  return typed_lookup(*this, key, &MetaValue::as_float, "a number");
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  return typed_lookup(*this, key, &MetaValue::as_bool, "a bool");
}

std::optional<std::string> GgufFile::get_string(std::string_view key) const {
  const MetaValue* value = find(key);
  if (value == nullptr) return std::nullopt;
  const std::string* text = value->as_string();
  if (text == nullptr) {
    fail(name_, ": metadata key '", key, "' should be a string but holds ",
         value_type_name(value->type));
  }
  return *text;
}

const MetaArray* GgufFile::get_array(std::string_view key) const {
  const MetaValue* value = find(key);
  if (value == nullptr) return nullptr;
  const MetaArray* array = value->as_array();
  if (array == nullptr) {
    fail(name_, ": metadata key '", key, "' should be an array but holds ",
         value_type_name(value->type));
  }
  return array;
}

const TensorInfo* GgufFile::find_tensor(std::string_view tensor_name) const {
  const auto it = tensor_index_.find(tensor_name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& GgufFile::tensor(std::string_view tensor_name) const {
  const TensorInfo* info = find_tensor(tensor_name);
  if (info == nullptr) fail(name_, ": missing tensor '", tensor_name, "'");
  return *info;
}

}  // namespace eventkv::gguf
