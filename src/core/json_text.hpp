#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pathbench {

// Escapes an object key for use as one JSON pointer token (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string pointer_token(std::string_view key);

// The deepest nesting of arrays and objects in a JSON text, found without parsing it, so a
// hostile file is refused before a recursive parser or converter can overflow the stack.
std::size_t json_nesting_depth(std::string_view text);

inline constexpr std::size_t kMaxJsonDepth = 64;

// An optional field: its value, or null when absent.
template <typename T>
nlohmann::ordered_json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace pathbench
