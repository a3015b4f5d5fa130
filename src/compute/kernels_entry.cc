// Compiled once per instruction set with EVENTKV_KERNELS_ENTRY naming the
// variant's entry point and EVENTKV_KERNELS_ISA its name (see kernels.h).
#include "compute/kernels.h"

namespace eventkv::compute {
namespace {

constexpr Kernels kTable{
    EVENTKV_KERNELS_ISA,   &forward,         &attention,     &matmul,   &dequantize_weight_row,
    &quantize_activations, &quantize_batch,  &block_sums32,  &dot_rows, &q8_block_elems,
    &dot_rows_q8,          &find_quant_type, &dequantize_row};

}  // namespace
}  // namespace eventkv::compute

extern "C" const eventkv::compute::Kernels* EVENTKV_KERNELS_ENTRY() {
  return &eventkv::compute::kTable;
}
