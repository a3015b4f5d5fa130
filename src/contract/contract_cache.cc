#include "contract/contract_cache.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include "events/render.h"
#include "kv/event_batch.h"
#include "probe/conditions.h"
#include "probe/scenario.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace eventkv::contract {
namespace {

constexpr const char* kRecordPrefix = "record:";

// Every retained row of `a` and `b` (same slots) bit for bit, all layers.
bool same_rows(const kv::EventKV& a, const kv::EventKV& b) {
  if (a.n_slots() != b.n_slots()) return false;
  const compute::KvStorage& sa = a.arena().storage();
  const compute::KvStorage& sb = b.arena().storage();
  std::vector<float> ra;
  std::vector<float> rb;
  const auto same = [&](int64_t n) {
    return std::memcmp(ra.data(), rb.data(), static_cast<size_t>(n) * sizeof(float)) == 0;
  };
  for (int32_t s = 0; s < a.n_slots(); ++s) {
    const int32_t ca = a.cell_of(s);
    const int32_t cb = b.cell_of(s);
    if ((ca < 0) != (cb < 0)) return false;
    if (ca < 0 || a.position_of(s) != b.position_of(s)) continue;
    for (int64_t il = 0; il < sa.n_layer(); ++il) {
      ra.resize(static_cast<size_t>(std::max(sa.k_dim(il), sa.v_dim(il))));
      rb.resize(ra.size());
      sa.read_k(il, ca, 0, sa.k_dim(il), ra.data());
      sb.read_k(il, cb, 0, sb.k_dim(il), rb.data());
      if (!same(sa.k_dim(il))) return false;
      sa.read_v(il, ca, 0, sa.v_dim(il), ra.data());
      sb.read_v(il, cb, 0, sb.v_dim(il), rb.data());
      if (!same(sa.v_dim(il))) return false;
    }
  }
  return true;
}

std::string fill_statement(const Fact& fact) {
  return probe::fill_template(fact.statement, {{"key", fact.key}, {"value", fact.value}});
}

double to_ms(double seconds) {
  return seconds * 1000.0;
}

}  // namespace

std::string_view keeping_name(Keeping keeping) {
  switch (keeping) {
    case Keeping::kRecord:
      return "record";
    case Keeping::kCarrier:
      return "certified carrier";
    case Keeping::kForgotten:
      return "forgotten";
    case Keeping::kLost:
      break;
  }
  return "lost";
}

ContractCache::ContractCache(std::shared_ptr<kv::Engine> engine, std::shared_ptr<kv::KvArena> arena,
                             tokenizer::ChatFormat format, std::optional<Profile> profile,
                             ContractOptions options)
    : engine_(std::move(engine)),
      arena_(std::move(arena)),
      format_(std::move(format)),
      profile_(std::move(profile)),
      options_(options),
      kv_(engine_, arena_) {}

bool ContractCache::is_record(std::string_view id) {
  return id.starts_with(kRecordPrefix);
}

const AgentEvent* ContractCache::spec(std::string_view id) const {
  const auto it = specs_.find(id);
  return it == specs_.end() ? nullptr : &it->second;
}

void ContractCache::check_new_id(std::string_view id) const {
  if (spec(id) != nullptr || is_record(id) || id == events::kPreambleId)
    fail("append: event id '", id, "' is already in the history");
  if (!open_reply_.empty()) fail("append: reply '", open_reply_, "' is still being generated");
}

std::vector<kv::EventTokens> ContractCache::render(std::span<const AgentEvent> events) const {
  std::vector<events::Event> plain;
  plain.reserve(events.size());
  for (const AgentEvent& e : events) plain.push_back(e.event);
  const tokenizer::Tokenizer& tok = engine_->model().tokenizer();
  if (kv_.events().empty()) return events::render_events(format_, tok, plain);
  std::vector<kv::EventTokens> tokens;
  tokens.reserve(plain.size());
  for (const events::Event& e : plain)
    tokens.push_back({e.id, e.role, format_.render_message(tok, {e.role, e.content})});
  return tokens;
}

