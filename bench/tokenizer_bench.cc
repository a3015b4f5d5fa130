// Tokenizer speed on the real models: encode throughput (MB/s, one thread) on
// a 10 MB mixed corpus, and construction time from an opened GGUF file.
//
// The corpus is drawn deterministically from the reference corpus
// (tests/fixtures/tokenizer/corpus.json: prose, code, numbers, white space,
// emoji, CJK, Korean, RTL, ...) and written to
// $TMPDIR/eventkv-tokenizer-bench-corpus.txt, so that
// tools/reference/hf_tokenizer_bench.py measures Hugging Face tokenizers on
// the same bytes in the same session.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "tokenizer/tokenizer.h"
#include "util/rng.h"

namespace {

using eventkv::tokenizer::Tokenizer;

constexpr size_t kCorpusBytes = 10 * 1000 * 1000;

// Lines of one to four random reference strings until 10 MB.
std::string build_corpus() {
  std::ifstream in(std::filesystem::path(EVENTKV_SOURCE_DIR) /
                   "tests/fixtures/tokenizer/corpus.json");
  const auto strings = nlohmann::json::parse(in).get<std::vector<std::string>>();
  eventkv::Rng rng(2026);
  std::string corpus;
  while (corpus.size() < kCorpusBytes) {
    const uint64_t n = 1 + rng.below(4);
    for (uint64_t i = 0; i < n; ++i) {
      corpus += strings[rng.below(strings.size())];
      corpus += i + 1 < n ? " " : "\n";
    }
  }
  std::ofstream(std::filesystem::temp_directory_path() / "eventkv-tokenizer-bench-corpus.txt",
                std::ios::binary)
      << corpus;
  return corpus;
}

const std::string& corpus() {
  static const std::string kCorpus = build_corpus();
  return kCorpus;
}

std::optional<eventkv::gguf::GgufFile> open_model(benchmark::State& state,
                                                  const std::string& file_name) {
  const auto path = std::filesystem::path(EVENTKV_SOURCE_DIR) / "models" / file_name;
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("model not downloaded (scripts/get-models --all)");
    return std::nullopt;
  }
  return eventkv::gguf::GgufFile::open(path.string());
}

void BM_Encode(benchmark::State& state, const std::string& file_name) {
  const auto file = open_model(state, file_name);
  if (!file) return;
  const Tokenizer tok = Tokenizer::from_gguf(*file);
  const std::string& text = corpus();
  size_t n_tokens = 0;
  for (auto _ : state) {
    const auto ids = tok.encode(text);
    n_tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["tokens"] = static_cast<double>(n_tokens);
}

void BM_Construct(benchmark::State& state, const std::string& file_name) {
  const auto file = open_model(state, file_name);
  if (!file) return;
  for (auto _ : state) benchmark::DoNotOptimize(Tokenizer::from_gguf(*file));
}

void register_benchmarks() {
  for (const char* file : {"smollm2-135m-instruct-q4_1.gguf", "gemma-3-270m-q4_k_m.gguf",
                           "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"}) {
    benchmark::RegisterBenchmark((std::string("tokenizer_encode_10MB/") + file).c_str(), BM_Encode,
                                 std::string(file))
        ->Unit(benchmark::kMillisecond)
        ->MinTime(2.0);
    benchmark::RegisterBenchmark((std::string("tokenizer_construct/") + file).c_str(), BM_Construct,
                                 std::string(file))
        ->Unit(benchmark::kMillisecond);
  }
}

const bool kRegistered = (register_benchmarks(), true);

}  // namespace
