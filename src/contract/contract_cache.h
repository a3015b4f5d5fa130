// The memory contract as a runtime: an event KV history whose evictions
// honour each event's policy (contract/agent_history.h).
//   recall  each fact of an evicted event stays answerable: a retained
//           carrier whose rows were computed with the event visible serves
//           it when the calibration profile certifies the carrier's
//           construction for the fact's type; otherwise a textual record
//           event "(Memory: <statement>; ...)" (role system) is appended,
//           and its rows count against the budget like any other.
//   forget  verified forgetting: the event is evicted and every retained
//           event whose rows could hold its information (its descendants in
//           the event attention graph, tracked per event) is recomputed at
//           its position seeing only the retained rows. Proved twice: the
//           served rows are bit-identical when the history is replayed with
//           every token of the event changed, and equal to a fresh
//           computation of the served events.
//   none    plain eviction (its facts are lost, though carriers may still
//           hold them: what the paper measures).
// Every decision is logged with its evidence and cost. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "contract/agent_history.h"
#include "contract/profile.h"
#include "kv/event_kv.h"
#include "tokenizer/chat_format.h"

namespace eventkv::contract {

// How a fact of an evicted event is kept.
enum class Keeping { kRecord, kCarrier, kForgotten, kLost };

std::string_view keeping_name(Keeping keeping);

struct Decision {
  std::string event;  // the evicted event
  std::string fact;   // one of its facts; "" for an event without facts
  Keeping keeping = Keeping::kLost;
  std::string evidence;  // one line: the profile row, the record, the proof
  int64_t rows = 0;      // rows it cost: a record's, or those recomputed
  double ms = 0.0;
};

struct ForgetProof {
  std::string event;
  int64_t recomputed_events = 0;
  int64_t recomputed_rows = 0;
  double recompute_ms = 0.0;
  bool verified = false;           // the two checks below ran
  bool value_independent = false;  // bit-identical rows when the event's tokens are changed
  bool equals_fresh = false;       // bit-identical to a fresh computation of the served events
  double verify_ms = 0.0;
};

struct ContractOptions {
  // Honour policies; off: every eviction is plain (the comparison the
  // contract is measured against).
  bool enforce = true;
  // Prove each verified forgetting (two extra computations of what follows
  // the forgotten event). Keeps the rows as computed before the first
  // eviction allocated, for the replays.
  bool verify = true;
  // Products of a reply's rows, as decoded and as replayed (a Rowwise
  // precision, so both are the same bits): kF32Rowwise exact, kInt8Rowwise
  // faster decode.
  compute::ActivationPrecision replies = compute::ActivationPrecision::kF32Rowwise;
};

// Tokens [begin, end) of a reply event that decode steps of several
// sessions computed with kInt8Panels products (compute/matmul.h); its other
// tokens took the replies' precision. Both are batch-independent, so a
// replay that computes each token as it was computed holds the same bits.
struct TokenRange {
  int64_t begin = 0;
  int64_t end = 0;
  bool operator==(const TokenRange&) const = default;
};

// From this many tokens in one run (a decode step's replies, a reply's
// header or its closing tokens), int8 replies multiply on the int8 panels:
// the many-token integer product, which the engine's kInt8 takes from the
// same count (decode steps of SmolLM2, 1 thread: 3 sessions 1.45x the
// rowwise dots' tokens/s on Zen 1 AVX2, 1.3-1.4x on Zen 5 AVX-512).
inline constexpr size_t kPanelStepReplies = 3;

// Which evictable event a budget evicts first: the lowest score. The
// default is recency (the event's index: oldest first).
using EvictionScorer = std::function<double(const kv::EventState& event, size_t index)>;

class ContractCache {
 public:
  ContractCache(std::shared_ptr<kv::Engine> engine, std::shared_ptr<kv::KvArena> arena,
                tokenizer::ChatFormat format, std::optional<Profile> profile,
                ContractOptions options = {});

  // Renders the events (the chat format's preamble first, on the first
  // call) and computes their rows globally. Throws Error on a duplicate id.
  void append(std::span<const AgentEvent> events);