void ContractCache::append(std::span<const AgentEvent> events) {
  std::set<std::string> ids;
  for (const AgentEvent& e : events) {
    check_new_id(e.event.id);
    if (!ids.insert(e.event.id).second) fail("append: event id '", e.event.id, "' is listed twice");
  }
  std::vector<kv::EventTokens> tokens = render(events);
  for (kv::EventTokens& t : tokens) override_tokens(t);
  compute_appended(std::move(tokens));
  for (const AgentEvent& e : events) specs_.emplace(e.event.id, e);
  operations_.push_back({{events.begin(), events.end()}, {}});
}

// A replay's replaced tokens for the event, if any.
void ContractCache::override_tokens(kv::EventTokens& event) const {
  const auto it = token_overrides_.find(event.id);
  if (it == token_overrides_.end()) return;
  if (it->second.size() != event.tokens.size())
    fail("replay: event '", event.id, "' must keep its ", event.tokens.size(), " tokens");
  event.tokens = it->second;
}

void ContractCache::append_rendered(const AgentEvent& event, std::vector<int32_t> tokens,
                                    std::vector<TokenRange> panel_tokens) {
  const std::string& id = event.event.id;
  check_new_id(id);
  if (kv_.events().empty()) fail("append: '", id, "' cannot open a history");
  int64_t after = 0;
  for (const TokenRange& r : panel_tokens) {
    if (r.begin < after || r.end <= r.begin || r.end > static_cast<int64_t>(tokens.size())) {
      fail("append: reply '", id, "': panel tokens [", r.begin, ", ", r.end,
           ") out of order or past its ", tokens.size(), " tokens");
    }
    after = r.end;
  }
  exact_tokens_[id] = tokens;
  kv::EventTokens rendered{id, event.event.role, std::move(tokens)};
  override_tokens(rendered);
  compute_reply(std::move(rendered), panel_tokens);
  if (!panel_tokens.empty()) panel_tokens_[id] = std::move(panel_tokens);
  specs_.emplace(id, event);
  operations_.push_back({{event}, {}, false, true});
}

const std::vector<TokenRange>& ContractCache::panel_tokens(std::string_view id) const {
  static const std::vector<TokenRange> kNone;
  const auto it = panel_tokens_.find(id);
  return it == panel_tokens_.end() ? kNone : it->second;
}

std::vector<float> ContractCache::open_reply(const AgentEvent& event) {
  check_new_id(event.event.id);
  if (kv_.events().empty()) fail("generate: the history has no events");
  std::vector<int32_t> header = format_.generation_prompt(engine_->model().tokenizer());
  if (header.empty()) fail("generate: chat format '", format_.name(), "' has no generation prompt");
  const auto n = static_cast<int64_t>(header.size());
  const compute::ActivationPrecision products = reply_products(header.size());
  std::vector<float> logits =
      compute_appended({{event.event.id, "assistant", std::move(header)}}, products);
  specs_.emplace(event.event.id, event);
  open_reply_ = event.event.id;
  if (products == compute::ActivationPrecision::kInt8Panels) add_panel_tokens(0, n);
  return logits;
}

std::vector<std::vector<float>> ContractCache::extend_replies(
    std::span<ContractCache* const> caches, std::span<const int32_t> tokens) {
  if (caches.empty()) return {};
  kv::EventBatch batch(caches[0]->kv_.engine(), caches[0]->kv_.arena());
  for (size_t c = 0; c < caches.size(); ++c) {
    if (caches[c]->open_reply_.empty()) fail("generate: no reply is open");
    if (caches[c]->options_.replies != caches[0]->options_.replies)
      fail("generate: replies of one step must share their precision");
    batch.extend(caches[c]->kv_, {&tokens[c], 1});
  }
  const compute::ActivationPrecision products = caches[0]->reply_products(caches.size());
  batch.run(products);
  std::vector<std::vector<float>> logits;
  for (ContractCache* cache : caches) {
    logits.push_back(batch.logits(logits.size()));
    if (products != compute::ActivationPrecision::kInt8Panels) continue;
    const auto token = static_cast<int64_t>(cache->kv_.events().back().tokens.size()) - 1;
    cache->add_panel_tokens(token, token + 1);
  }
  return logits;
}

