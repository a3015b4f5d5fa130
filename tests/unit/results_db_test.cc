// The results database's run bookkeeping: a resumed run is the same run, it
// lists every version of eventkv that computed its pairs, and resuming a
// complete run changes nothing; merging a run again copies only what is new.
#include "store/results_db.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "store/sqlite.h"
#include "test_support.h"
#include "util/error.h"

namespace eventkv::store {
namespace {

class ResultsDbTest : public ::testing::Test {
 protected:
  static RunRecord one_run(const std::string& git_version) {
    RunRecord run;
    run.model_fingerprint = "f";
    run.scenario_hash = "h";
    run.n_pairs = 4;
    run.shard_count = 1;
    run.git_version = git_version;
    return run;
  }
  testing::TempDatabase database_{"results-db-test"};
};

TEST_F(ResultsDbTest, ResumedRunListsEveryVersionOnce) {
  ResultsDb db(database_.path());
  RunRecord run = one_run("aaa1111");
  const int64_t id = db.open_run(run, false).id;
  db.finish_run(id, "interrupted", 1.0);
  run.git_version = "bbb2222";
  EXPECT_EQ(db.open_run(run, true).id, id);
  EXPECT_EQ(db.runs()[0].status, "running");
  db.finish_run(id, "interrupted", 2.0);
  EXPECT_FALSE(db.open_run(run, true).complete);
  db.finish_run(id, "complete", 3.0);
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_EQ(db.runs()[0].git_version, "aaa1111 bbb2222");
  EXPECT_DOUBLE_EQ(db.runs()[0].wall_seconds, 6.0);
}

TEST_F(ResultsDbTest, ResumingCompleteRunChangesNothing) {
  ResultsDb db(database_.path());
  RunRecord run = one_run("aaa1111");
  const int64_t id = db.open_run(run, false).id;
  db.finish_run(id, "complete", 5.0);
  const RunRecord before = db.runs()[0];
  run.git_version = "ccc3333";
  const OpenedRun again = db.open_run(run, true);
  EXPECT_EQ(again.id, id);
  EXPECT_TRUE(again.complete);
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_EQ(db.runs()[0].status, "complete");
  EXPECT_EQ(db.runs()[0].git_version, before.git_version);
  EXPECT_EQ(db.runs()[0].finished_at, before.finished_at);
  EXPECT_FALSE(db.open_run(run, false).complete);  // without --resume: a new run
  EXPECT_EQ(db.runs().size(), 2u);
}

TEST_F(ResultsDbTest, ResumedLandingListsEveryVersionOnce) {
  ResultsDb db(database_.path());
  LandingRunRecord run;
  run.model_fingerprint = "f";
  run.scenario_hash = "h";
  run.construction = "ok";
  run.n_pairs = 2;
  run.git_version = "aaa1111";
  const int64_t id = db.open_landing(run, false).id;
  run.git_version = "bbb2222";
  EXPECT_EQ(db.open_landing(run, true).id, id);
  EXPECT_EQ(db.open_landing(run, true).id, id);
  ASSERT_EQ(db.landing_runs().size(), 1u);
  EXPECT_EQ(db.landing_runs()[0].git_version, "aaa1111 bbb2222");
  db.finish_landing(id, "complete", 1.0);
  run.git_version = "ccc3333";
  const OpenedRun again = db.open_landing(run, true);
  EXPECT_EQ(again.id, id);
  EXPECT_TRUE(again.complete);
  ASSERT_EQ(db.landing_runs().size(), 1u);
  EXPECT_EQ(db.landing_runs()[0].status, "complete");
  EXPECT_EQ(db.landing_runs()[0].git_version, "aaa1111 bbb2222");
}

TEST_F(ResultsDbTest, MergingACopyAgainAddsOnlyWhatIsNew) {
  const testing::TempDatabase shard_database("results-db-test-shard");
  const std::string& shard_path = shard_database.path();
  ResultsDb merged(database_.path());
  {
    ResultsDb shard(shard_path);
    const int64_t id = shard.open_run(one_run("aaa1111"), false).id;
    shard.store_pair(id, PairRecord{});
    shard.finish_run(id, "interrupted", 1.0);
    LandingRunRecord landing;
    landing.construction = "ok";
    const int64_t landing_id = shard.open_landing(landing, false).id;
    shard.store_landing(landing_id, {{0, 1, "event", "carrier", 0.5, "aligned"}});
    merged.merge_from(shard);
    merged.merge_from(shard);
    ASSERT_EQ(merged.runs().size(), 1u);
    EXPECT_EQ(merged.pairs(merged.runs()[0].id).size(), 1u);
    ASSERT_EQ(merged.landing_runs().size(), 1u);
    EXPECT_EQ(merged.landing_rows(merged.landing_runs()[0].id).size(), 1u);
    // The shard resumes and finishes; merging it again brings the new pair and the state.
    ASSERT_EQ(shard.open_run(one_run("bbb2222"), true).id, id);
    PairRecord second;
    second.pair_index = 1;
    shard.store_pair(id, second);
    shard.finish_run(id, "complete", 2.0);
  }
  ResultsDb finished_shard(shard_path, Access::kReadOnly);
  merged.merge_from(finished_shard);
  ASSERT_EQ(merged.runs().size(), 1u);
  EXPECT_EQ(merged.pairs(merged.runs()[0].id).size(), 2u);
  EXPECT_EQ(merged.runs()[0].status, "complete");
  EXPECT_DOUBLE_EQ(merged.runs()[0].wall_seconds, 3.0);
  EXPECT_EQ(merged.runs()[0].git_version, "aaa1111 bbb2222");
  EXPECT_EQ(merged.landing_runs().size(), 1u);
}

TEST_F(ResultsDbTest, ResumedRunListsEveryKernelOnceAndMergeWarnsOfOtherKernels) {
  ResultsDb db(database_.path());
  RunRecord run = one_run("aaa1111");
  run.isa = "avx512";
  run.build = "GNU 12.2.0 Release";
  const int64_t id = db.open_run(run, false).id;
  db.finish_run(id, "interrupted", 1.0);
  run.isa = "avx2";
  ASSERT_EQ(db.open_run(run, true).id, id);
  ASSERT_EQ(db.open_run(run, true).id, id);
  EXPECT_EQ(db.runs()[0].isa, "avx512 | avx2");
  EXPECT_EQ(db.runs()[0].build, "GNU 12.2.0 Release");

  // A second shard of the same experiment, computed with other kernels.
  const testing::TempDatabase shard_database("results-db-test-shard");
  {
    ResultsDb shard(shard_database.path());
    RunRecord other = one_run("aaa1111");
    other.shard_index = 1;
    other.shard_count = 2;
    other.isa = "x86_64";
    other.build = "GNU 12.2.0 Release";
    shard.open_run(other, false);
  }
  ResultsDb shard(shard_database.path(), Access::kReadOnly);
  const std::vector<std::string> warnings = db.merge_from(shard);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("used kernels x86_64"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("avx512 | avx2"), std::string::npos) << warnings[0];
  EXPECT_FALSE(db.merge_from(shard).empty());  // merged again: still differs
}

// --precision: a fast run is another run than an exact one (resume never
// mixes them), and merge refuses to pool them, writing nothing.
TEST_F(ResultsDbTest, PrecisionIsPartOfARunAndMergeRefusesToMixThem) {
  ResultsDb db(database_.path());
  RunRecord exact = one_run("aaa1111");
  const int64_t exact_id = db.open_run(exact, false).id;
  db.finish_run(exact_id, "interrupted", 1.0);
  RunRecord fast = exact;
  fast.precision = "fast";
  const int64_t fast_id = db.open_run(fast, true).id;
  EXPECT_NE(fast_id, exact_id);
  EXPECT_EQ(db.open_run(exact, true).id, exact_id);
  ASSERT_EQ(db.runs().size(), 2u);
  EXPECT_EQ(db.runs()[0].precision, "exact");
  EXPECT_EQ(db.runs()[1].precision, "fast");

  const testing::TempDatabase other_database("results-db-test-precision");
  {
    ResultsDb other(other_database.path());
    RunRecord shard = fast;
    shard.shard_index = 1;
    shard.shard_count = 2;
    other.open_run(shard, false);
  }
  const testing::TempDatabase target_database("results-db-test-precision-target");
  ResultsDb target(target_database.path());
  target.open_run(exact, false);
  ResultsDb other(other_database.path(), Access::kReadOnly);
  try {
    target.merge_from(other);
    ADD_FAILURE() << "merged a fast run into an exact one";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--precision fast"), std::string::npos) << e.what();
  }
  EXPECT_EQ(target.runs().size(), 1u);
}

TEST_F(ResultsDbTest, StoresWhatWasRunAndMergeCopiesIt) {
  RunRecord run = one_run("aaa1111");
  run.scenario_json = R"({"name":"s"})";
  run.chat_format = "chatml";
  PairRecord pair;
  pair.spans_json = R"({"a":[],"b":[]})";
  const testing::TempDatabase shard_database("results-db-test-shard");
  {
    ResultsDb shard(shard_database.path());
    shard.store_pair(shard.open_run(run, false).id, pair);
  }
  ResultsDb db(database_.path());
  ResultsDb shard(shard_database.path(), Access::kReadOnly);
  db.merge_from(shard);
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_EQ(db.runs()[0].scenario_json, run.scenario_json);
  EXPECT_EQ(db.runs()[0].chat_format, "chatml");
  ASSERT_EQ(db.pairs(db.runs()[0].id).size(), 1u);
  EXPECT_EQ(db.pairs(db.runs()[0].id)[0].spans_json, pair.spans_json);
}

// A database as eventkv wrote it at schema 1 (no isa, build; no landing
// tables yet), with one run of one pair scored under one condition.
void write_schema_one(const std::string& path) {
  Database old(path);
  old.exec(
      "PRAGMA journal_mode=WAL;"
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO meta VALUES ('schema_version', '1');"
      "CREATE TABLE runs (id INTEGER PRIMARY KEY, model_name TEXT NOT NULL, model_path TEXT NOT "
      "NULL, model_fingerprint TEXT NOT NULL, scenario_name TEXT NOT NULL, scenario_suite TEXT "
      "NOT NULL, scenario_finding TEXT NOT NULL, scenario_hash TEXT NOT NULL, scenario_json "
      "TEXT NOT NULL, payload_type TEXT NOT NULL, git_version TEXT NOT NULL, seed INTEGER NOT "
      "NULL, threads INTEGER NOT NULL, n_pairs INTEGER NOT NULL, shard_index INTEGER NOT NULL, "
      "shard_count INTEGER NOT NULL, started_at TEXT NOT NULL, finished_at TEXT NOT NULL "
      "DEFAULT '', wall_seconds REAL NOT NULL DEFAULT 0, status TEXT NOT NULL);"
      "CREATE TABLE pairs (run_id INTEGER NOT NULL, pair_index INTEGER NOT NULL, construction "
      "TEXT NOT NULL, distance INTEGER NOT NULL, value_a INTEGER NOT NULL, value_b INTEGER NOT "
      "NULL, candidates TEXT NOT NULL, texts TEXT NOT NULL, n_tokens INTEGER NOT NULL, rejected "
      "INTEGER NOT NULL, PRIMARY KEY (run_id, pair_index, construction, distance));"
      "CREATE TABLE scores (run_id INTEGER NOT NULL, pair_index INTEGER NOT NULL, construction "
      "TEXT NOT NULL, distance INTEGER NOT NULL, condition TEXT NOT NULL, side TEXT NOT NULL, "
      "candidate INTEGER NOT NULL, log_prob REAL NOT NULL, PRIMARY KEY (run_id, pair_index, "
      "construction, distance, condition, side, candidate));"
      "INSERT INTO runs VALUES (1, 'm', 'p', 'f', 's', '', '', 'h', '', '', 'v', 0, 1, 4, 0, 1, "
      "'t', '', 0, 'complete');"
      "INSERT INTO pairs VALUES (1, 0, 'ok', 2, 0, 1, '[\"a\",\"b\"]', '{}', 7, 0);"
      "INSERT INTO scores VALUES (1, 0, 'ok', 2, 'visible', 'A', 0, -0.5);");
}

std::string schema_version(const std::string& path) {
  Database db(path, Access::kReadOnly);
  Statement select(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  select.step();
  return select.column_text(0);
}

TEST_F(ResultsDbTest, ASchemaOneDatabaseReadsAsItIsReadOnlyAndGainsTheColumnsWritable) {
  write_schema_one(database_.path());
  {
    ResultsDb db(database_.path(), Access::kReadOnly);
    ASSERT_EQ(db.runs().size(), 1u);
    EXPECT_EQ(db.runs()[0].isa, "");
    EXPECT_EQ(db.runs()[0].chat_format, "");
    EXPECT_EQ(db.runs()[0].precision, "exact");  // every run before schema 4 was exact
    ASSERT_EQ(db.pairs(1).size(), 1u);
    EXPECT_EQ(db.pairs(1)[0].spans_json, "");
    EXPECT_EQ(db.pairs(1)[0].conditions.at("visible").first.log_probs.at(0), -0.5);
    EXPECT_TRUE(db.landing_runs().empty());
  }
  EXPECT_EQ(schema_version(database_.path()), "1");
  ResultsDb db(database_.path());
  ASSERT_EQ(db.runs().size(), 1u);
  EXPECT_EQ(db.runs()[0].isa, "");
  EXPECT_EQ(db.runs()[0].git_version, "v");
  EXPECT_EQ(db.pairs(1)[0].spans_json, "");
  EXPECT_EQ(schema_version(database_.path()), std::to_string(kSchemaVersion));
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Opening `path` as a results database, read-only or for writing, throws
// `message` and leaves the file as it was, with no -wal or -shm beside it.
void expect_refused_untouched(const std::string& path, const std::string& message) {
  const std::string before = file_bytes(path);
  const auto modified = std::filesystem::last_write_time(path);
  for (const Access access : {Access::kReadOnly, Access::kReadWrite}) {
    try {
      ResultsDb db(path, access);
      ADD_FAILURE() << path << " opened";
    } catch (const std::exception& e) {
      EXPECT_EQ(e.what(), path + ": " + message);
    }
  }
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_EQ(std::filesystem::last_write_time(path), modified);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

TEST_F(ResultsDbTest, AnotherSqliteFileIsRefusedUntouched) {
  {
    Database other(database_.path());
    other.exec("CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('x', 'y');");
  }
  expect_refused_untouched(database_.path(), "not an eventkv results database");
}

TEST_F(ResultsDbTest, AFileThatIsNoDatabaseIsRefusedUntouched) {
  std::ofstream(database_.path()) << "not sqlite, but long enough to be read as a header........"
                                     "................................................";
  expect_refused_untouched(database_.path(), "not an eventkv results database");
}

TEST_F(ResultsDbTest, ANewerSchemaIsRefusedUntouched) {
  {
    ResultsDb db(database_.path());
    db.database().exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    db.database().exec("PRAGMA journal_mode=DELETE");  // no -wal left to compare
  }
  expect_refused_untouched(database_.path(),
                           "results database of schema version 99, newer than this eventkv "
                           "knows (" +
                               std::to_string(kSchemaVersion) + "): use a newer eventkv");
}

TEST_F(ResultsDbTest, ReadOnlyNeedsAnExistingFile) {
  EXPECT_THROW(ResultsDb(database_.path(), Access::kReadOnly), Error);
  EXPECT_FALSE(std::filesystem::exists(database_.path()));
}

TEST(Iso8601, ReadsWhatNowWrites) {
  EXPECT_EQ(iso8601_seconds("1970-01-02T00:00:01Z"), std::optional<int64_t>(86401));
  EXPECT_EQ(iso8601_seconds("2026-12-03T20:37:02Z").value() -
                iso8601_seconds("2026-12-03T19:00:34Z").value(),
            5788);
  EXPECT_TRUE(iso8601_seconds(now_iso8601()).has_value());
  EXPECT_FALSE(iso8601_seconds("").has_value());
  EXPECT_FALSE(iso8601_seconds("2026-12-03 20:37:02").has_value());
  EXPECT_FALSE(iso8601_seconds("2026-12-03T20:37:02Z trailing").has_value());
}

}  // namespace
}  // namespace eventkv::store
