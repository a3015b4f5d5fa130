#!/usr/bin/env bash
# The kernels of every instruction set this CPU runs pass the kernel and
# logit reference tests (EVENTKV_ISA picks one), and a CPU without AVX-512,
# emulated by qemu-user (Haswell: AVX2; EPYC, the first Zen generation:
# AVX2 in 128-bit halves; qemu64: the x86-64 baseline), runs the binary on
# the kernels it should choose and matches transformers' logits.
#   isa.sh EVENTKV_TESTS EVENTKV
set -u
tests=$1
eventkv=$2
generated='gemma3_q5_0:llama_q8_0:mistral_q4_k:qwen2_f16:qwen3_q6_k'
logits="Fixtures/ForwardReference.*/${generated//:/:Fixtures/ForwardReference.*/}"
kernels="Attention.*:Matmul.*:ActivationQ8.*:Types/Int8Kernel.*:Types/Int8Gemm.*:$logits"
failures=0

for isa in avx2 avx2_halves x86_64; do
  if ! EVENTKV_ISA=$isa "$eventkv" --version >/dev/null 2>&1; then
    echo "skip: $isa (not built, or this CPU lacks it)"
    continue
  fi
  if EVENTKV_ISA=$isa "$tests" --gtest_brief=1 --gtest_filter="$kernels" >/tmp/isa-$$.log 2>&1; then
    echo "ok: $isa kernels pass the reference tests"
  else
    grep -E "Failure|FAILED" /tmp/isa-$$.log | head -20
    echo "FAIL: $isa kernels"
    failures=$((failures + 1))
  fi
done
rm -f /tmp/isa-$$.log

if command -v qemu-x86_64 >/dev/null; then
  for cpu in Haswell:avx2 EPYC:avx2_halves qemu64:x86_64; do
    chosen=$(qemu-x86_64 -cpu "${cpu%%:*}" "$eventkv" --version 2>/dev/null | sed -n 's/^kernels: //p')
    if [ "$chosen" != "${cpu##*:}" ]; then
      echo "FAIL: under qemu -cpu ${cpu%%:*} eventkv chose '$chosen', not ${cpu##*:}"
      failures=$((failures + 1))
    elif qemu-x86_64 -cpu "${cpu%%:*}" "$tests" --gtest_brief=1 --gtest_filter="$logits" >/dev/null 2>&1; then
      echo "ok: under qemu -cpu ${cpu%%:*}: $chosen kernels, logits match transformers"
    else
      echo "FAIL: under qemu -cpu ${cpu%%:*}: the logit reference tests fail"
      failures=$((failures + 1))
    fi
  done
else
  echo "skip: qemu-user is not installed (scripts/install-deps installs it)"
fi
exit $((failures > 0))
