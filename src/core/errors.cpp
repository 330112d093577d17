#include "core/errors.hpp"

#include <cerrno>
#include <cstring>

namespace pathbench {

SystemError::SystemError(const std::string& call, int err)
    : std::runtime_error(call + " failed: " + std::strerror(err)), errno_(err) {}

void throw_write_error(const std::string& call, int err) {
  if (err == ENOSPC || err == EDQUOT) throw DiskFull(call, err);
  throw SystemError(call, err);
}

}  // namespace pathbench
