#pragma once

#include <memory>
#include <string>

#include "result/result.hpp"
#include "result/run_context.hpp"

namespace pathbench {

// Renders a result in the Prometheus text exposition format 0.0.4, for node_exporter's textfile
// collector (write it to <dir>/<name>.prom). Every family is a gauge; values are medians,
// converted to base units, labelled as dcgm-exporter labels a GPU's series:
//   pathbench_<family>_<metric>_<unit>{<case params>...,gpu,UUID,pci_bus_id,modelName,
//                                      Hostname,node_type,run_gpu}
//   pathbench_copy_bandwidth_bytes_per_second{measure,direction,host_memory,host_node,bytes,...}
//     (copy gpus=all: one series per GPU, gpu="<N>", from the result's bandwidth_gpu<N>)
//   pathbench_copy_time_per_copy_seconds{...}
//   pathbench_host_memory_cost_seconds_per_byte{measure,page,bytes,Hostname,node_type,run_gpu}
//     (host series: no GPU labels)
// plus, for the run as a whole:
//   pathbench_info{tool_version,git_sha,...,gpu,UUID,pci_bus_id,modelName,...,Hostname,...} 1
//   pathbench_case_status{id,family,status,gpu,UUID,...,Hostname,node_type,run_gpu} 1 (per case)
//   pathbench_result_start_timestamp_seconds, pathbench_result_end_timestamp_seconds
// Skipped and failed cases have no value series, only their pathbench_case_status.
// The naming rules are spelled out in prometheus.cpp. The context is read as the file "result"
// (a result built in code); pathbench export reads it naming its file (PrometheusExposition).
std::string prometheus_exposition(const Result& result);

// The same, built case by case, so that a large result need never be held whole (pathbench export
// reads it so): add() every case in the result's order, then render() with the run's other fields
// (start and end time, complete; its `cases` are not read) and its context. The series are kept
// compactly until render(), which writes the text in one allocation.
class PrometheusExposition {
 public:
  PrometheusExposition();
  ~PrometheusExposition();
  PrometheusExposition(PrometheusExposition&&) noexcept;
  PrometheusExposition& operator=(PrometheusExposition&&) noexcept;

  void add(const CaseResult& c);
  std::string render(const Result& run, const RunContext& context) const;

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace pathbench
