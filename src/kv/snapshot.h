// Saving and loading an event KV state: events, slots and every retained
// row, tagged with the model's fingerprint and closed by a checksum. Writes
// are atomic (temporary file, then rename); a snapshot of another model, a
// truncated or a corrupted file is refused with an Error naming the file.
#pragma once

#include <memory>
#include <string>

#include "kv/event_kv.h"

namespace eventkv::kv {

void save_snapshot(const EventKV& history, const std::string& path);

// Restores into `arena` (which must have room and the same KV type).
EventKV load_snapshot(const std::string& path, std::shared_ptr<Engine> engine,
                      std::shared_ptr<KvArena> arena);

}  // namespace eventkv::kv
