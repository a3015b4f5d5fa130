// eventkv export --db FILE [--format csv|json] [-o FILE]: every stored score
// as CSV rows, or the runs and their statistics as JSON.
// eventkv merge OUT.db IN.db...: pools shard databases into one.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/summary.h"
#include "cli/commands.h"
#include "report/json.h"
#include "store/results_db.h"
#include "util/atomic_file.h"

namespace eventkv::cli {
namespace {

using nlohmann::json;

struct ExportOptions {
  std::string db;
  std::string format = "csv";
  std::string output;  // "" or "-": stdout
};

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string scores_csv(store::ResultsDb& db) {
  std::ostringstream out;
  out.precision(9);
  out << "run_id,model,scenario,payload_type,pair_index,construction,distance,condition,side,"
         "candidate,"
         "candidate_text,is_value_a,is_value_b,log_prob\n";
  for (const store::RunRecord& run : db.runs()) {
    for (const store::PairRecord& pair : db.pairs(run.id)) {
      for (const auto& [condition, sides] : pair.conditions) {
        for (const auto& [side, record] :
             {std::pair{"A", &sides.first}, std::pair{"B", &sides.second}}) {
          for (size_t c = 0; c < record->log_probs.size(); ++c) {
            out << run.id << ',' << csv_field(run.model_name) << ',' << csv_field(run.scenario_name)
                << ',' << run.payload_type << ',' << pair.pair_index << ','
                << csv_field(pair.construction) << ',' << pair.distance << ',' << condition << ','
                << side << ',' << c << ',' << csv_field(pair.candidates[c]) << ','
                << (static_cast<int>(c) == pair.value_a ? 1 : 0) << ','
                << (static_cast<int>(c) == pair.value_b ? 1 : 0) << ',' << record->log_probs[c]
                << '\n';
          }
        }
      }
    }
  }
  return out.str();
}

std::string summary_json(store::ResultsDb& db) {
  const report::ReportData data = analysis::collect_report(db);
  const json out = {{"generated_at", data.generated_at},
                    {"runs", report::runs_json(data.runs)},
                    {"cells", report::cells_json(data.cells)}};
  return out.dump(2) + "\n";
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("export",
                                 "Write stored results as CSV (every score) or JSON (statistics)");
  auto options = std::make_shared<ExportOptions>();
  cmd->add_option("--db", options->db, "results database")->required();
  cmd->add_option("--format", options->format, "csv or json")
      ->check(CLI::IsMember({"csv", "json"}));
  cmd->add_option("-o,--output", options->output, "output file (default: stdout)");
  cmd->callback([options] {
    store::ResultsDb db(options->db, store::Access::kReadOnly);
    write_output(options->output, options->format == "csv" ? scores_csv(db) : summary_json(db));
  });
}

void add_merge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("merge", "Pool results databases (e.g. shards) into one");
  auto output = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("output", *output, "database to add to (created when absent)")->required();
  cmd->add_option("inputs", *inputs, "databases to copy from")->required();
  cmd->callback([output, inputs] {
    // Every input is opened (read-only) before the output, so an input that
    // is no results database, or of a newer schema, fails before anything is
    // written. An output this merge creates is removed again when a later
    // step fails, so no half-pooled database is left behind; an existing
    // output keeps the inputs merged before the failure (merging them again
    // adds nothing).
    std::vector<std::unique_ptr<store::ResultsDb>> sources;
    for (const std::string& input : *inputs)
      sources.push_back(std::make_unique<store::ResultsDb>(input, store::Access::kReadOnly));
    const bool created = !std::filesystem::exists(*output);
    try {
      store::ResultsDb db(*output);
      for (const auto& source : sources) {
        for (const std::string& warning : db.merge_from(*source))
          std::cerr << "eventkv: warning: " << warning << "\n";
        std::cout << "merged " << source->database().path() << "\n";
      }
    } catch (const std::exception&) {
      if (created) {
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(*output + suffix);
      }
      throw;
    }
  });
}

}  // namespace eventkv::cli
