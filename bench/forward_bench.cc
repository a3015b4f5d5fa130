// Prefill (512 tokens) and decode (128 tokens) throughput on the real models
// with 1 and 2 threads: the same measurements as llama-bench's pp512/tg128.
// Prefill runs three ways: weights in their GGUF types, dequantized once into
// f32 panels (the experiment commands' default), and int8 activations times
// int8 panels (compute/int8_gemm.h).
// Decode runs twice: exact f32 activations and int8 ones (llama.cpp's way).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kv/context.h"
#include "model/model.h"

namespace {

constexpr int64_t kPrefillTokens = 512;
constexpr int64_t kDecodeTokens = 128;

constexpr int64_t kPanelBudget = int64_t{16} << 30;

// The weights in their GGUF types (no panels), or packed into f32 or int8
// panels.
enum class Weights { kGguf, kF32Panels, kInt8Panels };

std::shared_ptr<const eventkv::model::Model> load_model(const std::string& file_name,
                                                        Weights weights = Weights::kGguf) {
  const auto path = std::filesystem::path(EVENTKV_SOURCE_DIR) / "models" / file_name;
  if (!std::filesystem::exists(path)) return nullptr;
  static std::string loaded_name;
  static Weights loaded_weights = Weights::kGguf;
  static std::shared_ptr<const eventkv::model::Model> loaded;
  if (loaded_name != file_name || loaded_weights != weights) {
    loaded = nullptr;
    const auto panels = weights == Weights::kInt8Panels ? eventkv::model::Panels::kInt8
                                                        : eventkv::model::Panels::kF32;
    loaded = eventkv::model::Model::load(path.string(),
                                         weights == Weights::kGguf ? 0 : kPanelBudget, panels);
    loaded_name = file_name;
    loaded_weights = weights;
  }
  return loaded;
}

std::vector<int32_t> some_tokens(int64_t n, int64_t n_vocab) {
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((i * 7919 + 13) % n_vocab);
  return tokens;
}

// Bytes of weight matrices one decoded token reads: every layer matrix and
// the output head (the embedding lookup reads one row). With the measured
// memory bandwidth (memory_bandwidth_bench.cc) it bounds decode tokens/s.
double weight_bytes_per_token(const eventkv::model::ModelWeights& weights) {
  const auto bytes = [](const eventkv::model::WeightView& w) {
    return static_cast<double>(w.n_out) * static_cast<double>(w.row_bytes);
  };
  double total = bytes(weights.output);
  for (const eventkv::model::LayerWeights& l : weights.layers) {
    for (const auto* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
      total += bytes(*w);
    }
  }
  return total;
}

void prefill(benchmark::State& state, const std::string& file_name, Weights weights,
             eventkv::compute::ActivationPrecision precision) {
  const auto model = load_model(file_name, weights);
  if (!model) return state.SkipWithError("model not downloaded");
  const auto tokens = some_tokens(kPrefillTokens, model->config().n_vocab);
  auto engine = std::make_shared<eventkv::kv::Engine>(model, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    eventkv::kv::Context context(engine, {.n_ctx = kPrefillTokens, .decode_precision = precision});
    benchmark::DoNotOptimize(context.eval(tokens));
  }
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(kPrefillTokens), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Prefill(benchmark::State& state, const std::string& file_name) {
  prefill(state, file_name, Weights::kGguf, eventkv::compute::ActivationPrecision::kF32);
}

void BM_PrefillPanels(benchmark::State& state, const std::string& file_name) {
  prefill(state, file_name, Weights::kF32Panels, eventkv::compute::ActivationPrecision::kF32);
}

void BM_PrefillInt8(benchmark::State& state, const std::string& file_name) {
  prefill(state, file_name, Weights::kInt8Panels, eventkv::compute::ActivationPrecision::kInt8);
}

void decode(benchmark::State& state, const std::string& file_name,
            eventkv::compute::ActivationPrecision precision) {
  const auto model = load_model(file_name);
  if (!model) return state.SkipWithError("model not downloaded");
  const auto tokens = some_tokens(kDecodeTokens, model->config().n_vocab);
  auto engine = std::make_shared<eventkv::kv::Engine>(model, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    eventkv::kv::Context context(engine, {.n_ctx = kDecodeTokens, .decode_precision = precision});
    for (const int32_t token : tokens) benchmark::DoNotOptimize(context.eval({&token, 1}));
  }
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(kDecodeTokens), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["weight_bytes_per_token"] = weight_bytes_per_token(model->weights());
}

void BM_Decode(benchmark::State& state, const std::string& file_name) {
  decode(state, file_name, eventkv::compute::ActivationPrecision::kF32);
}

// Decode with int8 activations in the weight products, as llama.cpp computes.
void BM_DecodeInt8(benchmark::State& state, const std::string& file_name) {
  decode(state, file_name, eventkv::compute::ActivationPrecision::kInt8);
}

void register_benchmarks() {
  for (const char* file :
       {"smollm2-135m-instruct-q4_1.gguf", "gemma-3-270m-q4_k_m.gguf",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"}) {
    using Bench = void (*)(benchmark::State&, const std::string&);
    for (const auto& [name, fn] :
         {std::pair<const char*, Bench>{"prefill512/", BM_Prefill},
          std::pair<const char*, Bench>{"prefill512_panels/", BM_PrefillPanels},
          std::pair<const char*, Bench>{"prefill512_int8/", BM_PrefillInt8},
          std::pair<const char*, Bench>{"decode128/", BM_Decode},
          std::pair<const char*, Bench>{"decode128_int8/", BM_DecodeInt8}}) {
      benchmark::RegisterBenchmark((std::string(name) + file).c_str(), fn, std::string(file))
          ->Arg(1)
          ->Arg(2)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(2.0);
    }
  }
}

const bool kRegistered = (register_benchmarks(), true);

}  // namespace
