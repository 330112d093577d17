#pragma once
// Where the tests find the helper programs built with them (tests/helpers). Defined in
// source_paths.cpp with the other absolute paths; a header of its own so that adding a helper
// does not change source_paths.hpp, which most test files include (each would miss the compiler
// cache once).

namespace pathbench::test {
// tests/helpers/latency_fuse as built, or "" where libfuse3 was not found at configure time.
const char* latency_fuse_helper();
}  // namespace pathbench::test
