// Chooses the kernel variant at run time (see kernels.h) and forwards the
// public kernel functions to it.
#include <cstdlib>
#include <string_view>

#include "build_description.h"
#include "compute/kernels.h"
#include "util/error.h"

// Entry points of the variants CMakeLists builds.
extern "C" {
#if defined(EVENTKV_KERNELS_NATIVE)
const eventkv::compute::Kernels* eventkv_kernels_native();
#elif defined(__x86_64__)
const eventkv::compute::Kernels* eventkv_kernels_avx512();
const eventkv::compute::Kernels* eventkv_kernels_avx2();
const eventkv::compute::Kernels* eventkv_kernels_avx2_halves();
const eventkv::compute::Kernels* eventkv_kernels_x86_64();
#else
const eventkv::compute::Kernels* eventkv_kernels_generic();
#endif
}

namespace eventkv::compute {
namespace {

bool always() {
  return true;
}

struct Variant {
  const Kernels* (*entry)();
  bool (*cpu_runs)();
  const char* needs;               // what the CPU must have, for the error message
  bool (*cpu_prefers)() = always;  // chosen by default only where this holds
};

#if !defined(EVENTKV_KERNELS_NATIVE) && defined(__x86_64__)
// -march=x86-64-v3. Its F16C, MOVBE and LZCNT, which clang 14 cannot test
// for, come with every CPU that has AVX2 and BMI2 (Haswell, Excavator and
// later).
bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("popcnt");
}

bool has_avx512_vnni() {
  return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vnni");
}

// First-generation Zen runs each 256-bit operation as two 128-bit ones; the
// int8 dots were faster there in 128-bit halves, and slower in them on Zen 3.
bool splits_256_bit_operations() {
  return __builtin_cpu_is("znver1");
}
#endif

// Widest first: by default the first that the CPU runs and prefers.
constexpr Variant kVariants[] = {
#if defined(EVENTKV_KERNELS_NATIVE)
    {eventkv_kernels_native, always, "the building machine's instruction set"},
#elif defined(__x86_64__)
    {eventkv_kernels_avx512, has_avx512_vnni, "AVX-512 F/BW/VL/DQ/CD and VNNI"},
    {eventkv_kernels_avx2_halves, has_avx2, "AVX2, FMA and BMI2", splits_256_bit_operations},
    {eventkv_kernels_avx2, has_avx2, "AVX2, FMA and BMI2"},
    {eventkv_kernels_x86_64, always, "x86-64"},
#else
    {eventkv_kernels_generic, always, "nothing"},
#endif
};

std::string built_names() {
  std::string names;
  for (const Variant& v : kVariants)
    names += std::string(names.empty() ? "" : ", ") + v.entry()->isa;
  return names;
}

const Kernels& preferred() {
  for (const Variant& v : kVariants) {
    if (v.cpu_runs() && v.cpu_prefers()) return *v.entry();
  }
  fail("no kernel variant of this build (", built_names(), ") runs on this CPU");
}

const Kernels& choose() {
  const char* wanted = std::getenv("EVENTKV_ISA");
  if (wanted == nullptr || *wanted == '\0') return preferred();
  for (const Variant& v : kVariants) {
    if (std::string_view(v.entry()->isa) != wanted) continue;
    if (!v.cpu_runs()) fail("EVENTKV_ISA=", wanted, ": this CPU lacks ", v.needs);
    return *v.entry();
  }
  fail("EVENTKV_ISA=", wanted, ": not an instruction set of this build (", built_names(), ")");
}

}  // namespace

const Kernels& kernels() {
  static const Kernels& chosen = choose();
  return chosen;
}

std::vector<const Kernels*> supported_kernels() {
  std::vector<const Kernels*> found;
  for (const Variant& v : kVariants) {
    if (v.cpu_runs()) found.push_back(v.entry());
  }
  return found;
}

std::string build_description() {
  return EVENTKV_BUILD_DESCRIPTION;
}

std::vector<float> forward(const model::Model& model, KvStorage& kv, const ForwardBatch& batch,
                           ThreadPool& pool, ActivationPrecision precision,
                           ResidualCapture* capture) {
  return kernels().forward(model, kv, batch, pool, precision, capture);
}

void attention(const AttentionShape& shape, const AttentionPlan& plan,
               std::span<const QueryBlock> blocks, const AttentionIo& io, ThreadPool& pool) {
  kernels().attention(shape, plan, blocks, io, pool);
}

void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            ActivationPrecision precision) {
  kernels().matmul(w, x, n_tokens, y, pool, precision);
}

void dequantize_weight_row(const WeightView& w, int64_t row, float* out) {
  kernels().dequantize_weight_row(w, row, out);
}

Q8Activations quantize_activations(const float* x, int64_t n, int64_t block) {
  return kernels().quantize_activations(x, n, block);
}

Q8Batch quantize_batch(const float* x, int64_t n_tokens, int64_t n, int64_t block) {
  return kernels().quantize_batch(x, n_tokens, n, block);
}

std::vector<float> block_sums32(const float* x, int64_t n) {
  return kernels().block_sums32(x, n);
}

void dot_rows(gguf::GgmlType type, const uint8_t* row, size_t row_bytes, int64_t n_rows,
              const float* x, const float* xsum32, int64_t n, float* out) {
  kernels().dot_rows(type, row, row_bytes, n_rows, x, xsum32, n, out);
}

int64_t q8_block_elems(gguf::GgmlType type) {
  return kernels().q8_block_elems(type);
}

void dot_rows_q8(gguf::GgmlType type, const uint8_t* row, size_t row_bytes, int64_t n_rows,
                 const Q8Batch& x, float* out, int64_t out_stride) {
  kernels().dot_rows_q8(type, row, row_bytes, n_rows, x, out, out_stride);
}

const QuantType* find_quant_type(gguf::GgmlType type) {
  return kernels().find_quant_type(type);
}

void dequantize_row(gguf::GgmlType type, const uint8_t* src, float* dst, int64_t n) {
  kernels().dequantize_row(type, src, dst, n);
}

}  // namespace eventkv::compute
