#include "kv/snapshot.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <vector>

#include "util/atomic_file.h"
#include "util/byte_writer.h"
#include "util/error.h"
#include "util/hash.h"

namespace eventkv::kv {
namespace {

constexpr char kMagic[8] = {'E', 'K', 'V', 'S', 'N', 'A', 'P', '1'};
// 2: K and V widths per layer; 1 (one width for all layers) is still read,
// so a server's state directory survives the upgrade.
constexpr uint32_t kVersion = 2;

// Snapshot strings: a u32 length, then the bytes.
void put_string(ByteWriter& w, const std::string& text) {
  w.put<uint32_t>(static_cast<uint32_t>(text.size()));
  w.put_bytes(text.data(), text.size());
}

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  template <typename T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  const uint8_t* take(size_t n) {
    if (n > bytes_.size() - pos_)
      fail(path_, ": snapshot is truncated or corrupt (at byte ", pos_, ")");
    const uint8_t* start = bytes_.data() + pos_;
    pos_ += n;
    return start;
  }
  std::string get_string() {
    const auto length = get<uint32_t>();
    const uint8_t* start = take(length);
    return {reinterpret_cast<const char*>(start), length};
  }
  // A count of items of at least `item_bytes` each, checked against what is left.
  uint32_t get_count(size_t item_bytes, const char* what) {
    const auto count = get<uint32_t>();
    if (static_cast<uint64_t>(count) * item_bytes > bytes_.size() - pos_)
      fail(path_, ": snapshot ", what, " count ", count, " is corrupt");
    return count;
  }
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& path_;
  size_t pos_ = 0;
};

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open snapshot");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

void save_snapshot(const EventKV& history, const std::string& path) {
  const compute::KvStorage& storage = history.arena().storage();
  ByteWriter w;
  w.put_bytes(kMagic, sizeof(kMagic));
  w.put<uint32_t>(kVersion);
  w.put<uint64_t>(history.engine().model().fingerprint());
  w.put<uint32_t>(static_cast<uint32_t>(storage.type()));
  w.put<uint32_t>(static_cast<uint32_t>(storage.n_layer()));
  for (int64_t il = 0; il < storage.n_layer(); ++il) {
    w.put<uint32_t>(static_cast<uint32_t>(storage.k_dim(il)));
    w.put<uint32_t>(static_cast<uint32_t>(storage.v_dim(il)));
  }
  w.put<uint32_t>(static_cast<uint32_t>(history.events().size()));
  for (const EventState& e : history.events()) {
    put_string(w, e.id);
    put_string(w, e.role);
    w.put<int32_t>(e.begin);
    w.put<uint8_t>(e.retained ? 1 : 0);
    w.put<uint32_t>(static_cast<uint32_t>(e.tokens.size()));
    w.put_bytes(e.tokens.data(), e.tokens.size() * sizeof(int32_t));
  }
  w.put<uint32_t>(static_cast<uint32_t>(history.slots().size()));
  for (const EventKV::Slot& slot : history.slots()) {
    w.put<int32_t>(slot.position);
    w.put<int32_t>(slot.event);
    w.put<uint8_t>(slot.cell >= 0 ? 1 : 0);
  }
  for (const EventKV::Slot& slot : history.slots()) {
    if (slot.cell < 0) continue;
    for (int64_t il = 0; il < storage.n_layer(); ++il) {
      w.put_bytes(storage.k_bytes(il, slot.cell), storage.k_row_bytes(il));
      w.put_bytes(storage.v_bytes(il, slot.cell), storage.v_row_bytes(il));
    }
  }
  w.put<uint64_t>(fnv1a64(w.bytes()));
  write_file_atomic(path, w.bytes());
}

EventKV load_snapshot(const std::string& path, std::shared_ptr<Engine> engine,
                      std::shared_ptr<KvArena> arena) {
  const std::vector<uint8_t> bytes = read_file(path);
  if (bytes.size() < sizeof(kMagic) + sizeof(uint64_t) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    fail(path, ": not an eventkv snapshot");
  }
  const std::span<const uint8_t> body(bytes.data(), bytes.size() - sizeof(uint64_t));
  uint64_t checksum;
  std::memcpy(&checksum, bytes.data() + body.size(), sizeof(checksum));
  if (fnv1a64(body) != checksum) fail(path, ": snapshot checksum mismatch (truncated or corrupt)");
  Reader r(body, path);
  r.take(sizeof(kMagic));
  const auto version = r.get<uint32_t>();
  if (version != 1 && version != kVersion) fail(path, ": unsupported snapshot version");
  if (r.get<uint64_t>() != engine->model().fingerprint())
    fail(path, ": snapshot was made with a different model");
  const compute::KvStorage& storage = arena->storage();
  const auto type = r.get<uint32_t>();
  bool same_layout = type == static_cast<uint32_t>(storage.type()) &&
                     r.get<uint32_t>() == static_cast<uint32_t>(storage.n_layer());
  const auto uniform_k = version == 1 ? r.get<uint32_t>() : 0;
  const auto uniform_v = version == 1 ? r.get<uint32_t>() : 0;
  for (int64_t il = 0; same_layout && il < storage.n_layer(); ++il) {
    same_layout =
        (version == 1 ? uniform_k : r.get<uint32_t>()) ==
            static_cast<uint32_t>(storage.k_dim(il)) &&
        (version == 1 ? uniform_v : r.get<uint32_t>()) == static_cast<uint32_t>(storage.v_dim(il));
  }
  if (!same_layout)
    fail(path, ": snapshot KV layout (type, layers, dims) differs from this cache's");
  std::vector<EventState> events(r.get_count(13, "event"));
  for (EventState& e : events) {
    e.id = r.get_string();
    e.role = r.get_string();
    e.begin = r.get<int32_t>();
    e.retained = r.get<uint8_t>() != 0;
    e.tokens.resize(r.get_count(sizeof(int32_t), "token"));
    std::memcpy(e.tokens.data(), r.take(e.tokens.size() * sizeof(int32_t)),
                e.tokens.size() * sizeof(int32_t));
  }
  std::vector<EventKV::Slot> slots(r.get_count(9, "slot"));
  std::vector<uint8_t> has_row(slots.size());
  for (size_t s = 0; s < slots.size(); ++s) {
    slots[s].position = r.get<int32_t>();
    slots[s].event = r.get<int32_t>();
    has_row[s] = r.get<uint8_t>();
    if (slots[s].event < 0 || static_cast<size_t>(slots[s].event) >= events.size())
      fail(path, ": snapshot slot ", s, " names no event");
  }
  int32_t next_slot = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].begin != next_slot || events[i].end() > static_cast<int32_t>(slots.size())) {
      fail(path, ": snapshot event '", events[i].id, "' does not follow its predecessor");
    }
    for (int32_t s = events[i].begin; s < events[i].end(); ++s) {
      if (slots[static_cast<size_t>(s)].event != static_cast<int32_t>(i))
        fail(path, ": snapshot slot ", s, " names the wrong event");
    }
    next_slot = events[i].end();
  }
  if (next_slot != static_cast<int32_t>(slots.size()))
    fail(path, ": snapshot slots and events disagree");
  size_t n_rows = 0;
  for (const uint8_t row : has_row) n_rows += row;
  if (static_cast<int64_t>(n_rows) > storage.capacity() - arena->cells_in_use()) {
    fail(path, ": snapshot holds ", n_rows, " rows, more than the cache has room for");
  }
  std::vector<int32_t> cells;
  try {
    for (size_t s = 0; s < slots.size(); ++s) {
      if (!has_row[s]) continue;
      slots[s].cell = arena->allocate();
      cells.push_back(slots[s].cell);
      for (int64_t il = 0; il < storage.n_layer(); ++il) {
        std::memcpy(arena->storage().k_bytes_mut(il, slots[s].cell),
                    r.take(storage.k_row_bytes(il)), storage.k_row_bytes(il));
        std::memcpy(arena->storage().v_bytes_mut(il, slots[s].cell),
                    r.take(storage.v_row_bytes(il)), storage.v_row_bytes(il));
      }
    }
    if (!r.at_end()) fail(path, ": snapshot has trailing bytes");
  } catch (...) {
    for (const int32_t cell : cells) arena->release(cell);
    throw;
  }
  return EventKV::adopt(std::move(engine), std::move(arena), std::move(events), std::move(slots));
}

}  // namespace eventkv::kv
