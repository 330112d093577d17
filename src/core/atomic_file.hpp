#pragma once

#include <filesystem>
#include <string_view>

namespace pathbench {

// Writes `content` to a temporary file beside `path`, flushes it and renames it into place, so a
// reader never sees a half-written result, even when the process dies mid-write.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

std::string read_text_file(const std::filesystem::path& path);

}  // namespace pathbench
