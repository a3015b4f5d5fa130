// A donor pair as the results database stores it (store::PairRecord), and
// back: its texts, the token ranges of its events and its scores.
#pragma once

#include <string>

#include "probe/conditions.h"
#include "probe/pairs.h"
#include "store/results_db.h"

namespace eventkv::probe {

store::PairRecord pair_record(const TokenizedPair& pair, const Cell& cell,
                              const PairScores& scores);

// Both sides' events, the records, the question and the answer prefix.
std::string texts_json(const DonorPair& texts);

// {"a": [{"id", "start", "end"}, ...], "b": [...]}: where each event of
// each side lies in its history, in tokens (end exclusive).
std::string spans_json(const TokenizedPair& pair);

// The texts pair_record stored, to tokenize again (tokenize_texts); throws
// Error naming `what` when they are not what pair_record writes.
DonorPair stored_texts(const store::PairRecord& record, const std::string& what);

}  // namespace eventkv::probe
