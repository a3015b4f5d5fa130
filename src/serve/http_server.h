// The HTTP surface of the server (cpp-httplib): the native session API and
// the OpenAI-compatible chat endpoints, described by /openapi.json. Bearer
// key on every route but /health; every error a JSON object with a 4xx
// status for bad input; bodies bounded; replies streamed as server-sent
// events.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "serve/service.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace eventkv::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  std::string api_key;
  size_t max_body = 1 << 20;
  int http_threads = 0;  // 0: enough for every queued request
};

class HttpServer {
 public:
  HttpServer(Service& service, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds; returns the port (throws Error when it cannot).
  int bind();
  // Serves until stop().
  void listen();
  void stop();

 private:
  void add_routes();
  std::function<void(const httplib::Request&, httplib::Response&)> secured(
      std::function<void(const httplib::Request&, httplib::Response&)> handler) const;
  void generate(const httplib::Request& req, httplib::Response& res);
  void chat(const httplib::Request& req, httplib::Response& res);

  Service& service_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> server_;
};

// The OpenAPI 3.1 document (src/serve/openapi.json, embedded at build time).
extern const char* const kOpenApiDocument;

}  // namespace eventkv::serve