compute::ActivationPrecision ContractCache::reply_products(size_t tokens) const {
  const bool panels =
      options_.replies == compute::ActivationPrecision::kInt8Rowwise && tokens >= kPanelStepReplies;
  return panels ? compute::ActivationPrecision::kInt8Panels : options_.replies;
}

void ContractCache::add_panel_tokens(int64_t begin, int64_t end) {
  std::vector<TokenRange>& ranges = panel_tokens_[open_reply_];
  if (!ranges.empty() && ranges.back().end == begin) {
    ranges.back().end = end;
  } else {
    ranges.push_back({begin, end});
  }
}

void ContractCache::close_reply(const std::string& content, std::optional<int32_t> pending) {
  if (open_reply_.empty()) fail("generate: no reply is open");
  const tokenizer::Tokenizer& tok = engine_->model().tokenizer();
  // The end of an assistant turn: its rendering less the generation prompt.
  const std::vector<int32_t> header = format_.generation_prompt(tok);
  const std::vector<int32_t> empty = format_.render_message(tok, {"assistant", ""});
  if (empty.size() < header.size() || !std::equal(header.begin(), header.end(), empty.begin()))
    fail("generate: chat format '", format_.name(), "' does not open replies with its prompt");
  std::vector<int32_t> closing(pending ? 1 : 0, pending.value_or(0));
  for (size_t t = header.size(); t < empty.size(); ++t) closing.push_back(empty[t]);
  if (!closing.empty()) {
    const auto begin = static_cast<int64_t>(kv_.events().back().tokens.size());
    kv::EventBatch batch(kv_.engine(), kv_.arena());
    batch.extend(kv_, closing);
    const compute::ActivationPrecision products = reply_products(closing.size());
    batch.run(products);
    if (products == compute::ActivationPrecision::kInt8Panels)
      add_panel_tokens(begin, begin + static_cast<int64_t>(closing.size()));
  }
  AgentEvent& event = specs_.at(open_reply_);
  event.event.content = content;
  exact_tokens_[open_reply_] = kv_.events().back().tokens;
  operations_.push_back({{event}, {}, false, true});
  open_reply_.clear();
}

void ContractCache::reposition() {
  if (options_.verify) fail("reposition: not while verified forgetting is proved");
  if (!open_reply_.empty()) fail("reposition: reply '", open_reply_, "' is being generated");
  kv_.reposition();
  operations_.push_back({{}, {}, false, false, true});
}

std::vector<Decision> ContractCache::forget(std::span<const std::string> ids) {
  check_evictable(ids);
  for (const std::string& id : ids) {
    const auto it = specs_.find(id);
    if (it == specs_.end()) fail("forget: '", id, "' is the chat format's own event");
    it->second.policy = Policy::kForget;
  }
  return evict_events(ids, /*forced_forget=*/true);
}

std::vector<float> ContractCache::compute_appended(
    std::vector<kv::EventTokens> tokens, std::optional<compute::ActivationPrecision> reply) {
  const size_t first = kv_.events().size();
  kv::EventBatch batch(kv_.engine(), kv_.arena());
  batch.append(kv_, tokens, {}, reply.has_value());
  batch.run(reply);
  track_visibility(first);
  return batch.logits(0);
}

