// The weight-times-activation kernels per type, on a matrix that fits in L2,
// so the figure is the kernel's arithmetic rather than memory: the f32 dots
// (exact decode) and the int8 ones for one token (decode) and a tile of 8
// (several sessions, prefill with rowwise int8), and the int8 panels' product
// (several sessions' decode steps, prefill) for 8 and 64 tokens.
// Reported as weight bytes consumed per second; decode needs this well above
// the memory bandwidth (memory_bandwidth_bench.cc) to stay memory bound. The
// panels' product reports weight-token products per second (items).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "compute/kernels.h"
#include "compute/quant_dot.h"
#include "compute/thread_pool.h"
#include "gguf/random_tensor.h"
#include "model/weights.h"

namespace {

using eventkv::gguf::GgmlType;

constexpr int64_t kIn = 4096;
constexpr int64_t kOut = 128;

void BM_DotRowsInt8(benchmark::State& state, GgmlType type) {
  const auto& k = eventkv::compute::kernels();
  const auto n_tokens = state.range(0);
  eventkv::Rng rng(1);
  const std::vector<uint8_t> weights =
      eventkv::gguf::random_tensor_bytes(type, kIn, kOut, rng, 0.05f);
  const size_t row_bytes = weights.size() / kOut;
  std::vector<float> x(static_cast<size_t>(n_tokens * kIn));
  for (float& v : x) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  const auto batch = k.quantize_batch(x.data(), n_tokens, kIn, k.q8_block_elems(type));
  std::vector<float> out(static_cast<size_t>(n_tokens * kOut));
  for (auto _ : state) {
    k.dot_rows_q8(type, weights.data(), row_bytes, kOut, batch, out.data(), kOut);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(weights.size()));
  state.SetLabel(k.isa);
}

void BM_DotRowsF32(benchmark::State& state, GgmlType type) {
  eventkv::Rng rng(1);
  const std::vector<uint8_t> weights =
      eventkv::gguf::random_tensor_bytes(type, kIn, kOut, rng, 0.05f);
  std::vector<float> x(static_cast<size_t>(kIn));
  for (float& v : x) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  const std::vector<float> xsums = eventkv::compute::block_sums32(x.data(), kIn);
  std::vector<float> out(static_cast<size_t>(kOut));
  for (auto _ : state) {
    eventkv::compute::dot_rows(type, weights.data(), weights.size() / kOut, kOut, x.data(),
                               xsums.data(), kIn, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(weights.size()));
  state.SetLabel(eventkv::compute::kernels().isa);
}

// One thread, as the panels of a 1024 x 256 matrix (256 KiB) fit in its L2.
void BM_Int8Gemm(benchmark::State& state, GgmlType type) {
  constexpr int64_t kGemmIn = 1024;
  constexpr int64_t kGemmOut = 256;
  const auto n_tokens = state.range(0);
  eventkv::Rng rng(1);
  const std::vector<uint8_t> bytes =
      eventkv::gguf::random_tensor_bytes(type, kGemmIn, kGemmOut, rng, 0.05f);
  eventkv::model::WeightView w;
  w.type = type;
  w.n_in = kGemmIn;
  w.n_out = kGemmOut;
  w.data = bytes.data();
  w.row_bytes = bytes.size() / kGemmOut;
  const eventkv::model::Int8Panels panels = eventkv::model::pack_int8_panels(w);
  w.int8 = &panels;
  std::vector<float> x(static_cast<size_t>(n_tokens * kGemmIn));
  for (float& v : x) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  std::vector<float> out(static_cast<size_t>(n_tokens * kGemmOut));
  eventkv::compute::ThreadPool pool(1);
  const auto& k = eventkv::compute::kernels();
  for (auto _ : state) {
    k.matmul(w, x.data(), n_tokens, out.data(), pool,
             eventkv::compute::ActivationPrecision::kInt8Panels);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n_tokens * kGemmIn * kGemmOut);
  state.SetLabel(k.isa);
}

void register_benchmarks() {
  for (const GgmlType type : eventkv::gguf::kDequantizableTypes) {
    benchmark::RegisterBenchmark(
        ("dot_rows_f32/" + std::string(eventkv::gguf::type_name(type))).c_str(), BM_DotRowsF32,
        type);
  }
  for (const GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                              GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K}) {
    benchmark::RegisterBenchmark(
        ("dot_rows_int8/" + std::string(eventkv::gguf::type_name(type))).c_str(), BM_DotRowsInt8,
        type)
        ->Arg(1)
        ->Arg(8);
  }
  for (const GgmlType type : {GgmlType::kQ4_1, GgmlType::kQ5_1, GgmlType::kQ4_K, GgmlType::kQ6_K}) {
    benchmark::RegisterBenchmark(
        ("int8_gemm/" + std::string(eventkv::gguf::type_name(type))).c_str(), BM_Int8Gemm, type)
        ->Arg(8)
        ->Arg(64);
  }
}

const bool kRegistered = (register_benchmarks(), true);

}  // namespace
