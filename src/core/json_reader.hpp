#pragma once

// The strict JSON reader every JSON input of pathbench goes through (scenario files, results,
// baselines). Built on nlohmann's SAX interface, it reads a file in chunks (never the whole text
// in one string) and builds nlohmann::ordered_json values (key order kept), refusing with
// InputError(file, JSON pointer, message):
//   - a key that appears twice in one object (the pointer of the second occurrence; the message
//     gives the byte offsets of both): nlohmann would keep the last one silently, other readers
//     the first, so the file means different things to different tools;
//   - nesting deeper than kMaxJsonDepth (core/json_text.hpp);
//   - a number beyond double's range (1e999), the message naming its pointer;
//   - a NUL byte anywhere (nlohmann's lexer takes one for the end of the input), and more than
//     kMaxJsonWhiteSpaceRun bytes of white space in a row;
//   - anything that is not JSON, with the byte offset.
// White space outside strings is skipped as it is read: it is never kept, whatever its amount.
// A UTF-8 byte order mark at the start is accepted.
//
// The elements of one array (JsonReadOptions::stream_array, e.g. "/cases") can be handed to a
// callback one at a time as each completes, instead of being kept: a 2 GB result is then
// converted case by case and never held as one document.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pathbench {

// The most white space in a row (outside strings) a JSON input may hold: a pathbench document
// never has more than a line's indentation, and a file padded with a GB of spaces is refused once
// this much is read instead of at its end.
inline constexpr std::uint64_t kMaxJsonWhiteSpaceRun = std::uint64_t{64} << 20;

struct JsonReadOptions {
  // A file larger than this is refused before it is read (and one that grows past it while
  // being read).
  std::uint64_t max_bytes = std::uint64_t{1} << 40;
  // The JSON pointer of an array whose elements go to on_element instead of the document (which
  // holds an empty array there). Empty: none. Only an array at exactly this pointer is streamed;
  // anything else there is kept in the document as usual, for the caller's checks to name.
  std::string stream_array;
  // Called with each element of stream_array as it completes, in order, with its index and the
  // document read so far (everything before the array, and the array itself, empty). An exception
  // it throws ends the read and propagates.
  std::function<void(nlohmann::ordered_json&& element, std::size_t index,
                     const nlohmann::ordered_json& document)>
      on_element;
};

// What a JSON value is, in the words pathbench's messages use: "integer" and "number" (a
// float) apart, else nlohmann's type name ("string", "object", "array", "boolean", "null").
template <typename Json>
std::string json_kind(const Json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();
}

// Reads and parses `path`: a regular file only (a FIFO, device or directory is refused at once,
// without blocking), at most options.max_bytes. Every failure, unreadable file included, is an
// InputError naming `path`.
nlohmann::ordered_json read_json_file(const std::filesystem::path& path,
                                      const JsonReadOptions& options = {});

// The same rules for a text already in memory (a scenario file); `file` names it in errors.
nlohmann::ordered_json parse_json_text(std::string_view text, const std::string& file,
                                       const JsonReadOptions& options = {});

}  // namespace pathbench
