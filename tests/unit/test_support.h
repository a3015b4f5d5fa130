// Shared helpers for the unit tests: where fixtures and real models live.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

namespace eventkv::testing {

inline std::filesystem::path source_dir() {
  return EVENTKV_SOURCE_DIR;
}

inline std::filesystem::path fixture_path(const std::string& name) {
  return source_dir() / "tests" / "fixtures" / name;
}

inline nlohmann::json load_fixture(const std::string& name) {
  std::ifstream in(fixture_path(name));
  if (!in) throw std::runtime_error("missing fixture " + fixture_path(name).string());
  return nlohmann::json::parse(in);
}

// models/ of the checkout, or $EVENTKV_MODELS when set.
inline std::filesystem::path models_dir() {
  if (const char* dir = std::getenv("EVENTKV_MODELS")) return dir;
  return source_dir() / "models";
}

// Path of a real model file, or "" when it has not been downloaded.
inline std::string real_model_path(const std::string& file_name) {
  const auto path = models_dir() / file_name;
  return std::filesystem::exists(path) ? path.string() : std::string();
}

// The shared/ folder beside the checkout (llama.cpp's vocab-only test files
// live there), or $EVENTKV_SHARED when set.
inline std::filesystem::path shared_dir() {
  if (const char* dir = std::getenv("EVENTKV_SHARED")) return dir;
  return source_dir().parent_path() / "shared";
}

// A database path in the temp folder, unique to the process and the name;
// the file and SQLite's -wal and -shm files beside it are removed when it is
// made and when it goes.
class TempDatabase {
 public:
  explicit TempDatabase(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               ("eventkv-" + name + "-" + std::to_string(::getpid()) + ".db"))
                  .string()) {
    remove_files();
  }
  ~TempDatabase() { remove_files(); }
  TempDatabase(const TempDatabase&) = delete;
  TempDatabase& operator=(const TempDatabase&) = delete;
  const std::string& path() const { return path_; }

 private:
  void remove_files() const {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  std::string path_;
};

// Decodes standard base64 (with '=' padding) into bytes.
inline std::vector<uint8_t> base64_decode(const std::string& text) {
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::vector<uint8_t> out;
  uint32_t buffer = 0;
  int bits = 0;
  for (const char c : text) {
    const int v = value(c);
    if (v < 0) continue;
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(buffer >> bits));
    }
  }
  return out;
}

// Little-endian float32 values from base64 text.
inline std::vector<float> base64_floats(const std::string& text) {
  const std::vector<uint8_t> bytes = base64_decode(text);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// The names of the logits fixtures (tests/fixtures/logits/*.json), sorted;
// with real_only, those of real models.
inline std::vector<std::string> logits_fixtures(bool real_only) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(fixture_path("logits"))) {
    const std::string name = entry.path().filename().string();
    if (!real_only || load_fixture("logits/" + name).contains("model")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A gtest parameter name from a fixture file name: "a-b.json" -> "a_b".
inline std::string fixture_test_name(const std::string& file) {
  std::string name = file.substr(0, file.find(".json"));
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  return name;
}

// Distance in units in the last place between two finite floats.
inline uint32_t ulp_distance(float a, float b) {
  const auto ordered = [](float f) {
    const auto bits = std::bit_cast<int32_t>(f);
    return bits < 0 ? static_cast<int64_t>(INT32_MIN) - bits : static_cast<int64_t>(bits);
  };
  const int64_t diff = ordered(a) - ordered(b);
  return static_cast<uint32_t>(diff < 0 ? -diff : diff);
}

}  // namespace eventkv::testing
