// A reply being generated into a session: opened by a job (its header
// prefilled, the first token sampled), stepped by the scheduler's batched
// decode, closed as an assistant event of the session. The HTTP thread
// reads its text as it becomes final and waits for its end.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sampling/generate.h"
#include "serve/scheduler.h"
#include "serve/session.h"

namespace eventkv::serve {

struct GenerationResult {
  std::string event_id;
  std::string text;
  std::string finish_reason;                  // "stop" or "length"
  int64_t completion_tokens = 0;              // tokens sampled, an end token included
  int64_t prompt_tokens = 0;                  // retained rows the reply read (its header included)
  int64_t cached_tokens = 0;                  // of those, rows this request did not compute
  int64_t event_tokens = 0;                   // the reply event's tokens
  std::vector<contract::Decision> decisions;  // the budget fitted after the reply
};

class Generation : public DecodeTask {
 public:
  Generation(Session& session, std::string event_id, sampling::GenerateParams params);

  // On the engine thread: opens the reply; `computed` is how many rows this
  // request prefilled before (its new events). Hands itself to `scheduler`
  // unless it ended at once.
  void start(const std::shared_ptr<Generation>& self, Scheduler& scheduler, int64_t computed);

  contract::ContractCache& cache() override { return session_.cache(); }
  int32_t pending() const override { return pending_; }
  bool step(std::span<const float> logits) override;
  void finish(std::exception_ptr error) override;

  // HTTP thread: the next final piece of text; false once the reply ended
  // (then result() holds it, or throws what failed it).
  bool next_piece(std::string* piece);
  const GenerationResult& result();
  // The client went away: end at the next step.
  void cancel() { cancelled_ = true; }

 private:
  bool take(int32_t token);  // true when the reply is done
  void push(std::string piece);

  Session& session_;
  sampling::GenerateParams params_;
  sampling::Sampler sampler_;
  sampling::ReplyText reply_;
  GenerationResult result_;
  int32_t pending_ = -1;
  std::atomic<bool> cancelled_{false};

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> pieces_;
  bool ended_ = false;
  std::exception_ptr error_;
};

}  // namespace eventkv::serve
