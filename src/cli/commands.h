// Each subcommand registers itself on the root app; its callback does the
// work and throws Error on failure (main turns that into one line, exit 1).
#pragma once

#include <CLI/CLI.hpp>

namespace eventkv::cli {

void add_inspect_command(CLI::App& app);
void add_make_test_model_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_history_command(CLI::App& app);
void add_probe_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_landing_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_rerun_command(CLI::App& app);
void add_suite_command(CLI::App& app);
void add_contract_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_serve_command(CLI::App& app);

}  // namespace eventkv::cli