// The reply's runs in order, each with its products: the first appends the
// event, the others extend it.
void ContractCache::compute_reply(kv::EventTokens reply, const std::vector<TokenRange>& panels) {
  const size_t first = kv_.events().size();
  const auto run = [&](int64_t begin, int64_t end, compute::ActivationPrecision precision) {
    if (begin == end) return;
    const std::span<const int32_t> part(reply.tokens.data() + begin,
                                        static_cast<size_t>(end - begin));
    kv::EventBatch batch(kv_.engine(), kv_.arena());
    if (begin == 0) {
      const kv::EventTokens opening{reply.id, reply.role, {part.begin(), part.end()}};
      batch.append(kv_, {&opening, 1});
    } else {
      batch.extend(kv_, part);
    }
    batch.run(precision);
  };
  int64_t at = 0;
  for (const TokenRange& r : panels) {
    run(at, r.begin, options_.replies);
    run(r.begin, r.end, compute::ActivationPrecision::kInt8Panels);
    at = r.end;
  }
  run(at, static_cast<int64_t>(reply.tokens.size()), options_.replies);
  track_visibility(first);
}

// saw_[e] for events [first, end): each attends to the retained events
// before it.
void ContractCache::track_visibility(size_t first_event) {
  saw_.resize(kv_.events().size());
  for (size_t e = first_event; e < saw_.size(); ++e) refresh_visibility(e);
}

std::vector<std::string> ContractCache::descendants(size_t event) const {
  std::vector<std::string> out;
  const auto& events = kv_.events();
  for (size_t e = event + 1; e < events.size(); ++e) {
    if (events[e].retained && saw_[e][event] != 0) out.push_back(events[e].id);
  }
  return out;
}

void ContractCache::check_evictable(std::span<const std::string> ids) const {
  std::set<std::string> seen;
  for (const std::string& id : ids) {
    const kv::EventState& e = kv_.event(id);  // throws for an unknown id
    if (!seen.insert(id).second) fail("evict: event '", id, "' is listed twice");
    if (!e.retained) fail("evict: event '", id, "' is already evicted");
    if (is_record(id)) fail("evict: '", id, "' is a record that keeps a recall fact");
    const AgentEvent* s = spec(id);
    if (s != nullptr && s->pin) fail("evict: event '", id, "' is pinned");
  }
}

std::vector<Decision> ContractCache::evict(std::span<const std::string> ids) {
  check_evictable(ids);
  return evict_events(ids, false);
}

std::vector<Decision> ContractCache::evict_events(std::span<const std::string> ids,
                                                  bool forced_forget) {
  if (options_.verify && !pristine_) {
    pristine_ = kv_.fork();
    pristine_saw_ = saw_;
    pristine_operations_ = operations_.size();
  }
  operations_.push_back({{}, {ids.begin(), ids.end()}, forced_forget});
  std::vector<std::string> plain;
  std::vector<std::string> forgotten;
  for (const std::string& id : ids) {
    const AgentEvent* s = spec(id);
    const bool forget = options_.enforce && s != nullptr && s->policy == Policy::kForget;
    (forget ? forgotten : plain).push_back(id);
  }
  std::vector<Decision> decisions;
  double seconds = 0.0;
  {
    const Stopwatch watch(seconds);
    kv_.evict(plain);
  }
  for (const std::string& id : plain) {
    const AgentEvent* s = spec(id);
    const bool recall = options_.enforce && s != nullptr && s->policy == Policy::kRecall;
    if (s == nullptr || s->facts.empty()) {
      decisions.push_back({id, "", Keeping::kLost, "no facts declared", 0, to_ms(seconds)});
    } else if (!recall) {
      for (const Fact& f : s->facts) {
        decisions.push_back({id, f.key, Keeping::kLost,
                             options_.enforce ? "policy none: plain eviction"
                                              : "contract not enforced: plain eviction",
                             0, to_ms(seconds)});
      }
    }
  }
  std::vector<std::string> recomputed;
  ForgetProof proof;
  if (!forgotten.empty()) recomputed = forget_events(forgotten, proof);
  if (options_.enforce) keep_recall_facts(decisions);
  // Proved once the whole eviction (records included) is done: the replay
  // repeats all of it.
  if (!forgotten.empty() && options_.verify) prove(proof, forgotten, recomputed);
  if (!forgotten.empty()) {
    proofs_.push_back(proof);
    add_forget_decisions(proof, forgotten, decisions);
  }
  log_.insert(log_.end(), decisions.begin(), decisions.end());
  return decisions;
}

