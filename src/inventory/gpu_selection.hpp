#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pathbench {

// The GPUs the multi-GPU cases use (`run --devices`, Machine::selected_gpus) and the peer family's
// pair values ("S-D").

// The value of a `pair` axis when {"gpu_pairs": "all"} finds fewer than two selected GPUs: the
// scenario still expands to cases, each skipped with the reason.
inline constexpr const char* kNoGpuPair = "none";

// `--devices` text: "all" (every GPU in `available`) or a comma list of CUDA indexes ("0,1",
// spaces allowed). Returns the indexes sorted. Throws InputError (file `option`) naming the item:
// not an index, listed twice, or not one of `available`.
std::vector<int> parse_device_list(std::string_view text, const std::vector<int>& available,
                                   const std::string& option = "--devices");

// Every ordered pair "S-D" (S != D) of `gpus`, by (S, D); empty with fewer than two GPUs.
std::vector<std::string> gpu_pair_values(const std::vector<int>& gpus);

// "3-1" -> {3, 1}. Nothing for anything else (a sign, spaces, S == D, "none").
std::optional<std::pair<int, int>> parse_gpu_pair(std::string_view text);

// "0, 1, 3"
std::string join_indexes(const std::vector<int>& indexes);

}  // namespace pathbench
