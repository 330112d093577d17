#pragma once

#include <string>

#include "result/result.hpp"

namespace pathbench {

// Renders a result in the Prometheus text exposition format for node_exporter's textfile
// collector. Base units (seconds, bytes); one gauge family per metric kind, e.g.
//   pathbench_copy_bandwidth_bytes_per_second{direction,host_memory,host_node,bytes,gpu,node_type}
//   pathbench_copy_time_per_copy_seconds{...}
//   pathbench_host_memory_memcpy_bandwidth_bytes_per_second{cpu_node,mem_node,page,bytes,node_type}
// plus pathbench_info{...context labels...} 1, pathbench_case_status{id,status} and
// pathbench_result_timestamp_seconds. Values are medians.
std::string prometheus_exposition(const Result& result);

}  // namespace pathbench
