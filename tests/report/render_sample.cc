// Writes the sample report (sample_report.h) as HTML to the path given, for
// the Chromium check (chromium_check.sh).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "report/html.h"
#include "sample_report.h"
#include "util/atomic_file.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.html\n", argv[0]);
    return 2;
  }
  try {
    const std::string page = eventkv::report::render_html(eventkv::testing::sample_report());
    eventkv::write_file_atomic(argv[1],
                               {reinterpret_cast<const uint8_t*>(page.data()), page.size()});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "render_sample: %s\n", e.what());
    return 1;
  }
  return 0;
}