void ContractCache::add_forget_decisions(const ForgetProof& proof,
                                         const std::vector<std::string>& ids,
                                         std::vector<Decision>& decisions) const {
  const std::string evidence = str_cat(
      "recomputed ", proof.recomputed_events, " descendant events (", proof.recomputed_rows,
      " rows, ", static_cast<int64_t>(proof.recompute_ms), " ms)",
      proof.verified ? str_cat("; value-independent: ", proof.value_independent ? "yes" : "NO",
                               ", equals fresh compute: ", proof.equals_fresh ? "yes" : "NO")
                     : "; not verified");
  for (const std::string& id : ids) {
    const AgentEvent& s = *spec(id);
    if (s.facts.empty()) decisions.push_back({id, "", Keeping::kForgotten, evidence, 0, 0});
    for (const Fact& f : s.facts) {
      decisions.push_back(
          {id, f.key, Keeping::kForgotten, evidence, proof.recomputed_rows, proof.recompute_ms});
    }
  }
}

std::vector<std::string> ContractCache::forget_events(const std::vector<std::string>& ids,
                                                      ForgetProof& proof) {
  for (const std::string& id : ids) proof.event += (proof.event.empty() ? "" : ",") + id;
  std::set<std::string> targets;
  for (const std::string& id : ids) {
    for (std::string& d : descendants(static_cast<size_t>(event_index(id))))
      targets.insert(std::move(d));
  }
  for (const std::string& id : ids) targets.erase(id);
  std::vector<std::string> recomputed;
  for (const kv::EventState& e : kv_.events()) {
    if (targets.count(e.id) > 0) {
      recomputed.push_back(e.id);
      proof.recomputed_rows += static_cast<int64_t>(e.tokens.size());
    }
  }
  proof.recomputed_events = static_cast<int64_t>(recomputed.size());
  double seconds = 0.0;
  {
    const Stopwatch watch(seconds);
    kv_.evict(ids);
    if (!recomputed.empty()) kv_.recompute(recomputed, {}, false);
  }
  proof.recompute_ms = to_ms(seconds);
  for (const std::string& id : recomputed) refresh_visibility(static_cast<size_t>(event_index(id)));
  return recomputed;
}

int32_t ContractCache::event_index(std::string_view id) const {
  const auto& events = kv_.events();
  for (size_t e = 0; e < events.size(); ++e) {
    if (events[e].id == id) return static_cast<int32_t>(e);
  }
  fail("unknown event '", id, "'");
}

// A recomputed event attends to the events retained now.
void ContractCache::refresh_visibility(size_t event) {
  const auto& events = kv_.events();
  std::vector<char> saw(event, 0);
  for (size_t v = 0; v < event; ++v) {
    if (!events[v].retained) continue;
    saw[v] = 1;
    for (size_t u = 0; u < v; ++u) saw[u] = static_cast<char>(saw[u] | saw_[v][u]);
  }
  saw_[event] = std::move(saw);
}

// Proof of a verified forgetting: the history replayed with every token of
// the forgotten events changed serves the same rows, bit for bit, and so
// does a fresh computation of the served events.
void ContractCache::prove(ForgetProof& proof, const std::vector<std::string>& ids,
                          const std::vector<std::string>& recomputed) const {
  double seconds = 0.0;
  {
    const Stopwatch watch(seconds);
    std::map<std::string, std::vector<int32_t>, std::less<>> changed;
    const auto n_vocab = static_cast<int32_t>(engine_->model().config().n_vocab);
    for (const std::string& id : ids) {
      std::vector<int32_t> tokens = kv_.event(id).tokens;
      for (int32_t& t : tokens) t = (t + 1) % n_vocab;
      changed.emplace(id, std::move(tokens));
    }
    {
      const ContractCache other =
          replay(changed, {.enforce = true, .verify = false, .replies = options_.replies});
      proof.value_independent = same_rows(kv_, other.kv_);
    }
    proof.equals_fresh = equals_fresh(recomputed);
  }
  proof.verified = true;
  proof.verify_ms = to_ms(seconds);
}

