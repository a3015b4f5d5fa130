// A thin RAII layer over SQLite: a connection, prepared statements with
// positional binds, and transactions. Every failure throws Error with the
// database path and SQLite's message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace eventkv::store {

class Database;

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind_null(int index);

  // Advances to the next row; false when done. Non-row statements run once.
  bool step();
  void run();    // step() to completion, then reset() for reuse
  void reset();  // keeps bindings

  int64_t column_int(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  bool column_is_null(int index) const;

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// kReadWrite creates the file when absent (its parent folder must exist);
// kReadOnly never writes to it.
enum class Access { kReadWrite, kReadOnly };

class Database {
 public:
  // Opens the file with foreign keys on. The journal mode is the file's own:
  // ResultsDb switches a database it writes to WAL.
  explicit Database(const std::string& path, Access access = Access::kReadWrite);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(std::string_view sql);
  int64_t last_insert_id() const;
  // SQLite's primary result code of the last failure (SQLITE_NOTADB, ...).
  int error_code() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }
  [[noreturn]] void fail_with(std::string_view what) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// Commits on commit(); rolls back if destroyed first (an exception unwound).
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace eventkv::store
