// The model a logits fixture was made from: a generated model rebuilt from
// its recorded spec (checked against the recorded hash), or a real model file.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/test_model.h"
#include "test_support.h"
#include "util/hash.h"

namespace eventkv::testing {

struct LoadedModel {
  std::vector<uint8_t> bytes;  // backing store of generated models
  std::shared_ptr<const model::Model> model;
};

// The fixture's model, or an empty result when a real model is not downloaded.
inline LoadedModel load_fixture_model(const nlohmann::json& fixture) {
  LoadedModel loaded;
  if (fixture.contains("generated")) {
    const auto& g = fixture["generated"];
    model::TestModelSpec spec;
    spec.arch = model::arch_by_name(g["arch"].get<std::string>()).value();
    spec.weight_type = *gguf::parse_type_name(g["type"].get<std::string>());
    spec.n_layer = g["layers"].get<int64_t>();
    spec.name = g["name"].get<std::string>();
    spec.seed = g["seed"].get<uint64_t>();
    spec.yarn_factor = g.value("yarn", 0.0f);
    spec.yarn_original_context = g.value("yarn_context", int64_t{128});
    spec.attn_temperature_scale = g.value("attn_temperature", 0.0f);
    spec.swa_pattern = g.value("swa_pattern", int64_t{0});
    spec.gemma4_dense = g.value("dense", false);
    loaded.bytes = model::build_test_model(spec).to_bytes();
    EXPECT_EQ(fnv1a64(loaded.bytes),
              std::stoull(fixture["fnv1a64"].get<std::string>(), nullptr, 16))
        << "the test model generator changed; regenerate the logits fixtures";
    loaded.model = model::Model::from_bytes(loaded.bytes, "generated");
    return loaded;
  }
  const std::string path = real_model_path(fixture["model"].get<std::string>());
  if (!path.empty()) loaded.model = model::Model::load(path);
  return loaded;
}

}  // namespace eventkv::testing
