#include "cli/model_options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "probe/runner.h"
#include "util/error.h"
#include "util/machine.h"

namespace eventkv::cli {
namespace {

// Refuses `n` tokens of KV (from -c) beyond `limit` (`limit_text` says
// what it is), or whose f32 K and V rows could not fit in the machine's
// memory, before anything is allocated: a huge -c would otherwise allocate
// until the kernel kills the process.
void check_context(int64_t n, int64_t limit, const std::string& limit_text,
                   const model::ModelConfig& config) {
  if (n > limit) usage_error("--ctx", str_cat(n, " is more than ", limit_text));
  const double bytes =
      static_cast<double>(n) * static_cast<double>(config.kv_values_per_token()) * sizeof(float);
  const auto memory = static_cast<double>(physical_memory_bytes());
  if (bytes > memory) {
    usage_error("--ctx", str_cat(n, " tokens of KV cache would take ", bytes / (1 << 30),
                                 " GiB, more than this machine's ", memory / (1 << 30), " GiB"));
  }
}

std::string trained_context(const std::string& model, int64_t trained) {
  return str_cat(model, "'s trained context of ", trained, " tokens");
}

// -t: 0 (every core) up to the machine's hardware threads. More threads than
// that only slow every parallel loop down (each loop waits for its slowest
// thread, and idle workers spin), 30 to 80 times at -t 1000: refused.
void add_threads_option(CLI::App* cmd, ModelOptions& options) {
  const int cores = hardware_threads();
  cmd->add_option("-t,--threads", options.threads,
                  str_cat("threads, at most this machine's ", cores, " (default 0: every core)"))
      ->check(in_range(0, cores));
}

}  // namespace

void add_model_options(CLI::App* cmd, ModelOptions& options) {
  cmd->add_option("-m,--model", options.model, "GGUF model file")->required();
  add_threads_option(cmd, options);
  cmd->add_option("-c,--ctx", options.n_ctx,
                  "context size in tokens (default: 4096 or the trained context, whichever is "
                  "smaller; history: the trained context)")
      ->check(at_least(1));
}

void add_experiment_model_options(CLI::App* cmd, ModelOptions& options) {
  add_threads_option(cmd, options);
  cmd->add_option(
         "-c,--ctx", options.n_ctx,
         str_cat("KV cells for one pair's histories (default ", probe::kDefaultKvCells, ")"))
      ->check(at_least(1));
}

int64_t kv_cells(const ModelOptions& options, const model::Model& model) {
  const int64_t cells = options.n_ctx > 0 ? options.n_ctx : probe::kDefaultKvCells;
  // One pair's histories share the cells (both sides and the landing's forks),
  // so a model trained on less than the default still gets the default.
  const int64_t trained = model.config().n_ctx_train;
  check_context(cells, std::max(trained, probe::kDefaultKvCells),
                trained >= probe::kDefaultKvCells
                    ? trained_context(options.model, trained)
                    : str_cat("the default of ", probe::kDefaultKvCells, " KV cells (",
                              trained_context(options.model, trained), ")"),
                model.config());
  return cells;
}

void add_sampling_options(CLI::App* cmd, sampling::SamplingParams& params) {
  cmd->add_option("--temp", params.temperature, "temperature; 0 is greedy (default)")
      ->check(CLI::Validator(
          [](const std::string& text) {
            float value = 0.0f;
            if (CLI::detail::lexical_cast(text, value) && std::isfinite(value) && value >= 0.0f)
              return std::string();
            return str_cat("must be a finite number >= 0, not '", text, "'");
          },
          "finite >= 0"));
  cmd->add_option("--top-k", params.top_k, "keep the k most likely tokens (0: off)");
  cmd->add_option("--top-p", params.top_p, "keep the smallest set of probability mass p (1: off)");
  cmd->add_option("--min-p", params.min_p,
                  "drop tokens below min-p times the top probability (0: off)");
  cmd->add_option("--seed", params.seed, "sampling seed");
}

void add_precision_option(CLI::App* cmd, compute::ActivationPrecision& precision) {
  cmd->add_flag_callback(
      "--exact", [&precision] { precision = compute::ActivationPrecision::kF32; },
      "f32 activations in the weight products (slower; default: rounded to int8, as llama.cpp "
      "does)");
}

ModelOptions with_precision_panels(ModelOptions options, compute::ActivationPrecision precision) {
  if (precision == compute::ActivationPrecision::kInt8) {
    options.panels = true;
    options.panel_type = model::Panels::kInt8;
  }
  return options;
}

void add_panel_option(CLI::App* cmd, ModelOptions& options) {
  options.panels = true;
  cmd->add_flag_callback(
      "--low-memory", [&options] { options.panels = false; },
      "keep the weights in their GGUF types (default: dequantized once to f32 at load when that "
      "fits in half the memory; same results, faster prefill)");
  cmd->add_option_function<std::string>(
         "--precision",
         [&options](const std::string& name) {
           options.products = kv::precision_by_name(name);
           options.panel_type = kv::panels_for(options.products);
         },
         "exact (default: f32, as the reference tests check) or fast (int8 weights and "
         "activations; faster, scores move by rounding; recorded with each run)")
      ->check(CLI::IsMember({"exact", "fast"}));
}

int64_t context_size(const ModelOptions& options, const model::Model& model, int64_t fallback) {
  const int64_t trained = model.config().n_ctx_train;
  const int64_t n_ctx = options.n_ctx > 0 ? options.n_ctx : std::min(fallback, trained);
  check_context(n_ctx, trained, trained_context(options.model, trained), model.config());
  return n_ctx;
}

std::shared_ptr<kv::Engine> load_engine(const ModelOptions& options) {
  const int threads = options.threads == 0 ? hardware_threads() : options.threads;
  if (!options.panels) {
    return std::make_shared<kv::Engine>(model::Model::load(options.model), threads,
                                        options.products);
  }
  const int64_t budget = physical_memory_bytes() / 2;
  auto model = model::Model::load(options.model, budget, options.panel_type);
  if (model->panel_bytes() == 0) {
    // Without int8 panels, fast's many-token products fall back to f32 (compute/matmul.h).
    std::fprintf(stderr,
                 "eventkv: note: %s: weights kept in their GGUF types (%s panels would take over "
                 "half the memory)%s\n",
                 options.model.c_str(), options.panel_type == model::Panels::kInt8 ? "int8" : "f32",
                 options.panel_type == model::Panels::kInt8
                     ? "; --precision fast then prefills in f32 and is no faster than exact"
                     : "");
  }
  return std::make_shared<kv::Engine>(std::move(model), threads, options.products);
}

void check_models(const std::vector<std::string>& paths, const ModelOptions& options) {
  for (const std::string& path : paths) {
    ModelOptions model_options = options;
    model_options.model = path;
    kv_cells(model_options, *model::Model::load(path));
  }
}

CLI::Validator at_least(int64_t minimum) {
  return in_range(minimum, std::numeric_limits<int64_t>::max());
}

CLI::Validator in_range(int64_t minimum, int64_t maximum) {
  const std::string range = maximum == std::numeric_limits<int64_t>::max()
                                ? str_cat(">= ", minimum)
                                : str_cat("from ", minimum, " to ", maximum);
  return {[minimum, maximum, range](const std::string& text) {
            int64_t value = 0;
            if (CLI::detail::lexical_cast(text, value) && value >= minimum && value <= maximum)
              return std::string();
            return str_cat("must be an integer ", range, ", not '", text, "'");
          },
          range};
}

void usage_error(const std::string& option, const std::string& problem) {
  throw CLI::ValidationError(option, problem);
}

}  // namespace eventkv::cli
