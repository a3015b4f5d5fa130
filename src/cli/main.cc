#include <cstdio>
#include <exception>
#include <string>

#include "cli/commands.h"
#include "compute/kernels.h"
#include "git_version.h"
#include "util/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "eventkv: serve an agent's history from a sparse event KV cache and measure what it "
      "remembers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] {
    return std::string("eventkv ") + EVENTKV_GIT_VERSION +
           "\nkernels: " + eventkv::compute::kernels().isa +
           "\nbuild: " + eventkv::compute::build_description();
  });
  eventkv::cli::add_inspect_command(app);
  eventkv::cli::add_make_test_model_command(app);
  eventkv::cli::add_tokenize_command(app);
  eventkv::cli::add_generate_command(app);
  eventkv::cli::add_chat_command(app);
  eventkv::cli::add_history_command(app);
  eventkv::cli::add_probe_command(app);
  eventkv::cli::add_export_command(app);
  eventkv::cli::add_merge_command(app);
  eventkv::cli::add_landing_command(app);
  eventkv::cli::add_report_command(app);
  eventkv::cli::add_rerun_command(app);
  eventkv::cli::add_suite_command(app);
  eventkv::cli::add_contract_command(app);
  eventkv::cli::add_calibrate_command(app);
  eventkv::cli::add_serve_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {  // one line, like every other error
    std::fprintf(stderr, "eventkv: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eventkv: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
