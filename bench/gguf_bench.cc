// Dequantization throughput per type (bytes of f32 produced per second) and
// the cost of opening and parsing real GGUF files.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "compute/quant_types.h"
#include "gguf/random_tensor.h"
#include "gguf/reader.h"
#include "model/config.h"

namespace {

using eventkv::gguf::GgmlType;

constexpr int64_t kRowElems = 4096;
constexpr int64_t kRows = 256;  // 1 Mi elements: 4 MiB of f32 per iteration

void BM_Dequantize(benchmark::State& state, GgmlType type) {
  eventkv::Rng rng(1);
  const std::vector<uint8_t> bytes =
      eventkv::gguf::random_tensor_bytes(type, kRowElems, kRows, rng, 0.05f);
  const size_t row_bytes = bytes.size() / kRows;
  std::vector<float> out(kRowElems);
  for (auto _ : state) {
    for (int64_t r = 0; r < kRows; ++r) {
      eventkv::compute::dequantize_row(type, bytes.data() + r * row_bytes, out.data(), kRowElems);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * kRowElems * kRows *
                          static_cast<int64_t>(sizeof(float)));
}

void BM_OpenModel(benchmark::State& state, const std::string& file_name) {
  const auto path = std::filesystem::path(EVENTKV_SOURCE_DIR) / "models" / file_name;
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("model not downloaded (scripts/get-models --all)");
    return;
  }
  for (auto _ : state) {
    const auto file = eventkv::gguf::GgufFile::open(path.string());
    benchmark::DoNotOptimize(eventkv::model::config_from_gguf(file));
  }
}

void register_benchmarks() {
  for (const GgmlType type : eventkv::gguf::kDequantizableTypes) {
    benchmark::RegisterBenchmark(
        ("dequantize/" + std::string(eventkv::gguf::type_name(type))).c_str(), BM_Dequantize, type);
  }
  for (const char* file :
       {"smollm2-135m-instruct-q4_1.gguf", "gemma-3-270m-q4_k_m.gguf",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"}) {
    benchmark::RegisterBenchmark((std::string("open_and_parse/") + file).c_str(), BM_OpenModel,
                                 std::string(file))
        ->Unit(benchmark::kMillisecond);
  }
}

const bool kRegistered = (register_benchmarks(), true);

}  // namespace
