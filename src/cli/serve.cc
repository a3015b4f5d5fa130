// eventkv serve -m MODEL: agent sessions as sparse event KV behind an HTTP
// API (native and OpenAI-compatible), with the memory contract enforced at
// every eviction and every acknowledged operation journaled in --state-dir.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/model_options.h"
#include "contract/profile.h"
#include "serve/http_server.h"
#include "serve/service.h"

namespace eventkv::cli {
namespace {

struct ServeOptions {
  ModelOptions model;
  std::string profile;
  std::string format;
  serve::HttpOptions http;
  serve::ServiceOptions service;
  int64_t max_events = 4096;
  int64_t max_event_tokens = 4096;
  bool verify_forget = false;
  compute::ActivationPrecision precision = compute::ActivationPrecision::kInt8;
};

bool loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

void run(ServeOptions options) {
  if (options.http.api_key.empty()) {
    if (const char* key = std::getenv("EVENTKV_API_KEY")) options.http.api_key = key;
  }
  if (!loopback(options.http.host) && options.http.api_key.empty()) {
    usage_error("--host",
                "listening beyond loopback needs an API key (--api-key or EVENTKV_API_KEY)");
  }
  // Events are prefilled with the replies' activations: int8 products on
  // int8 panels by default, as generate and chat do; --exact keeps f32.
  ModelOptions model_options = with_precision_panels(options.model, options.precision);
  model_options.products = options.precision;
  const auto engine = load_engine(model_options);
  const model::Model& model = engine->model();
  const std::optional<contract::Profile> profile =
      contract::load_profile_for(options.profile, model.fingerprint(), options.model.model);
  const int64_t context = context_size(options.model, model);
  if (options.service.kv_budget > context)
    usage_error("--kv-budget", str_cat("must be at most the context of ", context, " rows"));
  const tokenizer::ChatFormat format = options.format.empty()
                                           ? tokenizer::ChatFormat::detect(model.file())
                                           : tokenizer::ChatFormat::by_name(options.format);
  // One arena for every session (decode steps of all sessions batch over
  // it); memory is taken page by page as rows are written.
  const int64_t cells = (options.service.max_sessions + 1) * context;
  serve::SessionContext session_context{
      engine,
      std::make_shared<kv::KvArena>(model.config(), cells, compute::KvType::kF32),
      format,
      profile,
      {.enforce = true,
       .verify = options.verify_forget,
       .replies = options.precision == compute::ActivationPrecision::kF32
                      ? compute::ActivationPrecision::kF32Rowwise
                      : compute::ActivationPrecision::kInt8Rowwise},
      context,
      options.max_events,
      options.max_event_tokens,
      nullptr};
  options.service.model_name = std::filesystem::path(options.model.model).filename().string();
  serve::Service service(std::move(session_context), options.service);
  const size_t restored = service.restore_all();
  if (!options.service.state_dir.empty()) {
    std::fprintf(stderr, "eventkv serve: %zu sessions restored from %s\n", restored,
                 options.service.state_dir.c_str());
  }
  serve::HttpServer http(service, options.http);
  const int port = http.bind();
  std::printf("eventkv serve: listening on http://%s:%d\n", options.http.host.c_str(), port);
  std::fflush(stdout);
  const InterruptGuard guard;
  std::thread watcher([&http] {
    while (!interrupted()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    http.stop();
  });
  http.listen();
  // listen() also returns when the port fails: wake the watcher either way.
  if (!interrupted()) std::raise(SIGINT);
  watcher.join();
  service.stop();
  std::fprintf(stderr, "eventkv serve: stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "serve", "Serve agent sessions over HTTP (native and OpenAI-compatible API)");
  auto options = std::make_shared<ServeOptions>();
  add_model_options(cmd, options->model);
  cmd->add_option("--profile", options->profile, "calibration profile of the model (JSON)");
  cmd->add_option("--format", options->format, "chat format (default: from the model's template)");
  cmd->add_option("--host", options->http.host, "address to listen on (default 127.0.0.1)");
  cmd->add_option("--port", options->http.port, "port (0: any free port)")
      ->check(in_range(0, 65535));
  cmd->add_option("--api-key", options->http.api_key,
                  "key clients send as 'Authorization: Bearer KEY' (or EVENTKV_API_KEY)");
  cmd->add_option("--state-dir", options->service.state_dir,
                  "folder of the session journals and snapshots (default: memory only)");
  cmd->add_option("--kv-budget", options->service.kv_budget,
                  "default KV budget of a session in rows (0: none)")
      ->check(in_range(0, 1 << 24));
  cmd->add_option("--max-sessions", options->service.max_sessions, "sessions at most")
      ->check(in_range(1, 4096));
  cmd->add_option("--max-queue", options->service.max_queue,
                  "jobs and replies waiting for the engine at most (then 503)")
      ->check(in_range(1, 4096));
  cmd->add_option("--max-events", options->max_events, "events per session at most")
      ->check(in_range(1, 1 << 20));
  cmd->add_option("--max-event-tokens", options->max_event_tokens, "tokens per event at most")
      ->check(in_range(1, 1 << 20));
  cmd->add_option("--max-body", options->http.max_body, "request body bytes at most")
      ->check(in_range(1024, 1 << 30));
  cmd->add_flag("--verify-forget", options->verify_forget,
                "prove every verified forgetting (keeps the rows as first computed for the "
                "replays: more memory)");
  add_precision_option(cmd, options->precision);
  cmd->callback([options] { run(*options); });
}

}  // namespace eventkv::cli