  // The events' tokens as append() renders them: the chat format's
  // preamble first when the history is empty.
  std::vector<kv::EventTokens> render(std::span<const AgentEvent> events) const;

  // Appends one event with these exact tokens (a restored reply: the tokens
  // as generated, which rendering its content may not give back), those in
  // `panel_tokens` (sorted, not overlapping) computed with
  // kInt8Panels as the reply was. Throws Error for ranges out of order or
  // past the tokens.
  void append_rendered(const AgentEvent& event, std::vector<int32_t> tokens,
                       std::vector<TokenRange> panel_tokens = {});

  // Generation of an assistant reply as an event. open_reply appends the
  // event's header (the format's generation prompt) and returns the logits
  // after it; extend_replies feeds each cache's next token (one forward
  // pass for all: decode steps of concurrent sessions batched) and returns
  // the logits after it; close_reply feeds `pending` (the last sampled
  // token when it is not an end token) and the end of the turn, and sets
  // the event's content. Each run of kPanelStepReplies or more int8 reply
  // tokens (header, step, closing) takes the int8 panels. Throws Error
  // when the format has no generation prompt (its replies have no header
  // to open with).
  std::vector<float> open_reply(const AgentEvent& event);
  static std::vector<std::vector<float>> extend_replies(std::span<ContractCache* const> caches,
                                                        std::span<const int32_t> tokens);
  void close_reply(const std::string& content, std::optional<int32_t> pending);

  // Moves the retained rows to positions 0, 1, 2, ... (kv::EventKV::
  // reposition), so a history under a budget can go on past the context.
  // Refused with verify: the proofs compare with a computation at the
  // original positions.
  void reposition();

  // Evicts the events with the forget policy, whatever they were appended
  // with (verified forgetting on request); returns the decisions.
  std::vector<Decision> forget(std::span<const std::string> ids);

  // Evicts the events under the contract; returns the decisions taken.
  // Unknown, already evicted, pinned and record events are refused before
  // anything changes.
  std::vector<Decision> evict(std::span<const std::string> ids);

  // Evicts events (never pinned ones, the preamble or records) in scorer
  // order until the retained rows fit `budget_rows`, records included.
  // Returns the decisions; stops short when nothing evictable is left.
  std::vector<Decision> fit_budget(int64_t budget_rows, const EvictionScorer& scorer = {});

  // What a recall or forget fact's source event has become: "retained",
  // "record", "carrier", "forgotten" or "lost".
  std::string fact_state(std::string_view key) const;

  // Replays this history's appends and evictions on a new cache of the same
  // engine and arena under `options`, with the tokens of the events named in
  // `tokens` replaced (each keeps its length).
  ContractCache replay(const std::map<std::string, std::vector<int32_t>, std::less<>>& tokens,
                       ContractOptions options) const;

  // A cache sharing this one's rows (copied on write) and its contract
  // state; its own log and proofs start empty, and it replays nothing from
  // before the fork.
  ContractCache fork() const;

  // Tokens of event `id` with `content` in place of its content.
  std::vector<int32_t> render_content(std::string_view id, const std::string& content) const;

  // The event as appended (policy possibly changed by forget); nullptr for
  // the preamble and records.
  const AgentEvent* spec(std::string_view id) const;
  // A reply's tokens computed with kInt8Panels (empty for other events).
  const std::vector<TokenRange>& panel_tokens(std::string_view id) const;
  static bool is_record(std::string_view id);
  const kv::EventKV& kv() const { return kv_; }
  kv::EventKV& kv() { return kv_; }
  const tokenizer::ChatFormat& format() const { return format_; }
  const std::vector<Decision>& log() const { return log_; }
  const std::vector<ForgetProof>& proofs() const { return proofs_; }
  const std::optional<Profile>& profile() const { return profile_; }

