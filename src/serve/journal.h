// Durable session state: each session's operations as an append-only
// journal of JSON records, one line each ("<fnv1a64 hex> <json>"), synced
// to disk before the operation is acknowledged, so a killed server loses
// nothing it confirmed. Restoring replays the records (the computation is
// deterministic). A snapshot is the journal up to a point in one file,
// closed by a line with the record count and a checksum of everything
// before it, written atomically.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace eventkv::serve {

class Journal {
 public:
  Journal() = default;  // in memory only (a temporary session)
  // Opens `path` for appending (creating it).
  explicit Journal(std::string path);
  ~Journal();
  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&& other) noexcept;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends the record and syncs it (when on disk); keeps it in memory.
  void append(const nlohmann::json& record);
  // Replaces every record (atomically on disk).
  void reset(std::vector<nlohmann::json> records);
  // Deletes the file (the session is gone).
  void remove();

  const std::vector<nlohmann::json>& records() const { return records_; }
  const std::string& path() const { return path_; }

 private:
  void open_for_append();
  void close();

  std::string path_;
  int fd_ = -1;
  std::vector<nlohmann::json> records_;
};

// Reads a journal: the records up to the first torn or corrupt line (a torn
// last line is a write the server never acknowledged). `warning` says what
// was dropped, if anything.
std::vector<nlohmann::json> read_journal(const std::string& path, std::string* warning);

// Snapshots: write_snapshot returns the file's size; read_snapshot throws
// Error naming the file when it is truncated or corrupt.
size_t write_snapshot(const std::string& path, const std::vector<nlohmann::json>& records);
std::vector<nlohmann::json> read_snapshot(const std::string& path);

}  // namespace eventkv::serve
