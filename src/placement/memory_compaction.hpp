#pragma once

// Compacting all memory on request (/proc/sys/vm/compact_memory), so that a transparent huge page
// fault right after finds free 2 MiB blocks instead of compacting in its own fault path (a
// MADV_HUGEPAGE fault under defrag=madvise does), whose cost follows how fragmented free memory
// happens to be.

#include <filesystem>
#include <string>

namespace pathbench {

struct CompactionOutcome {
  bool compacted = false;
  std::string why_not;  // empty when compacted
};

// Writes "1" to <root>/proc/sys/vm/compact_memory; the kernel compacts every node before the
// write returns. Not being allowed to (not root, a read-only /proc/sys in a container, a kernel
// without CONFIG_COMPACTION) is an outcome, not an error: why_not says which.
CompactionOutcome compact_memory(const std::filesystem::path& root = "/");

}  // namespace pathbench
