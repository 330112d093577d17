#pragma once

#include <string>
#include <string_view>

namespace pathbench {

// Text made safe for XML and HTML character data and attribute values: & < > " ' escaped, and
// control characters XML 1.0 forbids even when escaped replaced by '?'.
std::string markup_escape(std::string_view text);

}  // namespace pathbench
