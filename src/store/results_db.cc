#include "store/results_db.h"

#include <sqlite3.h>

#include <charconv>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace eventkv::store {
namespace {

// SET clause of a resumed run: appends the resuming version (parameter ?3)
// to git_version unless it is already listed.
constexpr const char* kAddVersion =
    "git_version = CASE WHEN instr(' ' || git_version || ' ', ' ' || ?3 || ' ') > 0 "
    "THEN git_version ELSE git_version || ' ' || ?3 END";

// SET clause of a resumed run: appends the resuming kernels (?4) and build
// (?5) to isa and build unless they are already listed.
constexpr const char* kAddBuild =
    "isa = CASE WHEN isa = '' THEN ?4 WHEN instr(' | ' || isa || ' | ', ' | ' || ?4 || ' | ') > 0 "
    "THEN isa ELSE isa || ' | ' || ?4 END, "
    "build = CASE WHEN build = '' THEN ?5 WHEN instr(' | ' || build || ' | ', ' | ' || ?5 || ' | "
    "') "
    "> 0 THEN build ELSE build || ' | ' || ?5 END";

// The path, once its folder exists (for writing) or the file does (for reading).
std::string prepared(const std::string& path, Access access) {
  if (access == Access::kReadOnly) {
    if (!std::filesystem::exists(path)) fail(path, ": no such results database");
    return path;
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  return path;
}

// Whether `path` is no database yet: absent or empty.
bool is_new(const std::string& path) {
  std::error_code error;
  return std::filesystem::file_size(path, error) == 0 || error;
}

// The schema version of the eventkv results database `db`, read before
// anything is written to it; any other file is refused as it is.
int stored_schema_version(Database& db) {
  const auto refuse = [&db] { fail(db.path(), ": not an eventkv results database"); };
  int64_t tables = 0;
  try {
    Statement select(db,
                     "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                     "('meta', 'runs', 'pairs', 'scores')");
    select.step();
    tables = select.column_int(0);
  } catch (const Error&) {
    if (db.error_code() == SQLITE_NOTADB) refuse();
    throw;
  }
  if (tables != 4) refuse();
  Statement select(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!select.step()) refuse();
  const std::string text = select.column_text(0);
  int version = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (error != std::errc() || end != text.data() + text.size() || version < 1) refuse();
  if (version > kSchemaVersion) {
    fail(db.path(), ": results database of schema version ", version,
         ", newer than this eventkv knows (", kSchemaVersion, "): use a newer eventkv");
  }
  return version;
}

// Columns added since schema 1, all TEXT NOT NULL DEFAULT '': a database
// opened for writing gains those it lacks; read-only, they read as ''.
struct AddedColumn {
  const char* table;
  const char* column;
};
constexpr AddedColumn kAddedColumns[] = {
    {"runs", "isa"},         {"runs", "build"},
    {"landing_runs", "isa"}, {"landing_runs", "build"},      // schema 2
    {"runs", "chat_format"}, {"pairs", "spans"},             // schema 3
    {"runs", "precision"},   {"landing_runs", "precision"},  // schema 4: '' is exact
};

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  model_name TEXT NOT NULL, model_path TEXT NOT NULL, model_fingerprint TEXT NOT NULL,
  scenario_name TEXT NOT NULL, scenario_suite TEXT NOT NULL, scenario_finding TEXT NOT NULL,
  scenario_hash TEXT NOT NULL, scenario_json TEXT NOT NULL, payload_type TEXT NOT NULL,
  git_version TEXT NOT NULL, seed INTEGER NOT NULL, threads INTEGER NOT NULL, n_pairs INTEGER NOT NULL,
  shard_index INTEGER NOT NULL, shard_count INTEGER NOT NULL,
  started_at TEXT NOT NULL, finished_at TEXT NOT NULL DEFAULT '', wall_seconds REAL NOT NULL DEFAULT 0,
  status TEXT NOT NULL, isa TEXT NOT NULL DEFAULT '', build TEXT NOT NULL DEFAULT '',
  chat_format TEXT NOT NULL DEFAULT '', precision TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS pairs (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  pair_index INTEGER NOT NULL, construction TEXT NOT NULL, distance INTEGER NOT NULL,
  value_a INTEGER NOT NULL, value_b INTEGER NOT NULL, candidates TEXT NOT NULL, texts TEXT NOT NULL,
  n_tokens INTEGER NOT NULL, rejected INTEGER NOT NULL, spans TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, pair_index, construction, distance));
CREATE TABLE IF NOT EXISTS scores (
  run_id INTEGER NOT NULL, pair_index INTEGER NOT NULL, construction TEXT NOT NULL, distance INTEGER NOT NULL,
  condition TEXT NOT NULL, side TEXT NOT NULL, candidate INTEGER NOT NULL, log_prob REAL NOT NULL,
  PRIMARY KEY (run_id, pair_index, construction, distance, condition, side, candidate),
  FOREIGN KEY (run_id, pair_index, construction, distance)
    REFERENCES pairs(run_id, pair_index, construction, distance) ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS landing_runs (
  id INTEGER PRIMARY KEY,
  model_name TEXT NOT NULL, model_fingerprint TEXT NOT NULL, scenario_name TEXT NOT NULL,
  scenario_hash TEXT NOT NULL, construction TEXT NOT NULL, distance INTEGER NOT NULL, seed INTEGER NOT NULL,
  n_pairs INTEGER NOT NULL, git_version TEXT NOT NULL, events TEXT NOT NULL,
  started_at TEXT NOT NULL, finished_at TEXT NOT NULL DEFAULT '', wall_seconds REAL NOT NULL DEFAULT 0,
  status TEXT NOT NULL, isa TEXT NOT NULL DEFAULT '', build TEXT NOT NULL DEFAULT '',
  precision TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS landing_measures (
  landing_id INTEGER NOT NULL REFERENCES landing_runs(id) ON DELETE CASCADE,
  pair_index INTEGER NOT NULL, stage INTEGER NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
  value REAL NOT NULL, outcome TEXT NOT NULL,
  PRIMARY KEY (landing_id, pair_index, kind, target));
)sql";

// The columns of runs every schema has, then those added since (kAddedColumns).
constexpr const char* kRunColumns =
    "model_name, model_path, model_fingerprint, scenario_name, scenario_suite, scenario_finding, "
    "scenario_hash, scenario_json, payload_type, git_version, seed, threads, n_pairs, "
    "shard_index, shard_count, started_at, finished_at, wall_seconds, status";
constexpr const char* kRunAddedColumns = "isa, build, chat_format, precision";

// A stored precision: runs from before schema 4 were all exact.
std::string stored_precision(const std::string& text) {
  return text.empty() ? "exact" : text;
}

// A run's precision in SQL, '' (before schema 4) read as exact.
constexpr const char* kPrecision = "(CASE precision WHEN '' THEN 'exact' ELSE precision END)";

RunRecord read_run(const Statement& s) {
  RunRecord r;
  r.id = s.column_int(0);
  r.model_name = s.column_text(1);
  r.model_path = s.column_text(2);
  r.model_fingerprint = s.column_text(3);
  r.scenario_name = s.column_text(4);
  r.scenario_suite = s.column_text(5);
  r.scenario_finding = s.column_text(6);
  r.scenario_hash = s.column_text(7);
  r.scenario_json = s.column_text(8);
  r.payload_type = s.column_text(9);
  r.git_version = s.column_text(10);
  r.seed = static_cast<uint64_t>(s.column_int(11));
  r.threads = static_cast<int>(s.column_int(12));
  r.n_pairs = s.column_int(13);
  r.shard_index = static_cast<int>(s.column_int(14));
  r.shard_count = static_cast<int>(s.column_int(15));
  r.started_at = s.column_text(16);
  r.finished_at = s.column_text(17);
  r.wall_seconds = s.column_double(18);
  r.status = s.column_text(19);
  r.isa = s.column_text(20);
  r.build = s.column_text(21);
  r.chat_format = s.column_text(22);
  r.precision = stored_precision(s.column_text(23));
  return r;
}

int64_t insert_run(Database& db, const RunRecord& r) {
  Statement insert(db,
                   str_cat("INSERT INTO runs (", kRunColumns, ", ", kRunAddedColumns,
                           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                           "?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)"));
  insert.bind(1, r.model_name)
      .bind(2, r.model_path)
      .bind(3, r.model_fingerprint)
      .bind(4, r.scenario_name);
  insert.bind(5, r.scenario_suite)
      .bind(6, r.scenario_finding)
      .bind(7, r.scenario_hash)
      .bind(8, r.scenario_json);
  insert.bind(9, r.payload_type).bind(10, r.git_version).bind(11, static_cast<int64_t>(r.seed));
  insert.bind(12, static_cast<int64_t>(r.threads))
      .bind(13, r.n_pairs)
      .bind(14, static_cast<int64_t>(r.shard_index));
  insert.bind(15, static_cast<int64_t>(r.shard_count))
      .bind(16, r.started_at)
      .bind(17, r.finished_at);
  insert.bind(18, r.wall_seconds).bind(19, r.status).bind(20, r.isa).bind(21, r.build);
  insert.bind(22, r.chat_format).bind(23, r.precision);
  insert.run();
  return db.last_insert_id();
}

void insert_pair(Database& db, int64_t run_id, const PairRecord& pair) {
  Statement insert(db,
                   "INSERT INTO pairs (run_id, pair_index, construction, distance, value_a, "
                   "value_b, candidates, texts, n_tokens, rejected, spans) VALUES (?1, ?2, ?3, ?4, "
                   "?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  insert.bind(1, run_id)
      .bind(2, pair.pair_index)
      .bind(3, pair.construction)
      .bind(4, static_cast<int64_t>(pair.distance));
  insert.bind(5, static_cast<int64_t>(pair.value_a)).bind(6, static_cast<int64_t>(pair.value_b));
  insert.bind(7, nlohmann::json(pair.candidates).dump())
      .bind(8, pair.texts_json)
      .bind(9, pair.n_tokens);
  insert.bind(10, static_cast<int64_t>(pair.rejected)).bind(11, pair.spans_json);
  insert.run();
  Statement score(db, "INSERT INTO scores VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  score.bind(1, run_id)
      .bind(2, pair.pair_index)
      .bind(3, pair.construction)
      .bind(4, static_cast<int64_t>(pair.distance));
  for (const auto& [condition, sides] : pair.conditions) {
    for (const auto& [side, record] :
         {std::pair{"A", &sides.first}, std::pair{"B", &sides.second}}) {
      for (size_t c = 0; c < record->log_probs.size(); ++c) {
        score.bind(5, condition)
            .bind(6, std::string_view(side))
            .bind(7, static_cast<int64_t>(c))
            .bind(8, record->log_probs[c]);
        score.run();
      }
    }
  }
}

int64_t insert_landing(Database& db, const LandingRunRecord& r) {
  Statement insert(
      db,
      "INSERT INTO landing_runs (model_name, model_fingerprint, scenario_name, scenario_hash, "
      "construction, distance, seed, n_pairs, git_version, events, started_at, finished_at, "
      "wall_seconds, status, isa, build, precision) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
      "?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)");
  insert.bind(1, r.model_name).bind(2, r.model_fingerprint).bind(3, r.scenario_name);
  insert.bind(4, r.scenario_hash).bind(5, r.construction).bind(6, static_cast<int64_t>(r.distance));
  insert.bind(7, static_cast<int64_t>(r.seed)).bind(8, r.n_pairs).bind(9, r.git_version);
  insert.bind(10, r.events_json).bind(11, r.started_at).bind(12, r.finished_at);
  insert.bind(13, r.wall_seconds).bind(14, r.status).bind(15, r.isa).bind(16, r.build);
  insert.bind(17, r.precision);
  insert.run();
  return db.last_insert_id();
}

// The one time format of the database: UTC to the second.
constexpr const char* kIso8601 = "%Y-%m-%dT%H:%M:%SZ";

}  // namespace

std::string now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), kIso8601, &utc);
  return buffer;
}

std::optional<int64_t> iso8601_seconds(const std::string& text) {
  std::tm utc{};
  const char* end = strptime(text.c_str(), kIso8601, &utc);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(timegm(&utc));
}

ResultsDb::ResultsDb(const std::string& path, Access access) : db_(prepared(path, access), access) {
  const bool empty = access == Access::kReadWrite && is_new(path);
  schema_version_ = empty ? 0 : stored_schema_version(db_);
  if (access == Access::kReadOnly) return;
  db_.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  if (schema_version_ < kSchemaVersion) update_schema();
}

void ResultsDb::update_schema() {
  Transaction transaction(db_);
  db_.exec(kSchema);
  for (const AddedColumn& added : kAddedColumns) {
    if (column_or_blank(added.table, added.column) == "''") {
      db_.exec(str_cat("ALTER TABLE ", added.table, " ADD COLUMN ", added.column,
                       " TEXT NOT NULL DEFAULT ''"));
    }
  }
  Statement version(db_, "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?1)");
  version.bind(1, std::to_string(kSchemaVersion)).run();
  transaction.commit();
  schema_version_ = kSchemaVersion;
}

bool ResultsDb::has_table(std::string_view table) {
  Statement select(db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
  select.bind(1, table).step();
  return select.column_int(0) > 0;
}

std::string ResultsDb::column_or_blank(std::string_view table, std::string_view column) {
  if (schema_version_ == kSchemaVersion) return std::string(column);
  Statement select(db_, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2");
  select.bind(1, table).bind(2, column).step();
  return select.column_int(0) > 0 ? std::string(column) : "''";
}

OpenedRun ResultsDb::open_run(RunRecord run, bool resume) {
  if (resume) {
    if (const StoredRun found = find_run(run, false); found.id != 0) {
      if (found.status == "complete") return {found.id, true};
      Statement reopen(db_, str_cat("UPDATE runs SET status = 'running', threads = ?2, ",
                                    kAddVersion, ", ", kAddBuild, " WHERE id = ?1"));
      reopen.bind(1, found.id)
          .bind(2, static_cast<int64_t>(run.threads))
          .bind(3, run.git_version)
          .bind(4, run.isa)
          .bind(5, run.build)
          .run();
      return {found.id, false};
    }
  }
  run.status = "running";
  run.started_at = now_iso8601();
  return {insert_run(db_, run), false};
}

void ResultsDb::finish_run(int64_t run_id, const std::string& status, double wall_seconds) {
  Statement update(db_,
                   "UPDATE runs SET status = ?2, finished_at = ?3, wall_seconds = wall_seconds + "
                   "?4 WHERE id = ?1");
  update.bind(1, run_id).bind(2, status).bind(3, now_iso8601()).bind(4, wall_seconds).run();
}

std::set<std::tuple<int64_t, std::string, int>> ResultsDb::stored_pairs(int64_t run_id) {
  Statement select(db_, "SELECT pair_index, construction, distance FROM pairs WHERE run_id = ?1");
  select.bind(1, run_id);
  std::set<std::tuple<int64_t, std::string, int>> out;
  while (select.step()) {
    out.emplace(select.column_int(0), select.column_text(1),
                static_cast<int>(select.column_int(2)));
  }
  return out;
}

void ResultsDb::store_pair(int64_t run_id, const PairRecord& pair) {
  Transaction transaction(db_);
  insert_pair(db_, run_id, pair);
  transaction.commit();
}

std::vector<RunRecord> ResultsDb::runs() {
  Statement select(
      db_, str_cat("SELECT id, ", kRunColumns, ", ", column_or_blank("runs", "isa"), ", ",
                   column_or_blank("runs", "build"), ", ", column_or_blank("runs", "chat_format"),
                   ", ", column_or_blank("runs", "precision"), " FROM runs ORDER BY id"));
  std::vector<RunRecord> out;
  while (select.step()) out.push_back(read_run(select));
  return out;
}

std::vector<PairRecord> ResultsDb::pairs(int64_t run_id) {
  std::map<std::tuple<int64_t, std::string, int>, PairRecord> by_key;
  Statement select(db_,
                   str_cat("SELECT pair_index, construction, distance, value_a, value_b, "
                           "candidates, texts, n_tokens, rejected, ",
                           column_or_blank("pairs", "spans"), " FROM pairs WHERE run_id = ?1"));
  select.bind(1, run_id);
  while (select.step()) {
    PairRecord p;
    p.pair_index = select.column_int(0);
    p.construction = select.column_text(1);
    p.distance = static_cast<int>(select.column_int(2));
    p.value_a = static_cast<int>(select.column_int(3));
    p.value_b = static_cast<int>(select.column_int(4));
    p.candidates = nlohmann::json::parse(select.column_text(5)).get<std::vector<std::string>>();
    p.texts_json = select.column_text(6);
    p.n_tokens = select.column_int(7);
    p.rejected = static_cast<int>(select.column_int(8));
    p.spans_json = select.column_text(9);
    by_key[{p.pair_index, p.construction, p.distance}] = p;
  }
  Statement scores(
      db_,
      "SELECT pair_index, construction, distance, condition, side, candidate, log_prob FROM scores "
      "WHERE run_id = ?1 ORDER BY candidate");
  scores.bind(1, run_id);
  while (scores.step()) {
    PairRecord& p = by_key.at(
        {scores.column_int(0), scores.column_text(1), static_cast<int>(scores.column_int(2))});
    auto& sides = p.conditions[scores.column_text(3)];
    (scores.column_text(4) == "A" ? sides.first : sides.second)
        .log_probs.push_back(scores.column_double(6));
  }
  std::vector<PairRecord> out;
  out.reserve(by_key.size());
  for (auto& [key, pair] : by_key) out.push_back(std::move(pair));
  return out;
}

OpenedRun ResultsDb::open_landing(LandingRunRecord run, bool resume) {
  if (resume) {
    if (const StoredRun found = find_landing(run, false); found.id != 0) {
      if (found.status == "complete") return {found.id, true};
      Statement reopen(db_, str_cat("UPDATE landing_runs SET status = 'running', ", kAddVersion,
                                    ", ", kAddBuild, " WHERE id = ?1"));
      reopen.bind(1, found.id).bind(3, run.git_version).bind(4, run.isa).bind(5, run.build).run();
      return {found.id, false};
    }
  }
  run.status = "running";
  run.started_at = now_iso8601();
  return {insert_landing(db_, run), false};
}

void ResultsDb::finish_landing(int64_t landing_id, const std::string& status, double wall_seconds) {
  Statement update(
      db_,
      "UPDATE landing_runs SET status = ?2, finished_at = ?3, wall_seconds = wall_seconds + ?4 "
      "WHERE id = ?1");
  update.bind(1, landing_id).bind(2, status).bind(3, now_iso8601()).bind(4, wall_seconds).run();
}

std::set<int64_t> ResultsDb::stored_landing_pairs(int64_t landing_id, int stage) {
  Statement select(
      db_, "SELECT DISTINCT pair_index FROM landing_measures WHERE landing_id = ?1 AND stage = ?2");
  select.bind(1, landing_id).bind(2, static_cast<int64_t>(stage));
  std::set<int64_t> out;
  while (select.step()) out.insert(select.column_int(0));
  return out;
}

void ResultsDb::store_landing(int64_t landing_id, const std::vector<LandingRow>& rows) {
  Transaction transaction(db_);
  Statement insert(db_,
                   "INSERT OR REPLACE INTO landing_measures VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  for (const LandingRow& row : rows) {
    insert.bind(1, landing_id)
        .bind(2, row.pair_index)
        .bind(3, static_cast<int64_t>(row.stage))
        .bind(4, row.kind);
    insert.bind(5, row.target).bind(6, row.value).bind(7, row.outcome);
    insert.run();
  }
  transaction.commit();
}

std::vector<LandingRunRecord> ResultsDb::landing_runs() {
  std::vector<LandingRunRecord> out;
  if (!has_table("landing_runs")) return out;  // an older database, read-only
  Statement select(
      db_, str_cat("SELECT id, model_name, model_fingerprint, scenario_name, scenario_hash, "
                   "construction, distance, seed, n_pairs, git_version, events, "
                   "started_at, finished_at, wall_seconds, status, ",
                   column_or_blank("landing_runs", "isa"), ", ",
                   column_or_blank("landing_runs", "build"), ", ",
                   column_or_blank("landing_runs", "precision"), " FROM landing_runs ORDER BY id"));
  while (select.step()) {
    LandingRunRecord r;
    r.id = select.column_int(0);
    r.model_name = select.column_text(1);
    r.model_fingerprint = select.column_text(2);
    r.scenario_name = select.column_text(3);
    r.scenario_hash = select.column_text(4);
    r.construction = select.column_text(5);
    r.distance = static_cast<int>(select.column_int(6));
    r.seed = static_cast<uint64_t>(select.column_int(7));
    r.n_pairs = select.column_int(8);
    r.git_version = select.column_text(9);
    r.events_json = select.column_text(10);
    r.started_at = select.column_text(11);
    r.finished_at = select.column_text(12);
    r.wall_seconds = select.column_double(13);
    r.status = select.column_text(14);
    r.isa = select.column_text(15);
    r.build = select.column_text(16);
    r.precision = stored_precision(select.column_text(17));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<LandingRow> ResultsDb::landing_rows(int64_t landing_id) {
  Statement select(db_,
                   "SELECT pair_index, stage, kind, target, value, outcome FROM landing_measures "
                   "WHERE landing_id = ?1 ORDER BY pair_index, stage, rowid");
  select.bind(1, landing_id);
  std::vector<LandingRow> out;
  while (select.step()) {
    out.push_back({select.column_int(0), static_cast<int>(select.column_int(1)),
                   select.column_text(2), select.column_text(3), select.column_double(4),
                   select.column_text(5)});
  }
  return out;
}

StoredRun ResultsDb::find_run(const RunRecord& run, bool same_start) {
  Statement find(db_,
                 str_cat("SELECT id, status FROM runs WHERE model_fingerprint = ?1 AND "
                         "scenario_hash = ?2 AND seed = ?3 AND n_pairs = ?4 AND "
                         "shard_index = ?5 AND shard_count = ?6",
                         " AND ", kPrecision, " = ?8", same_start ? " AND started_at = ?7" : "",
                         " ORDER BY id DESC LIMIT 1"));
  find.bind(1, run.model_fingerprint)
      .bind(2, run.scenario_hash)
      .bind(3, static_cast<int64_t>(run.seed));
  find.bind(4, run.n_pairs)
      .bind(5, static_cast<int64_t>(run.shard_index))
      .bind(6, static_cast<int64_t>(run.shard_count));
  if (same_start) find.bind(7, run.started_at);
  find.bind(8, run.precision);
  return find.step() ? StoredRun{find.column_int(0), find.column_text(1)} : StoredRun{};
}

StoredRun ResultsDb::find_landing(const LandingRunRecord& landing, bool same_start) {
  Statement find(db_,
                 str_cat("SELECT id, status FROM landing_runs WHERE model_fingerprint = ?1 "
                         "AND scenario_hash = ?2 AND construction = ?3 AND distance = ?4 "
                         "AND seed = ?5 AND n_pairs = ?6",
                         " AND ", kPrecision, " = ?8", same_start ? " AND started_at = ?7" : "",
                         " ORDER BY id DESC LIMIT 1"));
  find.bind(1, landing.model_fingerprint)
      .bind(2, landing.scenario_hash)
      .bind(3, landing.construction);
  find.bind(4, static_cast<int64_t>(landing.distance))
      .bind(5, static_cast<int64_t>(landing.seed))
      .bind(6, landing.n_pairs);
  if (same_start) find.bind(7, landing.started_at);
  find.bind(8, landing.precision);
  return find.step() ? StoredRun{find.column_int(0), find.column_text(1)} : StoredRun{};
}

// A copy takes the state of the copy that has run longer: wall time only
// grows as a run is resumed, so that copy is the newer one.
void ResultsDb::update_copy_state(std::string_view table, int64_t id, const std::string& status,
                                  const std::string& finished_at, double wall_seconds,
                                  const std::string& git_version) {
  Statement update(db_, str_cat("UPDATE ", table,
                                " SET status = ?2, finished_at = ?3, wall_seconds = ?4, "
                                "git_version = ?5 WHERE id = ?1 AND wall_seconds < ?4"));
  update.bind(1, id).bind(2, status).bind(3, finished_at);
  update.bind(4, wall_seconds).bind(5, git_version).run();
}

std::string ResultsDb::other_precision(const RunRecord& run) {
  Statement find(db_, str_cat("SELECT ", kPrecision,
                              " FROM runs WHERE model_fingerprint = ?1 AND scenario_hash = ?2 AND "
                              "seed = ?3 AND n_pairs = ?4 AND ",
                              kPrecision, " != ?5 LIMIT 1"));
  find.bind(1, run.model_fingerprint).bind(2, run.scenario_hash);
  find.bind(3, static_cast<int64_t>(run.seed)).bind(4, run.n_pairs).bind(5, run.precision);
  return find.step() ? find.column_text(0) : "";
}

std::string ResultsDb::other_build(const RunRecord& run) {
  if (run.isa.empty()) return "";
  Statement find(db_,
                 "SELECT id, isa, build FROM runs WHERE model_fingerprint = ?1 AND "
                 "scenario_hash = ?2 AND seed = ?3 AND n_pairs = ?4 AND isa != '' AND "
                 "(isa != ?5 OR build != ?6) LIMIT 1");
  find.bind(1, run.model_fingerprint).bind(2, run.scenario_hash);
  find.bind(3, static_cast<int64_t>(run.seed)).bind(4, run.n_pairs);
  find.bind(5, run.isa).bind(6, run.build);
  if (!find.step()) return "";
  return str_cat("run ", find.column_int(0), " of the same experiment here used kernels ",
                 find.column_text(1), " (", find.column_text(2), ")");
}

std::vector<std::string> ResultsDb::merge_from(ResultsDb& other) {
  const std::string& other_path = other.database().path();
  for (const RunRecord& run : other.runs()) {
    if (const std::string here = other_precision(run); !here.empty()) {
      fail(other_path, ": run ", run.id, " (", run.scenario_name, " on ", run.model_name,
           ") was computed with --precision ", run.precision, ", but this database holds the same ",
           "experiment computed with --precision ", here, "; merge it into another database");
    }
  }
  std::vector<std::string> warnings;
  Transaction transaction(db_);
  for (const RunRecord& run : other.runs()) {
    if (const std::string differs = other_build(run); !differs.empty()) {
      warnings.push_back(str_cat(other_path, ": run ", run.id, " (", run.scenario_name, ", shard ",
                                 run.shard_index + 1, "/", run.shard_count, ") used kernels ",
                                 run.isa, " (", run.build, "), but ", differs,
                                 "; scores may differ in the last bits"));
    }
    int64_t id = find_run(run, true).id;
    if (id == 0) {
      id = insert_run(db_, run);
    } else {
      update_copy_state("runs", id, run.status, run.finished_at, run.wall_seconds, run.git_version);
    }
    const auto stored = stored_pairs(id);
    for (const PairRecord& pair : other.pairs(run.id)) {
      if (stored.count({pair.pair_index, pair.construction, pair.distance}) == 0)
        insert_pair(db_, id, pair);
    }
  }
  transaction.commit();
  for (const LandingRunRecord& landing : other.landing_runs()) {
    int64_t id = find_landing(landing, true).id;
    if (id == 0) {
      id = insert_landing(db_, landing);
    } else {
      update_copy_state("landing_runs", id, landing.status, landing.finished_at,
                        landing.wall_seconds, landing.git_version);
    }
    store_landing(id, other.landing_rows(landing.id));
  }
  return warnings;
}

}  // namespace eventkv::store
