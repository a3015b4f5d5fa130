// The compute kernels are compiled once per instruction set (CMakeLists:
// eventkv_kernel_variant) and chosen at run time, so one binary runs on any
// x86-64 and uses AVX-512 where the CPU has it. Each variant is linked as one
// object whose symbols are all local but its entry point, so inline and
// template code compiled for AVX-512 can never be picked by code that runs
// elsewhere. The functions declared in compute/ headers that callers outside
// the kernels use (forward, attention, matmul, the quant dots) forward to the
// chosen variant's table.
#pragma once

#include <string>
#include <vector>

#include "compute/activation_q8.h"
#include "compute/attention.h"
#include "compute/forward.h"
#include "compute/matmul.h"
#include "compute/quant_dot.h"
#include "compute/quant_dot_q8.h"
#include "compute/quant_types.h"

namespace eventkv::compute {

struct Kernels {
  const char* isa;  // "avx512", "avx2_halves", "avx2", "x86_64", "generic" or "native"
  decltype(&compute::forward) forward;
  decltype(&compute::attention) attention;
  decltype(&compute::matmul) matmul;
  decltype(&compute::dequantize_weight_row) dequantize_weight_row;
  decltype(&compute::quantize_activations) quantize_activations;
  decltype(&compute::quantize_batch) quantize_batch;
  decltype(&compute::block_sums32) block_sums32;
  decltype(&compute::dot_rows) dot_rows;
  decltype(&compute::q8_block_elems) q8_block_elems;
  decltype(&compute::dot_rows_q8) dot_rows_q8;
  decltype(&compute::find_quant_type) find_quant_type;
  decltype(&compute::dequantize_row) dequantize_row;
};

// The variant every call uses: the environment's EVENTKV_ISA when set (an
// error names it when it is unknown or this CPU lacks it), else the widest
// the CPU supports (avx2_halves before avx2 on CPUs that split 256-bit
// operations). Chosen once.
const Kernels& kernels();

// The variants built into this binary that this CPU can run, widest first.
std::vector<const Kernels*> supported_kernels();

// Compiler, build type and flags of this binary, for run records.
std::string build_description();

}  // namespace eventkv::compute