// The served events computed afresh, in order, each seeing only the retained
// events before it; rows of events that were not recomputed are copied from
// the served history (they never saw a forgotten event).
bool ContractCache::equals_fresh(const std::vector<std::string>& recomputed) const {
  const auto& events = kv_.events();
  const std::set<std::string> again(recomputed.begin(), recomputed.end());
  kv::EdgeMask mask;
  std::vector<std::string> evicted;
  for (const kv::EventState& v : events) {
    if (v.retained) continue;
    evicted.push_back(v.id);
    for (const kv::EventState& e : events) mask.remove(e.id, v.id);
  }
  const auto copied = [&](const kv::EventState& e) { return e.retained && again.count(e.id) == 0; };
  // The events before the first recomputed one are shared as they are.
  size_t i = recomputed.empty() ? events.size() : static_cast<size_t>(event_index(recomputed[0]));
  kv::EventKV fresh = kv_.fork(static_cast<int64_t>(i));
  const int64_t n_layer = engine_->model().config().n_layer;
  while (i < events.size()) {
    const bool copy = copied(events[i]);
    std::vector<kv::EventTokens> group;
    for (; i < events.size() && copied(events[i]) == copy; ++i)
      group.push_back({events[i].id, events[i].role, events[i].tokens});
    fresh.append(group, mask);
    if (!copy) continue;
    for (const kv::EventTokens& e : group) fresh.transplant(kv_, e.id, 0, n_layer);
  }
  std::vector<std::string> evict_now;
  for (const std::string& id : evicted) {
    if (fresh.event(id).retained) evict_now.push_back(id);
  }
  fresh.evict(evict_now);
  return same_rows(kv_, fresh);
}

bool ContractCache::carrier_serves(const Fact& fact, size_t source, std::string* evidence) const {
  const auto& events = kv_.events();
  std::string refused;
  for (size_t c = source + 1; c < events.size(); ++c) {
    const AgentEvent* s = spec(events[c].id);
    if (s == nullptr || !events[c].retained) continue;
    for (const CarrierClaim& claim : s->carries) {
      if (claim.fact != fact.key) continue;
      if (saw_[c][source] == 0) {
        refused = str_cat("carrier ", events[c].id, " was recomputed without the source");
        continue;
      }
      const ProfileEntry* entry =
          profile_ ? profile_->find(claim.construction, fact.type) : nullptr;
      if (entry == nullptr || !entry->certified) {
        refused = str_cat("carrier ", events[c].id, " (", claim.construction, ") ",
                          !profile_ ? "unchecked: no calibration profile"
                          : entry == nullptr
                              ? str_cat("not calibrated for ", fact.type)
                              : str_cat("not certified for ", fact.type, ": ", entry->reason));
        continue;
      }
      *evidence =
          str_cat("carrier ", events[c].id, " (", claim.construction, ") certified for ", fact.type,
                  ": ", entry->pooled.aligned, ":", entry->pooled.anti, " aligned:anti, recovery ",
                  entry->pooled.recovery, " [", entry->pooled.recovery_low, ", ",
                  entry->pooled.recovery_high, "] over ", entry->families.size(), " families");
      return true;
    }
  }
  *evidence = refused.empty() ? "no carrier of this fact is retained" : refused;
  return false;
}

