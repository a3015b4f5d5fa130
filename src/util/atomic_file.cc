#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "util/error.h"

namespace eventkv {
namespace {

void write_all(int fd, std::span<const uint8_t> bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(path, ": write failed: ", std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void write_file_atomic(const std::string& path, std::span<const uint8_t> bytes) {
  std::string temp_path = path + ".tmp-XXXXXX";
  std::vector<char> pattern(temp_path.begin(), temp_path.end());
  pattern.push_back('\0');
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) fail(path, ": cannot create a temporary file: ", std::strerror(errno));
  temp_path.assign(pattern.data());
  try {
    write_all(fd, bytes, temp_path);
    if (::fsync(fd) != 0) fail(temp_path, ": fsync failed: ", std::strerror(errno));
    if (::fchmod(fd, 0644) != 0) fail(temp_path, ": chmod failed: ", std::strerror(errno));
  } catch (...) {
    ::close(fd);
    std::remove(temp_path.c_str());
    throw;
  }
  ::close(fd);
  if (std::rename(temp_path.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temp_path.c_str());
    fail(path, ": cannot rename the temporary file into place: ", std::strerror(err));
  }
}

}  // namespace eventkv
