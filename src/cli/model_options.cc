#include "cli/model_options.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include "probe/runner.h"
#include "util/error.h"

namespace eventkv::cli {

void add_model_options(CLI::App* cmd, ModelOptions& options) {
  cmd->add_option("-m,--model", options.model, "GGUF model file")->required();
  cmd->add_option("-t,--threads", options.threads, "threads (default: every core)");
  cmd->add_option("-c,--ctx", options.n_ctx,
                  "context size in tokens (default: 4096 or the trained context)")
      ->check(at_least(1));
}

void add_experiment_model_options(CLI::App* cmd, ModelOptions& options) {
  cmd->add_option("-t,--threads", options.threads, "threads (default: every core)");
  cmd->add_option(
         "-c,--ctx", options.n_ctx,
         str_cat("KV cells for one pair's histories (default ", probe::kDefaultKvCells, ")"))
      ->check(at_least(1));
}

int64_t kv_cells(const ModelOptions& options) {
  return options.n_ctx > 0 ? options.n_ctx : probe::kDefaultKvCells;
}

void add_sampling_options(CLI::App* cmd, sampling::SamplingParams& params) {
  cmd->add_option("--temp", params.temperature, "temperature; 0 is greedy (default)");
  cmd->add_option("--top-k", params.top_k, "keep the k most likely tokens (0: off)");
  cmd->add_option("--top-p", params.top_p, "keep the smallest set of probability mass p (1: off)");
  cmd->add_option("--min-p", params.min_p,
                  "drop tokens below min-p times the top probability (0: off)");
  cmd->add_option("--seed", params.seed, "sampling seed");
}

void add_precision_option(CLI::App* cmd, compute::ActivationPrecision& precision) {
  cmd->add_flag_callback(
      "--exact", [&precision] { precision = compute::ActivationPrecision::kF32; },
      "decode with f32 activations (slower; default: rounded to int8 in the weight products, "
      "as llama.cpp does)");
}

void add_panel_option(CLI::App* cmd, ModelOptions& options) {
  options.panels = true;
  cmd->add_flag_callback(
      "--low-memory", [&options] { options.panels = false; },
      "keep the weights in their GGUF types (default: dequantized once to f32 at load when that "
      "fits in half the memory; same results, faster prefill)");
}

int64_t context_size(const ModelOptions& options, const model::Model& model) {
  return options.n_ctx > 0 ? options.n_ctx : std::min<int64_t>(4096, model.config().n_ctx_train);
}

std::shared_ptr<kv::Engine> load_engine(const ModelOptions& options) {
  if (options.threads < 0)
    fail("--threads must be >= 1 (or 0 for every core), got ", options.threads);
  const int threads = options.threads == 0
                          ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                          : options.threads;
  if (!options.panels)
    return std::make_shared<kv::Engine>(model::Model::load(options.model), threads);
  const int64_t budget = sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGE_SIZE) / 2;
  auto model = model::Model::load(options.model, budget);
  if (model->panel_bytes() == 0) {
    std::fprintf(stderr,
                 "eventkv: note: %s: weights kept in their GGUF types (f32 copies would take over "
                 "half the memory)\n",
                 options.model.c_str());
  }
  return std::make_shared<kv::Engine>(std::move(model), threads);
}

void check_models(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) model::Model::load(path);
}

CLI::Validator at_least(int64_t minimum) {
  return {[minimum](const std::string& text) {
            int64_t value = 0;
            if (CLI::detail::lexical_cast(text, value) && value >= minimum) return std::string();
            return str_cat("must be an integer >= ", minimum, ", not '", text, "'");
          },
          str_cat(">=", minimum)};
}

}  // namespace eventkv::cli