 private:
  struct Operation {
    std::vector<AgentEvent> append;
    std::vector<std::string> evict;
    bool forget = false;      // evicted by forget(): with the forget policy
    bool rendered = false;    // one event appended with its exact tokens (a reply)
    bool reposition = false;  // the retained rows moved to positions 0, 1, 2, ...
  };

  void check_new_id(std::string_view id) const;
  void override_tokens(kv::EventTokens& event) const;
  int32_t event_index(std::string_view id) const;
  // Appends and computes the events (with the engine's products); `reply`
  // (one event, a reply's header): with those products, and the logits
  // after the last token are returned.
  std::vector<float> compute_appended(
      std::vector<kv::EventTokens> tokens,
      std::optional<compute::ActivationPrecision> reply = std::nullopt);
  // A reply event whose `panels` tokens take kInt8Panels products.
  void compute_reply(kv::EventTokens reply, const std::vector<TokenRange>& panels);
  // The products of one run of `tokens` reply tokens (a decode step's: one
  // token of each reply).
  compute::ActivationPrecision reply_products(size_t tokens) const;
  // Records the open reply's tokens [begin, end) as computed on the panels.
  void add_panel_tokens(int64_t begin, int64_t end);
  void track_visibility(size_t first_event);
  void refresh_visibility(size_t event);
  std::vector<std::string> descendants(size_t event) const;
  // Evicts the events and recomputes their descendants; returns those.
  std::vector<std::string> forget_events(const std::vector<std::string>& ids, ForgetProof& proof);
  void add_forget_decisions(const ForgetProof& proof, const std::vector<std::string>& ids,
                            std::vector<Decision>& decisions) const;
  bool start_from_pristine(const ContractCache& origin);
  void prove(ForgetProof& proof, const std::vector<std::string>& ids,
             const std::vector<std::string>& recomputed) const;
  bool equals_fresh(const std::vector<std::string>& recomputed) const;
  void keep_recall_facts(std::vector<Decision>& decisions);
  bool carrier_serves(const Fact& fact, size_t source, std::string* evidence) const;
  void check_evictable(std::span<const std::string> ids) const;
  std::vector<Decision> evict_events(std::span<const std::string> ids, bool forced_forget);

  std::shared_ptr<kv::Engine> engine_;
  std::shared_ptr<kv::KvArena> arena_;
  tokenizer::ChatFormat format_;
  std::optional<Profile> profile_;
  ContractOptions options_;
  kv::EventKV kv_;
  std::map<std::string, AgentEvent, std::less<>> specs_;     // by id
  std::map<std::string, std::string, std::less<>> records_;  // fact key -> record event id
  std::set<std::string, std::less<>> carried_;  // recall facts a certified carrier serves
  // Per event (kv_ index): the earlier events whose information its rows
  // may hold (those it attended to, and theirs, transitively).
  std::vector<std::vector<char>> saw_;
  std::map<std::string, std::vector<int32_t>, std::less<>> token_overrides_;
  // Events appended with exact tokens (replies): replays use them.
  std::map<std::string, std::vector<int32_t>, std::less<>> exact_tokens_;
  std::map<std::string, std::vector<TokenRange>, std::less<>> panel_tokens_;  // replies
  std::string open_reply_;  // id of the reply being generated, if any
  std::vector<Operation> operations_;
  // With verify: the history as computed before the first eviction (rows
  // shared, so evicted rows stay allocated while the cache lives), which
  // replays start from instead of computing everything again.
  std::optional<kv::EventKV> pristine_;
  std::vector<std::vector<char>> pristine_saw_;
  size_t pristine_operations_ = 0;
  std::vector<Decision> log_;
  std::vector<ForgetProof> proofs_;
};

// A query about a fact, scored against the served rows.
struct QueryResult {
  std::string fact;
  std::vector<double> log_probs;  // per candidate
  int predicted = 0;              // argmax (the first on ties)
  int truth = 0;                  // index of the fact's value
  bool answered() const { return predicted == truth; }
};

QueryResult ask(kv::EventKV& history, const tokenizer::ChatFormat& format, const FactQuery& query,
                const Fact& fact);

}  // namespace eventkv::contract
