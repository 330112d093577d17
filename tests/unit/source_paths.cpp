#include "tests/unit/source_paths.hpp"

namespace pathbench::test {
const char* source_dir() { return PATHBENCH_SOURCE_DIR_PATH; }
const char* fixtures_dir() { return PATHBENCH_FIXTURES_PATH; }
}  // namespace pathbench::test
