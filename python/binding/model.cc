// eventkv.Model: a GGUF model loaded once, its tokenizer and chat format.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "events/render.h"
#include "probe/runner.h"
#include "util/error.h"
#include "util/machine.h"

namespace eventkv::python {

std::shared_ptr<LoadedModel> load_model(const std::string& path, int threads, bool panels,
                                        const std::string& chat_format,
                                        const std::string& precision) {
  const int cores = hardware_threads();
  if (threads < 0 || threads > cores) {
    fail("threads must be from 0 (every core) to this machine's ", cores, ", not ", threads);
  }
  const compute::ActivationPrecision products = kv::precision_by_name(precision);
  std::shared_ptr<const model::Model> model =
      panels ? model::Model::load(path, physical_memory_bytes() / 2, kv::panels_for(products))
             : model::Model::load(path);
  tokenizer::ChatFormat format = chat_format.empty() ? tokenizer::ChatFormat::detect(model->file())
                                                     : tokenizer::ChatFormat::by_name(chat_format);
  auto engine =
      std::make_shared<kv::Engine>(std::move(model), threads == 0 ? cores : threads, products);
  return std::make_shared<LoadedModel>(path, std::move(engine), std::move(format));
}

int64_t checked_kv_cells(const LoadedModel& model, int64_t cells) {
  const model::ModelConfig& c = model.engine->model().config();
  if (cells == 0) cells = probe::kDefaultKvCells;
  const int64_t limit = std::max(c.n_ctx_train, probe::kDefaultKvCells);
  if (cells < 1 || cells > limit) {
    fail("kv_cells must be from 1 to ", limit, " (", model.path, "'s trained context of ",
         c.n_ctx_train, " tokens, or the default of ", probe::kDefaultKvCells, "), not ", cells);
  }
  const int64_t bytes = cells * c.kv_values_per_token() * 4;
  if (bytes > physical_memory_bytes()) {
    fail("kv_cells ", cells, ": its KV rows would take ", bytes >> 20, " MiB, more than this ",
         "machine's memory");
  }
  return cells;
}

std::shared_ptr<kv::KvArena> new_arena(const LoadedModel& model, int64_t cells) {
  return std::make_shared<kv::KvArena>(model.engine->model().config(),
                                       checked_kv_cells(model, cells), compute::KvType::kF32);
}

namespace {

// An event list from Python: dicts with "id", "role" and "content".
std::vector<events::Event> plain_events(const nb::list& items) {
  std::vector<events::Event> out;
  for (nb::handle item : items) {
    const auto event = nb::cast<nb::dict>(item);
    for (const char* key : {"id", "role", "content"}) {
      if (!event.contains(key)) fail("event ", out.size(), ": no \"", key, "\"");
    }
    out.push_back({nb::cast<std::string>(event["id"]), nb::cast<std::string>(event["role"]),
                   nb::cast<std::string>(event["content"])});
  }
  return out;
}

nb::list rendered_events(const LoadedModel& model, const nb::list& items) {
  const std::vector<kv::EventTokens> rendered =
      events::render_events(model.format, model.engine->model().tokenizer(), plain_events(items));
  nb::list out;
  int32_t start = 0;
  for (const kv::EventTokens& e : rendered) {
    const auto end = start + static_cast<int32_t>(e.tokens.size());
    nb::dict event;
    event["id"] = e.id;
    event["role"] = e.role;
    event["tokens"] = e.tokens;
    event["start"] = start;
    event["end"] = end;
    out.append(event);
    start = end;
  }
  return out;
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<LoadedModel>(m, "Model",
                          "A GGUF model loaded once (weights mapped), with its tokenizer, chat "
                          "format and compute threads.")
      .def(
          "__init__",
          [](LoadedModel* self, const std::string& path, int threads, bool panels,
             const std::string& chat_format, const std::string& precision) {
            std::shared_ptr<LoadedModel> loaded;
            {
              const nb::gil_scoped_release release;
              loaded = load_model(path, threads, panels, chat_format, precision);
            }
            new (self) LoadedModel(loaded->path, loaded->engine, loaded->format);
          },
          nb::arg("path"), nb::arg("threads") = 0, nb::arg("panels") = true,
          nb::arg("chat_format") = "", nb::arg("precision") = "exact",
          "Loads `path`. threads=0 uses every core; panels=True unpacks the layer weights once "
          "(faster prefill) when they fit in half the memory; chat_format overrides the format "
          "detected from the file; precision 'exact' (f32, as the reference tests check) or "
          "'fast' (int8 weights and activations, as --precision fast).")
      .def_prop_ro("path", [](const LoadedModel& m) { return m.path; })
      .def_prop_ro("name", [](const LoadedModel& m) { return m.engine->model().config().name; })
      .def_prop_ro("architecture",
                   [](const LoadedModel& m) {
                     return std::string(model::arch_name(m.engine->model().config().arch));
                   })
      .def_prop_ro("chat_format", [](const LoadedModel& m) { return std::string(m.format.name()); })
      .def_prop_ro("fingerprint",
                   [](const LoadedModel& m) { return probe::model_fingerprint(m.engine->model()); })
      .def_prop_ro("threads", [](const LoadedModel& m) { return m.engine->threads(); })
      .def_prop_ro("precision",
                   [](const LoadedModel& m) {
                     return std::string(kv::precision_name(m.engine->products()));
                   })
      .def_prop_ro("n_layer",
                   [](const LoadedModel& m) { return m.engine->model().config().n_layer; })
      .def_prop_ro("n_embd", [](const LoadedModel& m) { return m.engine->model().config().n_embd; })
      .def_prop_ro("n_head", [](const LoadedModel& m) { return m.engine->model().config().n_head; })
      .def_prop_ro("n_head_kv",
                   [](const LoadedModel& m) { return m.engine->model().config().n_head_kv; })
      .def_prop_ro("head_dim",
                   [](const LoadedModel& m) { return m.engine->model().config().head_dim; })
      .def_prop_ro("n_vocab",
                   [](const LoadedModel& m) { return m.engine->model().config().n_vocab; })
      .def_prop_ro("n_ctx_train",
                   [](const LoadedModel& m) { return m.engine->model().config().n_ctx_train; })
      .def(
          "tokenize",
          [](const LoadedModel& m, const std::string& text, bool special) {
            return m.engine->model().tokenizer().encode(text, special);
          },
          nb::arg("text"), nb::arg("special") = false,
          "Token ids of `text` (special=True parses special-token text such as <|im_start|>).")
      .def(
          "detokenize",
          [](const LoadedModel& m, const std::vector<int32_t>& ids) {
            for (const int32_t id : ids) {
              if (id < 0 || id >= m.engine->model().config().n_vocab) {
                fail("token id ", id, " is outside the vocabulary (",
                     m.engine->model().config().n_vocab, ")");
              }
            }
            return m.engine->model().tokenizer().decode(ids);
          },
          nb::arg("ids"), "The text of token ids.")
      .def(
          "query_tokens",
          [](const LoadedModel& m, const std::string& question, const std::string& answer_prefix) {
            return events::query_prompt(m.format, m.engine->model().tokenizer(), question,
                                        answer_prefix);
          },
          nb::arg("question"), nb::arg("answer_prefix") = "",
          "A query's tokens as History.score asks it: the question as a user turn, the "
          "assistant's generation prompt, the answer prefix (for History.logits).")
      .def("render", &rendered_events, nb::arg("events"),
           "The events (dicts with id, role, content) rendered by the chat format as a history "
           "takes them: the format's preamble first, then one entry per event with its tokens "
           "and its [start, end) span.");
}

}  // namespace eventkv::python
