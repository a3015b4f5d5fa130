#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "compute/quant_types.h"
#include "gguf/random_tensor.h"
#include "gguf/reader.h"
#include "model/test_model.h"
#include "test_support.h"
#include "util/error.h"
#include "util/hash.h"

namespace eventkv::gguf {
namespace {

using eventkv::compute::dequantize_row;
using eventkv::testing::base64_floats;
using eventkv::testing::load_fixture;
using eventkv::testing::real_model_path;
using eventkv::testing::ulp_distance;

// Compares dequantized rows of `file` with the values gguf-py produced.
void expect_rows_match(const GgufFile& file, const nlohmann::json& rows) {
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    const TensorInfo& tensor = file.tensor(row["tensor"].get<std::string>());
    ASSERT_EQ(type_name(tensor.type), row["type"].get<std::string>());
    const std::vector<float> expected = base64_floats(row["values_f32_base64"].get<std::string>());
    std::vector<float> actual(static_cast<size_t>(tensor.ne[0]));
    dequantize_row(tensor.type, tensor.row(row["row"].get<int64_t>()), actual.data(), tensor.ne[0]);
    ASSERT_LE(expected.size(), actual.size());
    const bool exact = tensor.type == GgmlType::kF32 || tensor.type == GgmlType::kF16 ||
                       tensor.type == GgmlType::kBF16;
    for (size_t i = 0; i < expected.size(); ++i) {
      const float want = expected[i];
      if (exact) {
        ASSERT_EQ(actual[i], want) << tensor.name << " row " << row["row"] << " element " << i;
      } else {
        ASSERT_LE(ulp_distance(actual[i], want), 1u)
            << tensor.name << " row " << row["row"] << " element " << i << ": " << actual[i]
            << " vs " << want;
      }
    }
  }
}

TEST(Dequant, TypeZooMatchesGgufPy) {
  const auto fixture = load_fixture("gguf_reference.json")["type_zoo"];
  const std::vector<uint8_t> bytes =
      model::build_type_zoo(fixture["seed"].get<uint64_t>()).to_bytes();
  ASSERT_EQ(fnv1a64(bytes), std::stoull(fixture["fnv1a64"].get<std::string>(), nullptr, 16))
      << "the type zoo generator changed; regenerate tests/fixtures with tools/reference";
  const GgufFile file = GgufFile::parse(bytes, "type-zoo");
  expect_rows_match(file, fixture["rows"]);
  for (const GgmlType type : kDequantizableTypes) {
    bool covered = false;
    for (const auto& row : fixture["rows"])
      covered = covered || row["type"] == std::string(type_name(type));
    EXPECT_TRUE(covered) << type_name(type) << " has no reference rows";
  }
}

TEST(Dequant, RealModelsMatchGgufPy) {
  const auto models = load_fixture("gguf_reference.json")["real_models"];
  int checked = 0;
  for (const auto& model : models) {
    const std::string path = real_model_path(model["file"].get<std::string>());
    if (path.empty()) continue;
    SCOPED_TRACE(path);
    expect_rows_match(GgufFile::open(path), model["rows"]);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no real models in models/ (run scripts/get-models --all)";
}

TEST(Dequant, RandomBlocksAreFiniteAndBounded) {
  Rng rng(3);
  for (const GgmlType type : kDequantizableTypes) {
    const std::vector<uint8_t> bytes = random_tensor_bytes(type, 512, 1, rng, 0.05f);
    std::vector<float> values(512);
    dequantize_row(type, bytes.data(), values.data(), 512);
    double sum_sq = 0;
    for (const float v : values) {
      ASSERT_TRUE(std::isfinite(v)) << type_name(type);
      sum_sq += static_cast<double>(v) * v;
    }
    const double rms = std::sqrt(sum_sq / 512);
    EXPECT_GT(rms, 0.005) << type_name(type);
    EXPECT_LT(rms, 0.2) << type_name(type);
  }
}

// The kernels' table (compute/quant_types.h) holds exactly the types gguf
// marks dequantizable, with the file format's block geometry.
TEST(QuantTypes, TableHoldsTheDequantizableTypes) {
  for (uint32_t id = 0; id < 64; ++id) {
    const auto traits = find_type_traits(id);
    const compute::QuantType* q = compute::find_quant_type(static_cast<GgmlType>(id));
    ASSERT_EQ(q != nullptr, traits && traits->dequantizable) << id;
    if (q == nullptr) continue;
    SCOPED_TRACE(traits->name);
    EXPECT_EQ(q->type, static_cast<GgmlType>(id));
    EXPECT_EQ(q->block_elems, traits->block_elems);
    EXPECT_EQ(q->block_bytes, traits->block_bytes);
    EXPECT_NE(q->dequantize, nullptr);
    EXPECT_EQ(q->q8_block, q->dot_q8 != nullptr ? q->block_elems : 0);
  }
}

TEST(Dequant, RefusesBadLengthsAndTypes) {
  std::vector<uint8_t> block(18, 0);
  std::vector<float> out(64);
  EXPECT_THROW(dequantize_row(GgmlType::kQ4_0, block.data(), out.data(), 31), Error);
  EXPECT_THROW(dequantize_row(GgmlType::kIQ2_XXS, block.data(), out.data(), 256), Error);
}

}  // namespace
}  // namespace eventkv::gguf
