#include "tests/unit/source_paths.hpp"

#include "tests/unit/helper_paths.hpp"

namespace pathbench::test {
const char* source_dir() { return PATHBENCH_SOURCE_DIR_PATH; }
const char* fixtures_dir() { return PATHBENCH_FIXTURES_PATH; }
const char* latency_fuse_helper() { return PATHBENCH_LATENCY_FUSE_PATH; }
}  // namespace pathbench::test
