#include "store/sqlite.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>

#include "util/error.h"

namespace eventkv::store {
namespace {

sqlite3* open_connection(const std::string& name, int flags, const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(name.c_str(), &db, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    const std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    fail(path, ": cannot open database: ", message);
  }
  sqlite3_busy_timeout(db, 10000);
  return db;
}

// False when a read-only connection cannot read at all: a WAL database in a
// folder this process cannot write (read-only media, say) has no -shm file
// for its readers, nor can it be made.
bool can_read(sqlite3* db) {
  const int rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  return (rc & 0xff) != SQLITE_READONLY && (rc & 0xff) != SQLITE_CANTOPEN;
}

// `path` as the path of an SQLite URI: the characters a URI gives a meaning escaped.
std::string uri_path(const std::string& path) {
  std::string out;
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      out += str_cat('%', std::hex, static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out;
}

sqlite3* open_read_only(const std::string& path) {
  sqlite3* db = open_connection(path, SQLITE_OPEN_READONLY, path);
  if (can_read(db)) return db;
  sqlite3_close(db);
  // Where no -shm file can be made, nothing else can write the file either,
  // which is what `immutable` promises SQLite. Writes left in a -wal file
  // would go unseen that way.
  std::error_code error;
  const uintmax_t wal_bytes = std::filesystem::file_size(path + "-wal", error);
  if (!error && wal_bytes > 0) {
    fail(path, ": read-only, with writes not yet merged from its -wal file: open it once where ",
         "it is writable");
  }
  return open_connection("file:" + uri_path(path) + "?immutable=1",
                         SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, path);
}

}  // namespace

Database::Database(const std::string& path, Access access)
    : path_(path),
      db_(access == Access::kReadOnly
              ? open_read_only(path)
              : open_connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path)) {
  // Only a setting of this connection: it reads and writes nothing.
  sqlite3_exec(db_, "PRAGMA foreign_keys=ON", nullptr, nullptr, nullptr);
}

Database::~Database() {
  sqlite3_close(db_);
}

void Database::fail_with(std::string_view what) const {
  fail(path_, ": ", what, ": ", sqlite3_errmsg(db_));
}

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    fail(path_, ": ", message);
  }
}

int64_t Database::last_insert_id() const {
  return sqlite3_last_insert_rowid(db_);
}

int Database::error_code() const {
  return sqlite3_errcode(db_) & 0xff;
}

Statement::Statement(Database& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    db.fail_with("cannot prepare statement");
  }
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_.fail_with("bind");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) db_.fail_with("bind");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    db_.fail_with("bind");
  }
  return *this;
}

Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) db_.fail_with("bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail_with("statement failed");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
}

int64_t Statement::column_int(int index) const {
  return sqlite3_column_int64(stmt_, index);
}
double Statement::column_double(int index) const {
  return sqlite3_column_double(stmt_, index);
}
bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

Transaction::Transaction(Database& db) : db_(db) {
  db_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) {
    char* error = nullptr;
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, &error);
    sqlite3_free(error);
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace eventkv::store
