#include "store/sqlite.h"

#include <sqlite3.h>

#include "util/error.h"

namespace eventkv::store {

Database::Database(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    fail(path, ": cannot open database: ", message);
  }
  sqlite3_busy_timeout(db_, 10000);
  exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
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
