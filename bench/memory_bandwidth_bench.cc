// Memory read bandwidth with 1 and 2 threads: each thread sums its half of a
// buffer far larger than the caches. Decode reads every weight once per
// token, so bandwidth / weight_bytes_per_token (forward_bench.cc) is the
// decode speed no kernel can beat; bench/peer/run reports decode as a share
// of it.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

namespace {

constexpr size_t kBufferBytes = size_t{1} << 30;

uint64_t sum_range(const uint64_t* begin, const uint64_t* end) {
  return std::accumulate(begin, end, uint64_t{0});
}

void BM_MemoryRead(benchmark::State& state) {
  const auto n_threads = static_cast<size_t>(state.range(0));
  std::vector<uint64_t> buffer(kBufferBytes / sizeof(uint64_t));
  std::iota(buffer.begin(), buffer.end(), uint64_t{1});
  const size_t chunk = buffer.size() / n_threads;
  std::vector<uint64_t> sums(n_threads);
  for (auto _ : state) {
    std::vector<std::thread> threads;
    threads.reserve(n_threads);
    for (size_t t = 0; t < n_threads; ++t) {
      threads.emplace_back([&, t] {
        sums[t] = sum_range(buffer.data() + t * chunk, buffer.data() + (t + 1) * chunk);
      });
    }
    for (std::thread& thread : threads) thread.join();
    benchmark::DoNotOptimize(sums.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(chunk * n_threads * sizeof(uint64_t)));
}

BENCHMARK(BM_MemoryRead)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
