#include "serve/http_server.h"

#include <httplib.h>

#include <atomic>
#include <ctime>
#include <regex>

namespace eventkv::serve {
namespace {

using httplib::Request;
using httplib::Response;
using nlohmann::json;

constexpr const char* kSid = "([A-Za-z0-9_.-]{1,64})";

// Invalid UTF-8 in generated text becomes U+FFFD rather than an exception.
std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

const char* error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 405:
      return "method_not_allowed";
    case 409:
      return "conflict_error";
    case 413:
      return "payload_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

json error_body(int status, const std::string& message) {
  return {{"error", {{"message", message}, {"type", error_type(status)}, {"code", status}}}};
}

void send(Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

void send_error(Response& res, int status, const std::string& message) {
  send(res, status, error_body(status, message));
}

// Runs a route's work; its errors become JSON answers with their status.
template <typename Work>
void guarded(Response& res, Work work) {
  try {
    work();
  } catch (const ApiError& e) {
    send_error(res, e.status(), e.what());
  } catch (const Error& e) {
    send_error(res, 422, e.what());
  } catch (const json::exception& e) {
    send_error(res, 422, str_cat("request: ", e.what()));
  } catch (const std::exception& e) {
    send_error(res, 500, e.what());
  }
}

json parse_body(const Request& req) {
  if (req.body.empty()) return json::object();
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded()) api_fail(400, "the request body is not valid JSON");
  return body;
}

bool write_sse(httplib::DataSink& sink, const std::string& data) {
  const std::string event = "data: " + data + "\n\n";
  return sink.write(event.data(), event.size());
}

struct Route {
  std::regex path;
  std::string methods;
};

// Every route's path and methods, for 405 answers.
const std::vector<Route>& routes() {
  static const std::vector<Route> kRoutes = {
      {std::regex("/health"), "GET"},
      {std::regex("/metrics"), "GET"},
      {std::regex("/openapi.json"), "GET"},
      {std::regex("/sessions"), "GET, POST"},
      {std::regex(str_cat("/sessions/", kSid)), "GET, DELETE"},
      {std::regex(str_cat("/sessions/", kSid, "/events")), "GET, POST"},
      {std::regex(str_cat("/sessions/", kSid, "/(evict|forget|generate|score|snapshot|restore)")),
       "POST"},
      {std::regex(str_cat("/sessions/", kSid, "/contract")), "GET"},
      {std::regex("/v1/models"), "GET"},
      {std::regex("/v1/chat/completions"), "POST"},
  };
  return kRoutes;
}

json chat_usage(const GenerationResult& r) {
  return {{"prompt_tokens", r.prompt_tokens},
          {"completion_tokens", r.completion_tokens},
          {"total_tokens", r.prompt_tokens + r.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", r.cached_tokens}}}};
}

std::string completion_id() {
  static std::atomic<int64_t> next{0};
  return str_cat("chatcmpl-", std::time(nullptr), "-", next++);
}

}  // namespace

HttpServer::HttpServer(Service& service, HttpOptions options)
    : service_(service),
      options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  const int threads = options_.http_threads > 0 ? options_.http_threads : 96;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(options_.max_body);
  // Idle kept-alive connections hold a thread; a short wait lets a stopping
  // server go at once.
  server_->set_keep_alive_timeout(2);
  server_->set_error_handler([](const Request& req, Response& res) {
    if (!res.body.empty()) return;
    // httplib answers these before reading the body: the connection cannot
    // carry another request.
    res.set_header("Connection", "close");
    // httplib answers 400 to a method it does not route (TRACE, PATCH, ...).
    const bool unrouted_method = res.status == 400 && req.method != "GET" && req.method != "POST" &&
                                 req.method != "DELETE" && req.method != "HEAD";
    if (res.status == 404 || unrouted_method) {
      // A method httplib does not parse leaves the path empty; the target has it.
      const std::string path =
          req.path.empty() ? req.target.substr(0, req.target.find('?')) : req.path;
      for (const Route& route : routes()) {
        if (!std::regex_match(path, route.path)) continue;
        res.set_header("Allow", route.methods);
        send_error(res, 405,
                   str_cat(req.method, " is not allowed on ", req.path,
                           " (allowed: ", route.methods, ")"));
        return;
      }
      if (res.status == 404) {
        send_error(res, 404, str_cat("no route ", req.method, " ", req.path));
        return;
      }
    }
    const char* what = res.status == 413   ? "the request body is larger than --max-body"
                       : res.status == 400 ? "the HTTP request is malformed (a POST body needs a "
                                             "Content-Length)"
                                           : "the request failed";
    send_error(res, res.status, what);
  });
  server_->set_exception_handler([](const Request&, Response& res, std::exception_ptr error) {
    try {
      std::rethrow_exception(std::move(error));
    } catch (const std::exception& e) {
      send_error(res, 500, e.what());
    } catch (...) {
      send_error(res, 500, "unknown error");
    }
  });
  server_->set_logger([this](const Request&, const Response& res) {
    service_.metrics().count_response(res.status);
  });
  add_routes();
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  const int port = options_.port == 0
                       ? server_->bind_to_any_port(options_.host)
                       : (server_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port < 0) fail("cannot listen on ", options_.host, ":", options_.port);
  return port;
}

void HttpServer::listen() {
  server_->listen_after_bind();
}

void HttpServer::stop() {
  server_->stop();
}

// The key is checked in the handler, after httplib has read the body: a
// refused POST then leaves a kept-alive connection ready for the next
// request.
httplib::Server::Handler HttpServer::secured(httplib::Server::Handler handler) const {
  return [this, handler = std::move(handler)](const Request& req, Response& res) {
    if (!options_.api_key.empty() &&
        req.get_header_value("Authorization") != "Bearer " + options_.api_key) {
      send_error(res, 401, "a valid API key is required (Authorization: Bearer KEY)");
      return;
    }
    handler(req, res);
  };
}

void HttpServer::add_routes() {
  httplib::Server& s = *server_;
  Service& service = service_;
  s.Get("/health", [&service](const Request&, Response& res) {
    send(res, 200,
         {{"status", "ok"},
          {"model", service.model_name()},
          {"sessions", service.metrics().sessions.load()}});
  });
  s.Get("/metrics", secured([&service](const Request&, Response& res) {
          res.set_content(service.metrics().prometheus_text(), "text/plain; version=0.0.4");
        }));
  s.Get("/openapi.json", secured([](const Request&, Response& res) {
          res.set_content(kOpenApiDocument, "application/json");
        }));
  s.Post("/sessions", secured([&service](const Request& req, Response& res) {
           guarded(res, [&] { send(res, 201, service.create_session(parse_body(req))); });
         }));
  s.Get("/sessions", secured([&service](const Request&, Response& res) {
          guarded(res, [&] { send(res, 200, service.list_sessions()); });
        }));
  const std::string one = str_cat("/sessions/", kSid);
  s.Get(one, secured([&service](const Request& req, Response& res) {
          guarded(res, [&] { send(res, 200, service.get_session(req.matches[1])); });
        }));
  s.Delete(one, secured([&service](const Request& req, Response& res) {
             guarded(res, [&] { send(res, 200, service.delete_session(req.matches[1])); });
           }));
  s.Post(one + "/events", secured([&service](const Request& req, Response& res) {
           guarded(res,
                   [&] { send(res, 201, service.append_events(req.matches[1], parse_body(req))); });
         }));
  s.Get(one + "/events", secured([&service](const Request& req, Response& res) {
          guarded(res, [&] { send(res, 200, service.list_events(req.matches[1])); });
        }));
  s.Post(one + "/evict", secured([&service](const Request& req, Response& res) {
           guarded(res,
                   [&] { send(res, 200, service.evict(req.matches[1], parse_body(req), false)); });
         }));
  s.Post(one + "/forget", secured([&service](const Request& req, Response& res) {
           guarded(res,
                   [&] { send(res, 200, service.evict(req.matches[1], parse_body(req), true)); });
         }));
  s.Post(one + "/score", secured([&service](const Request& req, Response& res) {
           guarded(res, [&] { send(res, 200, service.score(req.matches[1], parse_body(req))); });
         }));
  s.Get(one + "/contract", secured([&service](const Request& req, Response& res) {
          guarded(res, [&] { send(res, 200, service.contract(req.matches[1])); });
        }));
  s.Post(one + "/snapshot", secured([&service](const Request& req, Response& res) {
           guarded(res, [&] { send(res, 201, service.snapshot(req.matches[1], parse_body(req))); });
         }));
  s.Post(one + "/restore", secured([&service](const Request& req, Response& res) {
           guarded(res, [&] { send(res, 200, service.restore(req.matches[1], parse_body(req))); });
         }));
  s.Post(one + "/generate", secured([this](const Request& req, Response& res) {
           guarded(res, [&] { generate(req, res); });
         }));
  s.Get("/v1/models", secured([&service](const Request&, Response& res) {
          send(res, 200,
               {{"object", "list"},
                {"data", json::array({{{"id", service.model_name()},
                                       {"object", "model"},
                                       {"created", 0},
                                       {"owned_by", "eventkv"}}})}});
        }));
  s.Post("/v1/chat/completions", secured([this](const Request& req, Response& res) {
           guarded(res, [&] { chat(req, res); });
         }));
}

void HttpServer::generate(const Request& req, Response& res) {
  const json body = parse_body(req);
  const std::string sid = req.matches[1];
  const bool stream = body.is_object() && body.value("stream", false);
  const std::shared_ptr<Generation> generation = service_.generate(sid, body);
  if (!stream) {
    send(res, 200, service_.generation_json(generation->result(), sid));
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream",
                                   [this, generation, sid](size_t, httplib::DataSink& sink) {
                                     std::string piece;
                                     while (generation->next_piece(&piece)) {
                                       if (!write_sse(sink, dump({{"text", piece}}))) {
                                         generation->cancel();
                                         return false;
                                       }
                                     }
                                     json last;
                                     try {
                                       last = service_.generation_json(generation->result(), sid);
                                       last["done"] = true;
                                     } catch (const std::exception& e) {
                                       last = error_body(422, e.what());
                                     }
                                     write_sse(sink, dump(last));
                                     write_sse(sink, "[DONE]");
                                     sink.done();
                                     return true;
                                   });
}

void HttpServer::chat(const Request& req, Response& res) {
  const json body = parse_body(req);
  const bool stream = body.is_object() && body.contains("stream") && body["stream"].is_boolean() &&
                      body["stream"].get<bool>();
  const Service::Chat chat = service_.start_chat(body, req.get_header_value("X-Eventkv-Session"));
  const std::string id = completion_id();
  const json head{{"id", id},
                  {"created", static_cast<int64_t>(std::time(nullptr))},
                  {"model", service_.model_name()}};
  if (!stream) {
    GenerationResult result;
    try {
      result = chat.generation->result();
    } catch (...) {
      service_.end_chat(chat);
      throw;
    }
    service_.end_chat(chat);
    json out = head;
    out["object"] = "chat.completion";
    out["choices"] = json::array({{{"index", 0},
                                   {"message", {{"role", "assistant"}, {"content", result.text}}},
                                   {"logprobs", nullptr},
                                   {"finish_reason", result.finish_reason}}});
    out["usage"] = chat_usage(result);
    send(res, 200, out);
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  const auto chunk = [head](const json& delta, const json& finish) {
    json out = head;
    out["object"] = "chat.completion.chunk";
    out["choices"] = json::array(
        {{{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", finish}}});
    return out;
  };
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, chat, chunk, head](size_t, httplib::DataSink& sink) {
        if (!write_sse(sink, dump(chunk({{"role", "assistant"}, {"content", ""}}, nullptr)))) {
          chat.generation->cancel();
          return false;
        }
        std::string piece;
        while (chat.generation->next_piece(&piece)) {
          if (!write_sse(sink, dump(chunk({{"content", piece}}, nullptr)))) {
            chat.generation->cancel();
            return false;
          }
        }
        try {
          const GenerationResult& result = chat.generation->result();
          write_sse(sink, dump(chunk(json::object(), result.finish_reason)));
          if (chat.include_usage) {
            json usage = head;
            usage["object"] = "chat.completion.chunk";
            usage["choices"] = json::array();
            usage["usage"] = chat_usage(result);
            write_sse(sink, dump(usage));
          }
        } catch (const std::exception& e) {
          write_sse(sink, dump(error_body(422, e.what())));
        }
        write_sse(sink, "[DONE]");
        sink.done();
        return true;
      },
      [this, chat](bool) {
        try {
          chat.generation->result();
        } catch (const std::exception&) {
          // Already reported in the stream.
        }
        service_.end_chat(chat);
      });
}

}  // namespace eventkv::serve
