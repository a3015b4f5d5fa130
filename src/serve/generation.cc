#include "serve/generation.h"

namespace eventkv::serve {

Generation::Generation(Session& session, std::string event_id, sampling::GenerateParams params)
    : session_(session),
      params_(std::move(params)),
      sampler_(params_.sampling),
      reply_(session.cache().kv().engine().model().tokenizer(), params_.stop) {
  result_.event_id = std::move(event_id);
}

void Generation::start(const std::shared_ptr<Generation>& self, Scheduler& scheduler,
                       int64_t computed) {
  const int64_t before = session_.positions();
  std::vector<float> logits = session_.open_reply(result_.event_id);
  session_.set_busy(true);
  result_.prompt_tokens = session_.cache().kv().retained_rows();
  result_.cached_tokens = result_.prompt_tokens - computed - (session_.positions() - before);
  if (params_.max_tokens == 0 || take(sampler_.sample(logits))) {
    finish(nullptr);
    return;
  }
  scheduler.add_decode(self);
}

bool Generation::take(int32_t token) {
  pending_ = token;
  ++result_.completion_tokens;
  push(reply_.add(token));
  // A margin for the end of the turn, which the reply still needs.
  constexpr int64_t kTurnEnd = 8;
  return reply_.done() || result_.completion_tokens >= params_.max_tokens || cancelled_ ||
         session_.positions() + kTurnEnd >= session_.context();
}

bool Generation::step(std::span<const float> logits) {
  return take(sampler_.sample(logits));
}

void Generation::finish(std::exception_ptr error) {
  const bool ended_by_token =
      reply_.done() && reply_.reason() == sampling::StopReason::kEndOfGeneration;
  push(reply_.finish(sampling::StopReason::kMaxTokens));
  result_.finish_reason = reply_.reason() == sampling::StopReason::kMaxTokens ? "length" : "stop";
  result_.text = reply_.text();
  std::optional<int32_t> fed;
  if (pending_ >= 0 && !ended_by_token) fed = pending_;
  try {
    result_.decisions = session_.close_reply(result_.text, fed);
    result_.event_tokens =
        static_cast<int64_t>(session_.cache().kv().event(result_.event_id).tokens.size());
  } catch (...) {
    if (!error) error = std::current_exception();
  }
  session_.set_busy(false);
  {
    const std::lock_guard lock(mutex_);
    ended_ = true;
    error_ = error;
  }
  changed_.notify_all();
}

void Generation::push(std::string piece) {
  if (piece.empty()) return;
  {
    const std::lock_guard lock(mutex_);
    pieces_.push_back(std::move(piece));
  }
  changed_.notify_all();
}

bool Generation::next_piece(std::string* piece) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !pieces_.empty() || ended_; });
  if (pieces_.empty()) return false;
  *piece = std::move(pieces_.front());
  pieces_.pop_front();
  return true;
}

const GenerationResult& Generation::result() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return ended_; });
  if (error_) std::rethrow_exception(error_);
  return result_;
}

}  // namespace eventkv::serve
