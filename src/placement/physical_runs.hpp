#pragma once

// How scattered a buffer is in physical memory: the runs of physically contiguous pages its
// virtual pages form, from /proc/self/pagemap. An O_DIRECT read gathers one segment per run, so a
// 1 MiB read into a slot of 256 scattered 4 KiB pages is a request of 256 segments (split where
// the disk takes fewer, as virtio's 254), one into a slot of 1 run is a request of one. The
// read rate on a virtio disk followed the runs, not the kind of memory: cudaHostAlloc'd slots
// read at the hugetlb rate in one run and at the 4 KiB rate in another (docs/measurements.md,
// twenty-sixth session). pagemap gives frame numbers only to CAP_SYS_ADMIN; to anyone else they
// read 0 and the runs are unknown.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pathbench {

// The runs among pagemap entries of consecutive 4 KiB virtual pages: a run continues while each
// page's frame is the one after the previous page's. Nothing when a page is not present or its
// frame number reads 0 (hidden); 0 for no entries.
std::optional<std::uint64_t> count_physical_runs(std::span<const std::uint64_t> entries);

// This process's pagemap entries for the pages of [address, address + bytes) (whole pages, so
// an unaligned range includes the pages it touches); nothing when pagemap cannot be opened or
// read.
std::optional<std::vector<std::uint64_t>> read_pagemap(const void* address, std::uint64_t bytes);

// The runs of each range in `ranges` (address, bytes); nothing when pagemap cannot be read or
// hides frame numbers, or a page is not present.
struct PhysicalRunsSummary {
  std::uint64_t ranges = 0;
  std::uint64_t min_runs = 0, median_runs = 0, max_runs = 0;
  std::uint64_t pages_per_range = 0;  // the largest range's pages: its runs' upper bound
};
std::optional<PhysicalRunsSummary> summarize_physical_runs(
    std::span<const std::span<const std::byte>> ranges);

// For a check's text: "the slots' pages lay in 1-256 runs of physically contiguous memory per
// slot (median 256, of 256 pages): an O_DIRECT read gathers one segment per run", adding ", more
// than the disk's max_segments (254): a read into such a slot is split into several requests"
// where a slot has more runs than `max_segments`; when `runs` is empty, that the layout is
// unknown and why.
std::string describe_slot_runs(const std::optional<PhysicalRunsSummary>& runs,
                               std::optional<std::uint64_t> max_segments);

}  // namespace pathbench
