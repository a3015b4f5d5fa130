// Options every model-running subcommand shares (-m, -t, -c) and the
// sampling and precision options of the generating ones.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compute/matmul.h"
#include "kv/engine.h"
#include "model/model.h"
#include "sampling/sampler.h"

namespace eventkv::cli {

struct ModelOptions {
  std::string model;
  int threads = 0;      // 0: every core
  int64_t n_ctx = 0;    // 0: the default, context_size or kv_cells
  bool panels = false;  // pack the layer weights once at load (model/weights.h)
  model::Panels panel_type = model::Panels::kF32;
  // The products of the experiments' event-KV passes (kv::Engine::products).
  compute::ActivationPrecision products = compute::ActivationPrecision::kF32;
};

void add_model_options(CLI::App* cmd, ModelOptions& options);
void add_sampling_options(CLI::App* cmd, sampling::SamplingParams& params);
// Adds --exact, which sets `precision` (int8 activations by default in
// generate and chat) to f32: slower, logits as the reference tests check them.
void add_precision_option(CLI::App* cmd, compute::ActivationPrecision& precision);

// For generate and chat: with int8 activations (the default) the layer
// weights are packed into int8 panels at load, when those fit in half the
// memory (1.5 bytes per weight), and prompts are multiplied in integers
// (compute/int8_gemm.h); --exact keeps today's f32 path.
ModelOptions with_precision_panels(ModelOptions options, compute::ActivationPrecision precision);

// For the experiment commands (probe, landing, suite): -t, and -c as the KV
// cells one pair's histories share (default probe::kDefaultKvCells).
void add_experiment_model_options(CLI::App* cmd, ModelOptions& options);

// -c of an experiment command, or probe::kDefaultKvCells. Refused (a usage
// error) beyond the model's trained context (or the default, when that is
// larger) or when the KV rows would not fit in memory.
int64_t kv_cells(const ModelOptions& options, const model::Model& model);

// For the experiment commands: weights dequantized once at load (faster
// prefill, ~4 bytes per weight) unless --low-memory; and --precision exact
// (f32, the default: the results the reference tests check) or fast (int8
// panels at load, int8 activations: several times faster, scores move by
// rounding; runs record it).
void add_panel_option(CLI::App* cmd, ModelOptions& options);

// Loads the model and starts its threads; throws Error.
std::shared_ptr<kv::Engine> load_engine(const ModelOptions& options);

// Loads each model once (weights mapped, not copied) and lets it go, so a
// bad path, an unsupported file or a -c it cannot take fails before a
// results database is made or an hour of another model's pairs is computed.
void check_models(const std::vector<std::string>& paths, const ModelOptions& options);

// An integer option's check that says what it wants ("must be an integer >=
// 1, not '0'"): CLI11's PositiveNumber names its range as 0 to 1.8e308.
CLI::Validator at_least(int64_t minimum);
// The same for a bounded option ("must be an integer from 1 to 1000000").
CLI::Validator in_range(int64_t minimum, int64_t maximum);

// A bad command line found after parsing (it needs the model, say): one line
// naming the option, exit code 2 like a parse error.
[[noreturn]] void usage_error(const std::string& option, const std::string& problem);

// The context size of generate, chat and history: -c, or `fallback` tokens
// (at most the trained context). Refused (a usage error) beyond the model's
// trained context or when its KV rows would not fit in memory.
inline constexpr int64_t kDefaultContext = 4096;
int64_t context_size(const ModelOptions& options, const model::Model& model,
                     int64_t fallback = kDefaultContext);

}  // namespace eventkv::cli
