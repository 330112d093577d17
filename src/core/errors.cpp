#include "core/errors.hpp"

#include <cstring>

namespace pathbench {

SystemError::SystemError(const std::string& call, int err)
    : std::runtime_error(call + " failed: " + std::strerror(err)), errno_(err) {}

}  // namespace pathbench
