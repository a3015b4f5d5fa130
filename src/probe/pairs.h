// Donor pairs drawn from a scenario: two histories identical token for token
// but for the payload inside the source event (and inside the textual record
// of the `record` condition). Draws are deterministic in (seed, pair index),
// and every cell of a scenario (construction, distance) reuses the same
// draws, so cells differ only in what they vary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/render.h"
#include "kv/event_kv.h"
#include "probe/scenario.h"
#include "tokenizer/chat_format.h"

namespace eventkv::probe {

// What one cell of a scenario fixes.
struct Cell {
  std::string construction;  // "" when the scenario has no carrier
  int distance = 0;          // filler turns between the carriers and the query
};

std::vector<Cell> scenario_cells(const Scenario& scenario);

struct DonorPair {
  int64_t index = 0;
  std::vector<std::string> candidates;  // candidate values, in scoring order
  int value_a = 0;                      // index of A's value in candidates
  int value_b = 1;
  std::vector<events::Event> events_a;  // system?, source, carriers, fillers
  std::vector<events::Event> events_b;
  std::string record_a;  // the textual record of the source's value
  std::string record_b;
  std::string question;
  std::string answer_prefix;
};

inline constexpr const char* kSourceId = "source";

// The pair's texts; `attempt` > 0 redraws the payload values of a rejected pair.
DonorPair draw_pair(const Scenario& scenario, const Cell& cell, int64_t index, int attempt);

struct TokenizedPair {
  DonorPair texts;
  std::vector<kv::EventTokens> events_a;
  std::vector<kv::EventTokens> events_b;
  kv::EventTokens record_a;
  kv::EventTokens record_b;
  events::QueryTokens query;
  int64_t source_event = 0;           // index in events_*
  std::vector<std::string> carriers;  // carrier event ids
  int rejected = 0;                   // draws rejected before this one
};

// The first event outside the source whose id or tokens differ between the
// sides (an event only one side has counts), or -1 when A and B differ only
// in the source.
int64_t event_differing_outside_source(const TokenizedPair& pair);

// The pair of `texts` tokenized (`answer_format` makes the candidates'
// answers), unchecked: a pair as drawn, or as the results database stores it.
TokenizedPair tokenize_texts(DonorPair texts, const std::string& answer_format,
                             const tokenizer::ChatFormat& format, const tokenizer::Tokenizer& tok);

// Draws and tokenizes a pair, redrawing the payload (up to 20 times) when the
// two sides would differ anywhere but inside the source (or the record), or
// in length. Throws Error when no draw fits.
TokenizedPair tokenize_pair(const Scenario& scenario, const Cell& cell, int64_t index,
                            const tokenizer::ChatFormat& format, const tokenizer::Tokenizer& tok);

}  // namespace eventkv::probe
