#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "util/error.h"

namespace eventkv::gguf {
namespace {

MetaArray nested_array() {
  MetaArray inner_a;
  inner_a.element_type = ValueType::kInt16;
  inner_a.count = 2;
  inner_a.raw = {0xFF, 0xFF, 0x02, 0x00};  // -1, 2
  MetaArray inner_b;
  inner_b.element_type = ValueType::kString;
  inner_b.count = 1;
  inner_b.strings = {"deep"};
  MetaArray outer;
  outer.element_type = ValueType::kArray;
  outer.count = 2;
  outer.arrays = {inner_a, inner_b};
  return outer;
}

std::vector<uint8_t> every_value_type_file() {
  GgufWriter writer;
  writer.set("v.u8", MetaValue{ValueType::kUint8, uint64_t{200}});
  writer.set("v.i8", MetaValue{ValueType::kInt8, int64_t{-100}});
  writer.set("v.u16", MetaValue{ValueType::kUint16, uint64_t{60000}});
  writer.set("v.i16", MetaValue{ValueType::kInt16, int64_t{-30000}});
  writer.set_uint32("v.u32", 4000000000u);
  writer.set("v.i32", MetaValue{ValueType::kInt32, int64_t{-2000000000}});
  writer.set_float32("v.f32", 0.25f);
  writer.set_bool("v.bool", true);
  writer.set_string("v.string", "h\xC3\xA9llo");
  writer.set("v.u64", MetaValue{ValueType::kUint64, uint64_t{1} << 63});
  writer.set("v.i64", MetaValue{ValueType::kInt64, int64_t{-(int64_t{1} << 62)}});
  writer.set("v.f64", MetaValue{ValueType::kFloat64, 1e300});
  writer.set_strings("v.strings", {"a", "", "c"});
  writer.set_float32s("v.floats", {1.5f, -2.0f});
  writer.set("v.nested", MetaValue{ValueType::kArray, nested_array()});
  std::vector<uint8_t> data(2 * 3 * 4);
  const float values[6] = {1, 2, 3, 4, 5, 6};
  std::memcpy(data.data(), values, sizeof(values));
  writer.add_tensor("t.f32", GgmlType::kF32, {3, 2}, data);
  writer.add_tensor("t.q8", GgmlType::kQ8_0, {64, 1}, std::vector<uint8_t>(68, 1));
  return writer.to_bytes();
}

TEST(GgufReader, ReadsEveryValueType) {
  const std::vector<uint8_t> bytes = every_value_type_file();
  const GgufFile file = GgufFile::parse(bytes, "mem");
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.metadata().size(), 15u);
  EXPECT_EQ(*file.get_uint("v.u8"), 200u);
  EXPECT_EQ(*file.find("v.i8")->as_int(), -100);
  EXPECT_EQ(*file.get_uint("v.u16"), 60000u);
  EXPECT_EQ(*file.find("v.i16")->as_int(), -30000);
  EXPECT_EQ(*file.get_uint("v.u32"), 4000000000u);
  EXPECT_EQ(*file.find("v.i32")->as_int(), -2000000000);
  EXPECT_EQ(*file.get_float("v.f32"), 0.25);
  EXPECT_EQ(*file.get_bool("v.bool"), true);
  EXPECT_EQ(*file.get_string("v.string"), "h\xC3\xA9llo");
  EXPECT_EQ(*file.get_uint("v.u64"), uint64_t{1} << 63);
  EXPECT_EQ(*file.find("v.i64")->as_int(), -(int64_t{1} << 62));
  EXPECT_EQ(*file.get_float("v.f64"), 1e300);
  EXPECT_EQ(file.get_array("v.strings")->strings, (std::vector<std::string>{"a", "", "c"}));
  EXPECT_EQ(file.get_array("v.floats")->to_floats(), (std::vector<float>{1.5f, -2.0f}));
  const MetaArray* nested = file.get_array("v.nested");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->count, 2u);
  EXPECT_EQ(nested->arrays[0].to_ints(), (std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(nested->arrays[1].strings[0], "deep");
}

TEST(GgufReader, TypedLookupsRefuseWrongTypes) {
  const std::vector<uint8_t> bytes = every_value_type_file();
  const GgufFile file = GgufFile::parse(bytes, "mem");
  EXPECT_FALSE(file.get_uint("absent").has_value());
  EXPECT_THROW(file.get_uint("v.string"), Error);
  EXPECT_THROW(file.get_uint("v.i8"), Error);  // negative
  EXPECT_THROW(file.get_string("v.u8"), Error);
  EXPECT_THROW(file.get_array("v.f32"), Error);
  EXPECT_THROW(file.get_bool("v.u8"), Error);
}

TEST(GgufReader, TensorsPointIntoAlignedData) {
  const std::vector<uint8_t> bytes = every_value_type_file();
  const GgufFile file = GgufFile::parse(bytes, "mem");
  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.data_offset() % 32, 0u);
  const TensorInfo& t = file.tensor("t.f32");
  EXPECT_EQ(t.n_dims, 2);
  EXPECT_EQ(t.ne[0], 3);
  EXPECT_EQ(t.ne[1], 2);
  EXPECT_EQ(t.n_bytes, 24u);
  EXPECT_EQ(t.row_bytes(), 12u);
  float second_row[3];
  std::memcpy(second_row, t.row(1), sizeof(second_row));
  EXPECT_EQ(second_row[0], 4.0f);
  EXPECT_THROW(t.row(2), Error);
  const TensorInfo& q = file.tensor("t.q8");
  EXPECT_EQ(q.offset % 32, 0u);
  EXPECT_EQ(q.n_bytes, 68u);
  EXPECT_EQ(file.find_tensor("absent"), nullptr);
  EXPECT_THROW(file.tensor("absent"), Error);
}

TEST(GgufReader, WriterRoundTripIsByteIdentical) {
  const std::vector<uint8_t> bytes = every_value_type_file();
  const GgufFile file = GgufFile::parse(bytes, "mem");
  GgufWriter copy;
  for (const MetaEntry& entry : file.metadata()) copy.set(entry.key, entry.value);
  for (const TensorInfo& t : file.tensors()) {
    copy.add_tensor(t.name, t.type, {t.ne[0], t.ne[1]},
                    std::vector<uint8_t>(t.data, t.data + t.n_bytes));
  }
  EXPECT_EQ(copy.to_bytes(), bytes);
}

TEST(GgufReader, HonoursCustomAlignment) {
  GgufWriter writer;
  writer.set_uint32("general.alignment", 64);
  writer.add_tensor("a", GgmlType::kF32, {3}, std::vector<uint8_t>(12, 0));
  writer.add_tensor("b", GgmlType::kF32, {5}, std::vector<uint8_t>(20, 0));
  const std::vector<uint8_t> bytes = writer.to_bytes();
  const GgufFile file = GgufFile::parse(bytes, "mem");
  EXPECT_EQ(file.alignment(), 64u);
  EXPECT_EQ(file.data_offset() % 64, 0u);
  EXPECT_EQ(file.tensor("b").offset, 64u);
}

TEST(GgufReader, AcceptsVersion2) {
  std::vector<uint8_t> bytes = every_value_type_file();
  bytes[4] = 2;
  EXPECT_EQ(GgufFile::parse(bytes, "mem").version(), 2u);
}

}  // namespace
}  // namespace eventkv::gguf