// Every recall fact whose source is evicted is served by a certified carrier
// or a record; facts left without either get one record per source event.
void ContractCache::keep_recall_facts(std::vector<Decision>& decisions) {
  const auto& events = kv_.events();
  std::vector<std::pair<size_t, std::vector<const Fact*>>> needed;
  std::vector<std::string> reasons;
  for (size_t e = 0; e < events.size(); ++e) {
    const AgentEvent* s = spec(events[e].id);
    if (s == nullptr || events[e].retained || s->policy != Policy::kRecall) continue;
    for (const Fact& fact : s->facts) {
      if (records_.count(fact.key) > 0) continue;
      std::string evidence;
      const bool carried = carrier_serves(fact, e, &evidence);
      const auto was = carried_.find(fact.key);
      if (carried) {
        if (was == carried_.end())
          decisions.push_back({events[e].id, fact.key, Keeping::kCarrier, evidence, 0, 0});
        carried_.insert(fact.key);
        continue;
      }
      if (was != carried_.end()) carried_.erase(was);
      if (needed.empty() || needed.back().first != e) needed.push_back({e, {}});
      needed.back().second.push_back(&fact);
      reasons.push_back(evidence);
    }
  }
  size_t reason = 0;
  for (const auto& [source, facts] : needed) {
    std::string text = "(Memory: ";
    for (size_t f = 0; f < facts.size(); ++f) {
      if (f > 0) text += "; ";
      text += fill_statement(*facts[f]);
    }
    text += ".)";
    const std::string id = str_cat(kRecordPrefix, events[source].id, "/", records_.size());
    double seconds = 0.0;
    kv::EventTokens record{id, "system",
                           format_.render_message(engine_->model().tokenizer(), {"system", text})};
    const auto rows = static_cast<int64_t>(record.tokens.size());
    {
      const Stopwatch watch(seconds);
      compute_appended({std::move(record)});
    }
    for (const Fact* f : facts) {
      records_.emplace(f->key, id);
      decisions.push_back({kv_.events()[source].id, f->key, Keeping::kRecord,
                           str_cat(id, " \"", text, "\" (", reasons[reason++], ")"), rows,
                           to_ms(seconds)});
    }
  }
}

std::vector<Decision> ContractCache::fit_budget(int64_t budget_rows, const EvictionScorer& scorer) {
  std::vector<Decision> decisions;
  while (kv_.retained_rows() > budget_rows) {
    const auto& events = kv_.events();
    std::vector<std::pair<double, size_t>> order;
    for (size_t e = 0; e < events.size(); ++e) {
      const AgentEvent* s = spec(events[e].id);
      if (!events[e].retained || s == nullptr || s->pin) continue;
      order.emplace_back(scorer ? scorer(events[e], e) : static_cast<double>(e), e);
    }
    if (order.empty()) break;
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    // Enough events to reach the budget; the records they cause are
    // counted by the next round.
    int64_t excess = kv_.retained_rows() - budget_rows;
    std::vector<std::string> ids;
    for (const auto& [score, e] : order) {
      if (excess <= 0) break;
      ids.push_back(events[e].id);
      excess -= static_cast<int64_t>(events[e].tokens.size());
    }
    const std::vector<Decision> round = evict(ids);
    decisions.insert(decisions.end(), round.begin(), round.end());
  }
  return decisions;
}

std::string ContractCache::fact_state(std::string_view key) const {
  const auto [event, fact] = [&] {
    for (const auto& [id, s] : specs_) {
      for (const Fact& f : s.facts) {
        if (f.key == key) return std::pair{&s, &f};
      }
    }
    fail("unknown fact '", key, "'");
  }();
  if (kv_.event(event->event.id).retained) return "retained";
  if (records_.count(fact->key) > 0) return "record";
  if (carried_.count(fact->key) > 0) return "carrier";
  if (options_.enforce && event->policy == Policy::kForget) return "forgotten";
  return "lost";
}

