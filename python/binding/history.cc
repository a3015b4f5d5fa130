// eventkv.History: an agent's history of events in a sparse KV cache under
// the memory contract (contract::ContractCache): add and compute events,
// evict, forget (verified), transplant rows, score queries, read rows and
// residual streams under TransformerLens-style hook names.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "contract/contract_cache.h"
#include "events/render.h"
#include "probe/scenario.h"
#include "util/error.h"
#include "util/json_fields.h"

namespace eventkv::python {
namespace {

using Array = nb::ndarray<nb::numpy, float>;
using Scores = nb::ndarray<nb::numpy, double>;

// A numpy array owning `values` (moved, not copied).
template <typename T>
nb::ndarray<nb::numpy, T> owned_array(std::vector<T> values, std::initializer_list<size_t> shape) {
  auto* owner = new std::vector<T>(std::move(values));
  const nb::capsule free_owner(owner,
                               [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return {owner->data(), shape, free_owner};
}

kv::QueryPositions query_positions(const std::string& name) {
  if (name == "after_history") return kv::QueryPositions::kAfterHistory;
  if (name == "after_retained") return kv::QueryPositions::kAfterRetained;
  fail("positions must be 'after_history' or 'after_retained', not '", name, "'");
}

nb::list decisions_list(const std::vector<contract::Decision>& decisions) {
  nb::list out;
  for (const contract::Decision& d : decisions) {
    nb::dict item;
    item["event"] = d.event;
    item["fact"] = d.fact;
    item["keeping"] = std::string(contract::keeping_name(d.keeping));
    item["evidence"] = d.evidence;
    item["rows"] = d.rows;
    item["ms"] = d.ms;
    out.append(item);
  }
  return out;
}

class History {
 public:
  History(std::shared_ptr<LoadedModel> model, int64_t kv_cells,
          const std::optional<std::string>& profile, bool verify)
      : model_(std::move(model)),
        cache_(model_->engine, new_arena(*model_, kv_cells), model_->format,
               profile ? std::optional(contract::load_profile(*profile)) : std::nullopt,
               {.verify = verify}) {}

  History(std::shared_ptr<LoadedModel> model, contract::ContractCache cache)
      : model_(std::move(model)), cache_(std::move(cache)) {}

  // Events as the contract's history files and the server take them.
  void add(const nb::handle& events) {
    const auto dumps = nb::module_::import_("json").attr("dumps");
    nb::list list;
    if (nb::isinstance<nb::dict>(events)) {
      list.append(events);
    } else {
      list = nb::list(events);
    }
    for (const nb::handle item : list) {
      const std::string text = nb::cast<std::string>(dumps(item));
      const nlohmann::json object = nlohmann::json::parse(text);
      const std::string where = str_cat("event ", pending_.size());
      pending_.push_back(contract::parse_agent_event(JsonFields(object, "", where)));
    }
  }

  // Computes the added events; with `cache`, returns their residual streams
  // and K/V rows by hook name, and where each event's rows lie.
  nb::object compute(bool cache) {
    if (pending_.empty()) fail("compute: no events added since the last compute");
    compute::ResidualCapture capture;
    const size_t first_event = cache_.kv().events().size();
    computing(*model_, [&] {
      if (cache) model_->engine->set_capture(&capture);
      try {
        cache_.append(pending_);
      } catch (...) {
        model_->engine->set_capture(nullptr);
        throw;
      }
      model_->engine->set_capture(nullptr);
      return 0;
    });
    pending_.clear();
    if (!cache) return nb::none();
    return activation_cache(first_event, std::move(capture));
  }

  nb::list evict(const std::vector<std::string>& ids) {
    return decisions_list(computing(*model_, [&] { return cache_.evict(ids); }));
  }
  nb::list forget(const std::vector<std::string>& ids) {
    return decisions_list(computing(*model_, [&] { return cache_.forget(ids); }));
  }
  nb::list fit_budget(int64_t rows) {
    return decisions_list(computing(*model_, [&] { return cache_.fit_budget(rows); }));
  }

  void transplant(const History& source, const std::string& id,
                  std::optional<std::pair<int64_t, int64_t>> layers,
                  std::optional<std::pair<int32_t, int32_t>> tokens) {
    const int64_t n_layer = model_->engine->model().config().n_layer;
    const std::pair<int64_t, int64_t> layer_range = layers.value_or(std::pair{int64_t{0}, n_layer});
    const std::pair<int32_t, int32_t> token_range = tokens.value_or(std::pair{0, -1});
    const int64_t layer_begin = layer_range.first;
    const int64_t layer_end = layer_range.second;
    if (layer_begin < 0 || layer_end > n_layer || layer_begin >= layer_end) {
      fail("transplant: layers must be a range within [0, ", n_layer, "), not [", layer_begin, ", ",
           layer_end, ")");
    }
    computing(*model_, [&] {
      cache_.kv().transplant(source.cache_.kv(), id, layer_begin, layer_end, token_range.first,
                             token_range.second);
      return 0;
    });
  }

  History fork() const { return {model_, cache_.fork()}; }

  Scores score(const std::string& question, const std::vector<std::string>& candidates,
               const std::string& answer_prefix, const std::string& answer_format,
               const std::string& positions) {
    std::vector<std::string> answers;
    answers.reserve(candidates.size());
    for (const std::string& value : candidates)
      answers.push_back(probe::fill_template(answer_format, {{"value", value}}));
    const events::QueryTokens query = events::render_query(
        model_->format, model_->engine->model().tokenizer(), question, answer_prefix, answers);
    return score_tokens(query.prompt, query.candidates, positions);
  }

  Scores score_tokens(const std::vector<int32_t>& query,
                      const std::vector<std::vector<int32_t>>& candidates,
                      const std::string& positions) {
    const kv::QueryPositions mode = query_positions(positions);
    const std::vector<kv::CandidateScore> scores =
        computing(*model_, [&] { return cache_.kv().score(query, candidates, mode); });
    std::vector<double> values;
    values.reserve(scores.size());
    for (const kv::CandidateScore& s : scores) values.push_back(s.log_prob);
    return owned_array(std::move(values), {scores.size()});
  }

  Array logits(const std::vector<int32_t>& query, const std::string& positions) {
    const kv::QueryPositions mode = query_positions(positions);
    std::vector<float> values =
        computing(*model_, [&] { return cache_.kv().query_logits(query, mode); });
    const size_t n = values.size();
    return owned_array(std::move(values), {n});
  }

  nb::list events() const {
    nb::list out;
    for (const kv::EventState& e : cache_.kv().events()) {
      nb::dict item;
      item["id"] = e.id;
      item["role"] = e.role;
      item["start"] = e.begin;
      item["end"] = e.end();
      item["tokens"] = e.tokens;
      item["retained"] = e.retained;
      out.append(item);
    }
    return out;
  }

  // The retained K (after RoPE) and V rows of event `id`, every layer.
  nb::dict rows(const std::string& id) const {
    const kv::EventKV& h = cache_.kv();
    const kv::EventState& event = h.event(id);
    if (!event.retained) fail("rows: event '", id, "' is evicted");
    const model::ModelConfig& c = model_->engine->model().config();
    const compute::KvStorage& storage = h.arena().storage();
    nb::dict out;
    const auto n = static_cast<size_t>(event.tokens.size());
    for (int64_t layer = 0; layer < c.n_layer; ++layer) {
      // A kv-shared layer (gemma4) attends to the rows of its source layer.
      const int64_t source = c.layer(layer).kv_layer;
      const auto k_dim = static_cast<size_t>(c.kv_dim(layer));
      const auto v_dim = static_cast<size_t>(c.v_dim(layer));
      std::vector<float> k(n * k_dim);
      std::vector<float> v(n * v_dim);
      for (int32_t s = event.begin; s < event.end(); ++s) {
        const auto t = static_cast<size_t>(s - event.begin);
        storage.read_k(source, h.cell_of(s), 0, c.kv_dim(layer), k.data() + t * k_dim);
        storage.read_v(source, h.cell_of(s), 0, c.v_dim(layer), v.data() + t * v_dim);
      }
      const auto heads = static_cast<size_t>(c.layer(layer).n_head_kv);
      out[str_cat("blocks.", layer, ".attn.hook_rot_k").c_str()] =
          owned_array(std::move(k), {n, heads, static_cast<size_t>(c.layer(layer).head_dim)});
      out[str_cat("blocks.", layer, ".attn.hook_v").c_str()] =
          owned_array(std::move(v), {n, heads, static_cast<size_t>(c.layer(layer).head_dim_v)});
    }
    return out;
  }

  std::string fact_state(const std::string& key) const { return cache_.fact_state(key); }
  nb::list log() const { return decisions_list(cache_.log()); }
  nb::list proofs() const {
    nb::list out;
    for (const contract::ForgetProof& p : cache_.proofs()) {
      nb::dict item;
      item["event"] = p.event;
      item["recomputed_events"] = p.recomputed_events;
      item["recomputed_rows"] = p.recomputed_rows;
      item["verified"] = p.verified;
      item["value_independent"] = p.value_independent;
      item["equals_fresh"] = p.equals_fresh;
      item["recompute_ms"] = p.recompute_ms;
      item["verify_ms"] = p.verify_ms;
      out.append(item);
    }
    return out;
  }
  int64_t retained_rows() const { return cache_.kv().retained_rows(); }
  size_t bytes_retained() const { return cache_.kv().bytes_retained(); }
  size_t bytes_full() const { return cache_.kv().bytes_full(); }
  const std::shared_ptr<LoadedModel>& model() const { return model_; }

 private:
  // The residual stream after each layer of the computed rows (views of one
  // capture, not copies) and their K/V rows, by hook name.
  nb::dict activation_cache(size_t first_event, compute::ResidualCapture capture) const {
    const model::ModelConfig& c = model_->engine->model().config();
    const auto& events = cache_.kv().events();
    nb::list spans;
    int64_t row = 0;
    for (size_t e = first_event; e < events.size(); ++e) {
      nb::dict span;
      span["id"] = events[e].id;
      span["start"] = row;
      row += static_cast<int64_t>(events[e].tokens.size());
      span["end"] = row;
      spans.append(span);
    }
    if (row != capture.rows) fail("compute: captured ", capture.rows, " rows for ", row, " tokens");
    nb::dict out;
    out["events"] = spans;
    auto* owner = new std::vector<float>(std::move(capture.values));
    const nb::capsule free_owner(
        owner, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
    const auto n_embd = static_cast<size_t>(c.n_embd);
    for (int64_t layer = 0; layer < c.n_layer; ++layer) {
      // [rows][layer][n_embd]: one layer is every n_layer-th row of n_embd.
      out[str_cat("blocks.", layer, ".hook_resid_post").c_str()] =
          Array(owner->data() + layer * c.n_embd, {static_cast<size_t>(row), n_embd}, free_owner,
                {c.n_layer * c.n_embd, 1});
    }
    for (size_t e = first_event; e < events.size(); ++e) {
      if (!events[e].retained) continue;
      for (const auto& [name, array] : rows(events[e].id)) {
        const std::string key = nb::cast<std::string>(name);
        nb::dict per_event =
            out.contains(key.c_str()) ? nb::cast<nb::dict>(out[key.c_str()]) : nb::dict();
        per_event[events[e].id.c_str()] = array;
        out[key.c_str()] = per_event;
      }
    }
    return out;
  }

  std::shared_ptr<LoadedModel> model_;
  contract::ContractCache cache_;
  std::vector<contract::AgentEvent> pending_;
};

}  // namespace

void bind_history(nb::module_& m) {
  nb::class_<History>(m, "History",
                      "An agent's history of events in a sparse event KV cache, under the memory "
                      "contract: each event's policy (none, recall, forget) is honoured when it "
                      "is evicted.")
      .def(nb::init<std::shared_ptr<LoadedModel>, int64_t, const std::optional<std::string>&,
                    bool>(),
           nb::arg("model"), nb::arg("kv_cells") = 0, nb::arg("profile") = nb::none(),
           nb::arg("verify") = true,
           "A history on `model`. kv_cells: KV rows it may hold (0: the experiments' default of "
           "8192); profile: a calibration profile (JSON) that certifies carriers of recall "
           "facts; verify: prove each forgetting.")
      .def_prop_ro("model", &History::model)
      .def("add", &History::add, nb::arg("events"),
           "Adds an event (a dict: id, role, content, and optionally policy, pin, facts, "
           "carries, as in the contract's history files) or a list of them, to compute next.")
      .def("compute", &History::compute, nb::arg("cache") = false,
           "Computes the added events' rows, each seeing the retained rows before it. With "
           "cache=True returns a dict: 'events' (each computed event's [start, end) rows), "
           "'blocks.{i}.hook_resid_post' ([rows, n_embd] views, no copy) and "
           "'blocks.{i}.attn.hook_rot_k' / 'hook_v' ({event: [tokens, heads, head_dim]}).")
      .def("evict", &History::evict, nb::arg("ids"),
           "Evicts events under the contract; returns the decisions (records kept, facts lost).")
      .def("forget", &History::forget, nb::arg("ids"),
           "Verified forgetting: evicts the events and recomputes every retained event that saw "
           "them; returns the decisions (the proof in 'evidence' and in proofs).")
      .def("fit_budget", &History::fit_budget, nb::arg("rows"),
           "Evicts the oldest evictable events until the retained rows fit `rows`.")
      .def("transplant", &History::transplant, nb::arg("source"), nb::arg("event"),
           nb::arg("layers") = nb::none(), nb::arg("tokens") = nb::none(),
           "Copies event `event`'s rows in layers [begin, end) (all by default), tokens "
           "[begin, end) of it (all by default), from `source`, which holds the same event at "
           "the same positions.")
      .def("fork", &History::fork,
           "A history sharing this one's rows (copied on write) and contract state.")
      .def("score", &History::score, nb::arg("question"), nb::arg("candidates"),
           nb::arg("answer_prefix") = "", nb::arg("answer_format") = " {value}",
           nb::arg("positions") = "after_history",
           "Teacher-forced log-probability of each candidate value answering `question` (a user "
           "turn, then the reply's prefix); the history is unchanged.")
      .def("score_tokens", &History::score_tokens, nb::arg("query"), nb::arg("candidates"),
           nb::arg("positions") = "after_history",
           "score() on token ids: the query's, and each candidate's.")
      .def("logits", &History::logits, nb::arg("query"), nb::arg("positions") = "after_history",
           "The logits after the query's token ids, appended temporarily ([n_vocab]).")
      .def_prop_ro("events", &History::events,
                   "Each event: id, role, [start, end) positions, tokens, retained.")
      .def("rows", &History::rows, nb::arg("event"),
           "The event's K (after RoPE) and V rows in every layer, by hook name "
           "('blocks.{i}.attn.hook_rot_k', [tokens, n_head_kv, head_dim]; copies: rows lie in "
           "KV pages).")
      .def("fact_state", &History::fact_state, nb::arg("key"),
           "What a fact's source became: retained, record, carrier, forgotten or lost.")
      .def_prop_ro("log", &History::log, "Every eviction decision so far.")
      .def_prop_ro("proofs", &History::proofs, "The proof of each verified forgetting.")
      .def_prop_ro("retained_rows", &History::retained_rows)
      .def_prop_ro("bytes_retained", &History::bytes_retained)
      .def_prop_ro("bytes_full", &History::bytes_full,
                   "KV bytes the history would hold had nothing been evicted.");
}

}  // namespace eventkv::python
