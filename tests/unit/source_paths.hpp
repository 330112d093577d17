#pragma once
// Where the tests find the source tree and its fixtures. The absolute paths are compiled into
// source_paths.cpp alone: as -D flags on every test file they would make each file's compiler
// cache key depend on where the clone lives, and a fresh clone would recompile every test.

namespace pathbench::test {
const char* source_dir();    // the repository root
const char* fixtures_dir();  // tests/fixtures
}  // namespace pathbench::test

#define PATHBENCH_SOURCE_DIR (::pathbench::test::source_dir())
#define PATHBENCH_FIXTURES (::pathbench::test::fixtures_dir())
