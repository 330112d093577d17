#include "core/option_values.hpp"

#include <charconv>
#include <string>
#include <system_error>

#include "core/errors.hpp"

namespace pathbench {

std::int64_t parse_integer_option(std::string_view name, std::string_view text, std::int64_t min,
                                  std::int64_t max) {
  const auto refuse = [&] {
    return InputError::option(std::string(name), "expected an integer in [" + std::to_string(min) +
                                                     ", " + std::to_string(max) + "], found \"" +
                                                     std::string(text) + "\"");
  };
  // from_chars takes no sign but '-', no white space, no base prefix; the whole text must be used.
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value, 10);
  if (text.empty() || error != std::errc() || stop != end || value < min || value > max) {
    throw refuse();
  }
  return value;
}

}  // namespace pathbench
