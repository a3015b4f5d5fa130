#include "serve/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/hash.h"

namespace eventkv::serve {
namespace {

uint64_t checksum(std::string_view text) {
  return fnv1a64({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

std::string hex(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string record_line(const nlohmann::json& record) {
  const std::string text = record.dump();
  std::string line = hex(checksum(text));
  line += ' ';
  line += text;
  line += '\n';
  return line;
}

// The record of one line, or nothing when the line is corrupt.
bool parse_line(const std::string& line, nlohmann::json* record) {
  if (line.size() < 18 || line[16] != ' ') return false;
  const std::string_view text(line.data() + 17, line.size() - 17);
  if (hex(checksum(text)) != line.substr(0, 16)) return false;
  *record = nlohmann::json::parse(text, nullptr, false);
  return !record->is_discarded();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr const char* kSnapshotEnd = "#end ";

}  // namespace

Journal::Journal(std::string path) : path_(std::move(path)) {
  open_for_append();
}

Journal::~Journal() {
  close();
}

Journal::Journal(Journal&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), records_(std::move(other.records_)) {
  other.fd_ = -1;
}

Journal& Journal::operator=(Journal&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    records_ = std::move(other.records_);
    other.fd_ = -1;
  }
  return *this;
}

void Journal::open_for_append() {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, ": cannot open for writing: ", std::strerror(errno));
}

void Journal::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Journal::append(const nlohmann::json& record) {
  if (fd_ >= 0) {
    const std::string line = record_line(record);
    size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(path_, ": write failed: ", std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    if (::fdatasync(fd_) != 0) fail(path_, ": sync failed: ", std::strerror(errno));
  }
  records_.push_back(record);
}

void Journal::reset(std::vector<nlohmann::json> records) {
  if (!path_.empty()) {
    std::string text;
    for (const nlohmann::json& record : records) text += record_line(record);
    close();
    write_file_atomic(path_, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
    open_for_append();
  }
  records_ = std::move(records);
}

void Journal::remove() {
  close();
  if (!path_.empty()) std::remove(path_.c_str());
  records_.clear();
}

std::vector<nlohmann::json> read_journal(const std::string& path, std::string* warning) {
  std::istringstream in(read_text(path));
  std::vector<nlohmann::json> records;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json record;
    // A line without its newline was cut by the kill: never acknowledged.
    if (in.eof() || !parse_line(line, &record)) {
      *warning = str_cat(path, ": record ", records.size() + 1,
                         in.eof() ? " is incomplete" : " is corrupt", "; restored the ",
                         records.size(), " before it");
      break;
    }
    records.push_back(std::move(record));
  }
  return records;
}

size_t write_snapshot(const std::string& path, const std::vector<nlohmann::json>& records) {
  std::string text;
  for (const nlohmann::json& record : records) text += record_line(record);
  text += str_cat(kSnapshotEnd, records.size(), " ", hex(checksum(text)), "\n");
  write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  return text.size();
}

std::vector<nlohmann::json> read_snapshot(const std::string& path) {
  const std::string text = read_text(path);
  const size_t end = text.rfind(kSnapshotEnd);
  if (end == std::string::npos || (end > 0 && text[end - 1] != '\n'))
    fail(path, ": not a complete snapshot (no end line)");
  std::istringstream footer(text.substr(end + std::strlen(kSnapshotEnd)));
  size_t count = 0;
  std::string sum;
  footer >> count >> sum;
  const std::string body = text.substr(0, end);
  if (sum != hex(checksum(body))) fail(path, ": snapshot checksum mismatch (corrupt)");
  std::istringstream in(body);
  std::vector<nlohmann::json> records;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json record;
    if (!parse_line(line, &record)) fail(path, ": record ", records.size() + 1, " is corrupt");
    records.push_back(std::move(record));
  }
  if (records.size() != count)
    fail(path, ": ", records.size(), " records, the end line says ", count);
  return records;
}

}  // namespace eventkv::serve
