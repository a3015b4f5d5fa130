// Pair ids, and a stored pair recomputed from the database alone.
#include "probe/rerun.h"

#include <gtest/gtest.h>

#include <atomic>

#include "model/test_model.h"
#include "probe/runner.h"
#include "test_support.h"
#include "util/error.h"

namespace eventkv::probe {
namespace {

TEST(PairId, ReadsRunIndexConstructionAndDistance) {
  const PairId id = parse_pair_id("3:17:ok:2");
  EXPECT_EQ(id.run_id, 3);
  EXPECT_EQ(id.pair_index, 17);
  EXPECT_EQ(id.construction, "ok");
  EXPECT_EQ(id.distance, 2);
  EXPECT_EQ(pair_id_text(id), "3:17:ok:2");
  EXPECT_EQ(parse_pair_id("3:17::0").construction, "");
  EXPECT_EQ(parse_pair_id("3:17:a:b:0").construction, "a:b");
}

TEST(PairId, RefusesAnythingElse) {
  for (const char* text : {"", "3", "3:17:ok", "x:17:ok:2", "3:-1:ok:2", "3:17:ok:2x", "3:17:ok:"})
    EXPECT_THROW(parse_pair_id(text), Error) << text;
}

TEST(Rerun, RecomputesAStoredPairBitForBit) {
  const std::vector<uint8_t> bytes = model::build_test_model({}).to_bytes();
  const auto engine = std::make_shared<kv::Engine>(model::Model::from_bytes(bytes, "generated"), 1);
  const testing::TempDatabase database("rerun-test");
  store::ResultsDb db(database.path());
  RunOptions options;
  options.pairs = 1;
  options.constructions = {"noted"};
  options.distances = {2};
  const std::atomic<bool> interrupted{false};
  run_scenario(engine, "generated",
               load_scenario(testing::fixture_path("scenarios/tiny.json").string()), db, options,
               interrupted);
  const StoredPair stored = find_stored_pair(db, parse_pair_id("1:0:noted:2"));
  const auto arena = std::make_shared<kv::KvArena>(engine->model().config(), kDefaultKvCells,
                                                   compute::KvType::kF32);
  const Recomputed again = recompute_pair(stored, engine, arena);
  EXPECT_TRUE(again.chat_format_stored);
  EXPECT_TRUE(again.same_texts);
  EXPECT_TRUE(again.same_tokens);
  EXPECT_EQ(again.n_tokens, stored.pair.n_tokens);
  EXPECT_EQ(again.scores.size(), 5u * 2 * 2);  // conditions x sides x candidates
  EXPECT_EQ(again.max_abs_diff, 0.0);
  EXPECT_THROW(find_stored_pair(db, parse_pair_id("1:1:noted:2")), Error);
  EXPECT_THROW(find_stored_pair(db, parse_pair_id("2:0:noted:2")), Error);
}

}  // namespace
}  // namespace eventkv::probe