ContractCache ContractCache::replay(
    const std::map<std::string, std::vector<int32_t>, std::less<>>& tokens,
    ContractOptions options) const {
  ContractCache other(engine_, arena_, format_, profile_, options);
  other.token_overrides_ = tokens;
  other.exact_tokens_ = exact_tokens_;
  other.panel_tokens_ = panel_tokens_;
  const size_t first_operation = other.start_from_pristine(*this) ? pristine_operations_ : 0;
  for (size_t o = first_operation; o < operations_.size(); ++o) {
    const Operation& op = operations_[o];
    if (op.reposition) {
      other.reposition();
      continue;
    }
    if (op.rendered) {
      const std::string& id = op.append.front().event.id;
      other.append_rendered(op.append.front(), exact_tokens_.at(id), panel_tokens(id));
      continue;
    }
    if (!op.append.empty()) other.append(op.append);
    if (!op.evict.empty()) {
      if (op.forget) {
        other.forget(op.evict);
      } else {
        other.evict(op.evict);
      }
    }
  }
  return other;
}

// When every replaced event was computed before the first eviction, the
// replay shares the rows before the first of them and computes the rest of
// the history as it was before any eviction.
bool ContractCache::start_from_pristine(const ContractCache& origin) {
  if (!origin.pristine_) return false;
  const auto& events = origin.pristine_->events();
  size_t first = events.size();
  for (const auto& replaced : token_overrides_) {
    const std::string& id = replaced.first;
    const auto it = std::find_if(events.begin(), events.end(),
                                 [&](const kv::EventState& e) { return e.id == id; });
    if (it == events.end()) return false;
    first = std::min(first, static_cast<size_t>(it - events.begin()));
  }
  kv_ = origin.pristine_->fork(static_cast<int64_t>(first));
  saw_.assign(origin.pristine_saw_.begin(),
              origin.pristine_saw_.begin() + static_cast<std::ptrdiff_t>(first));
  std::vector<kv::EventTokens> rest;
  for (size_t e = first; e < events.size(); ++e) {
    const auto it = token_overrides_.find(events[e].id);
    rest.push_back({events[e].id, events[e].role,
                    it == token_overrides_.end() ? events[e].tokens : it->second});
  }
  if (!rest.empty()) compute_appended(std::move(rest));
  for (const kv::EventState& e : events) {
    if (const AgentEvent* s = origin.spec(e.id)) specs_.emplace(e.id, *s);
  }
  return true;
}

ContractCache ContractCache::fork() const {
  ContractCache copy(engine_, arena_, format_, profile_, options_);
  copy.kv_ = kv_.fork();
  copy.specs_ = specs_;
  copy.records_ = records_;
  copy.carried_ = carried_;
  copy.saw_ = saw_;
  copy.exact_tokens_ = exact_tokens_;
  copy.panel_tokens_ = panel_tokens_;
  return copy;
}

std::vector<int32_t> ContractCache::render_content(std::string_view id,
                                                   const std::string& content) const {
  const kv::EventState& e = kv_.event(id);
  return format_.render_message(engine_->model().tokenizer(), {e.role, content});
}

QueryResult ask(kv::EventKV& history, const tokenizer::ChatFormat& format, const FactQuery& query,
                const Fact& fact) {
  std::vector<std::string> answers;
  for (const std::string& value : query.candidates)
    answers.push_back(probe::fill_template(query.answer_format, {{"value", value}}));
  const events::QueryTokens tokens = events::render_query(
      format, history.engine().model().tokenizer(), query.question, query.answer_prefix, answers);
  QueryResult result{query.fact, {}, 0, 0};
  for (const kv::CandidateScore& s : history.score(tokens.prompt, tokens.candidates))
    result.log_probs.push_back(s.log_prob);
  result.predicted = probe::predicted({result.log_probs});
  result.truth =
      static_cast<int>(std::find(query.candidates.begin(), query.candidates.end(), fact.value) -
                       query.candidates.begin());
  return result;
}

}  // namespace eventkv::contract
