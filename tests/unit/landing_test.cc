// Landing analysis with a known answer (issue 8): in a history whose
// attention graph lets only the carrier see the source, and nothing later see
// the carrier, exactly the carrier's rows differ between the two sides. The
// analysis must find the carrier as the only root and carrier -> source as
// the only reference edge, with every other event and edge at zero effect.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "analysis/landing_summary.h"
#include "model/test_model.h"
#include "probe/landing.h"
#include "probe/scenario.h"
#include "test_support.h"

namespace eventkv::probe {
namespace {

using analysis::LandingEventInfo;
using analysis::passing_targets;
using analysis::summarize_landing;

Scenario tiny_scenario() {
  std::ifstream in(testing::fixture_path("scenarios/tiny.json"));
  return parse_scenario({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()},
                        "tiny.json");
}

TEST(Landing, FindsTheOnlyRootAndReferenceEdgeOfAKnownGraph) {
  const std::vector<uint8_t> bytes = model::build_test_model({}).to_bytes();
  auto engine = std::make_shared<kv::Engine>(model::Model::from_bytes(bytes, "generated"), 2);
  auto arena = std::make_shared<kv::KvArena>(engine->model().config(), 4096, compute::KvType::kF32);
  const Scenario scenario = tiny_scenario();
  const tokenizer::ChatFormat format = tokenizer::ChatFormat::detect(engine->model().file());
  const Cell cell{"noted", 2};
  std::vector<std::vector<LandingMeasure>> pairs;
  std::vector<LandingEventInfo> events;
  for (int64_t index = 0; index < 6; ++index) {
    const TokenizedPair pair =
        tokenize_pair(scenario, cell, index, format, engine->model().tokenizer());
    LandingOptions options;
    options.max_edges = 100;
    const auto source = static_cast<size_t>(pair.source_event);
    for (size_t e = source + 2; e < pair.events_a.size(); ++e) {
      options.base_mask.remove(pair.events_a[e].id, kSourceId);  // only the carrier sees the source
      options.base_mask.remove(pair.events_a[e].id, "carrier");  // nothing later sees the carrier
    }
    ASSERT_EQ(pair.events_a[source + 1].id, "carrier");
    std::vector<LandingMeasure> measures = measure_events(pair, engine, arena, options);
    const double full = measures.front().value;
    ASSERT_NE(full, 0.0);
    for (LandingMeasure& m : measure_roots(pair, engine, arena, options, {"carrier"}))
      measures.push_back(std::move(m));
    // Every other edge into the source or the carrier: already absent, so no effect.
    for (size_t e = source + 2; e < pair.events_a.size(); ++e) {
      for (const char* to : {kSourceId, "carrier"}) {
        measures.push_back(
            measure_edge(pair, engine, arena, options, pair.events_a[e].id, to, full));
      }
    }
    for (const LandingMeasure& m : measures) {
      const bool carries = (m.kind == "event" && m.target == "carrier") ||
                           (m.kind == "edge" && m.target == "carrier->source") ||
                           (m.kind == "layer" && m.target.rfind("carrier:", 0) == 0 &&
                            m.target.find(":L") == std::string::npos &&
                            m.target.find("first") == std::string::npos &&
                            m.target.find("last") == std::string::npos);
      if (m.kind == "full") continue;
      if (carries) {
        EXPECT_EQ(m.value, full) << m.kind << " " << m.target;
      } else if (m.kind == "event" || m.kind == "edge") {
        EXPECT_EQ(m.value, 0.0) << m.kind << " " << m.target;
      }
    }
    // A random model's margins have either sign: orient each pair so that A
    // is the side its own rows favour, as a trained model's donor would be.
    if (full < 0) {
      for (LandingMeasure& m : measures) m.value = -m.value;
    }
    pairs.push_back(std::move(measures));
    if (events.empty()) {
      for (const kv::EventTokens& e : pair.events_a)
        events.push_back({e.id, e.role, e.id == kSourceId, {}});
    }
  }
  EXPECT_EQ(passing_targets(pairs, "event", 1), std::vector<std::string>{"carrier"});
  EXPECT_EQ(passing_targets(pairs, "edge", 1), std::vector<std::string>{"carrier->source"});
  const report::LandingMap map = summarize_landing("generated", "tiny", events, pairs, 1);
  for (const report::LandingEvent& e : map.events) EXPECT_EQ(e.is_root, e.id == "carrier") << e.id;
  for (const report::LandingEdge& e : map.edges) {
    EXPECT_EQ(e.is_reference, e.from == "carrier" && e.to == "source") << e.from << "->" << e.to;
  }
  EXPECT_GT(map.edges.size(), 5u);
  EXPECT_EQ(map.heat_event, "carrier");
  EXPECT_FALSE(map.layers.empty());
}

}  // namespace
}  // namespace eventkv::probe
