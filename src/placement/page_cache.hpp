#pragma once

// The page cache's hold on a file: how much of it is resident (mincore on a fresh mapping, which
// faults nothing in), dropping it (fdatasync, then POSIX_FADV_DONTNEED), and filling it (one
// buffered read of the whole file). The storage family's cold and warm cases rest on these.

#include <cstdint>

namespace pathbench {

// Fraction (0..1) of the file's first `bytes` whose pages are in the page cache. Throws
// SystemError when the file cannot be mapped or mincore fails.
double resident_fraction(int fd, std::uint64_t bytes);

// Writes back anything dirty (fdatasync: DONTNEED leaves dirty pages) and asks the kernel to
// drop the file's cached pages. Throws SystemError when either call fails. Pages another mapping
// holds stay: the caller checks with resident_fraction().
void drop_from_page_cache(int fd);

// Reads the file's first `bytes` once through the page cache (fd opened without O_DIRECT).
// Throws SystemError on a failed read, CaseFailure when the file is shorter.
void read_through_page_cache(int fd, std::uint64_t bytes);

}  // namespace pathbench
