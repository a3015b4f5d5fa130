// The Python extension module eventkv._eventkv: the engine, event histories
// and experiments of the C++ library, bound with nanobind. One file per part;
// module.cc defines the module and calls each part's bind function.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <mutex>
#include <string>

#include "kv/arena.h"
#include "kv/engine.h"
#include "tokenizer/chat_format.h"

namespace eventkv::python {

namespace nb = nanobind;

// A loaded model: its engine (weights and threads), its chat format, and the
// lock that lets one forward pass run at a time when Python threads share it
// (the GIL is released while the engine computes).
struct LoadedModel {
  LoadedModel(std::string path, std::shared_ptr<kv::Engine> engine, tokenizer::ChatFormat format)
      : path(std::move(path)), engine(std::move(engine)), format(std::move(format)) {}

  std::string path;
  std::shared_ptr<kv::Engine> engine;
  tokenizer::ChatFormat format;
  std::mutex computing;
};

// Loads a model: threads 0 means every core; panels packs the layer weights
// at load when they fit in half the memory (the experiment commands'
// default): f32 panels for precision "exact" (faster, the same results), int8
// panels for "fast" (int8 products, as --precision fast). Throws Error.
std::shared_ptr<LoadedModel> load_model(const std::string& path, int threads, bool panels,
                                        const std::string& chat_format,
                                        const std::string& precision);

// KV cells a history or an experiment may take: `cells`, or the default of
// the experiment commands; refused beyond the model's trained context (or
// that default, when larger) or the machine's memory. Throws Error.
int64_t checked_kv_cells(const LoadedModel& model, int64_t cells);

// An f32 KV arena of checked_kv_cells(model, cells) cells.
std::shared_ptr<kv::KvArena> new_arena(const LoadedModel& model, int64_t cells);

// Runs `work` with the GIL released and the model's engine to itself.
template <typename Work>
auto computing(LoadedModel& model, Work&& work) {
  const nb::gil_scoped_release release;
  const std::lock_guard lock(model.computing);
  return work();
}

void bind_model(nb::module_& m);
void bind_history(nb::module_& m);
void bind_experiments(nb::module_& m);

}  // namespace eventkv::python
