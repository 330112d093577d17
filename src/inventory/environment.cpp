#include "inventory/environment.hpp"
#include "core/json_text.hpp"
#include "core/text.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

#include "core/units.hpp"
#include "inventory/gpu_environment_smi.hpp"
#include "inventory/nvidia_smi_run.hpp"
#include "inventory/nvml_library.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench {
namespace {

constexpr std::string_view kSpace = " \t\r\n";

// Splits at runs of blanks.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  while (true) {
    const auto start = text.find_first_not_of(kSpace);
    if (start == std::string_view::npos) return out;
    text = text.substr(start);
    const auto end = text.find_first_of(kSpace);
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) return out;
    text = text.substr(end);
  }
}

template <typename T>
std::optional<T> whole_number(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Bit order of nvml.h's nvmlClocksEventReason* constants (0x1 .. 0x100).
constexpr std::string_view kReasonNames[] = {"gpu_idle",
                                             "applications_clocks_setting",
                                             "sw_power_cap",
                                             "hw_slowdown",
                                             "sync_boost",
                                             "sw_thermal_slowdown",
                                             "hw_thermal_slowdown",
                                             "hw_power_brake_slowdown",
                                             "display_clock_setting"};

// ---- host --------------------------------------------------------------------------------------

std::vector<std::string> read_cpu_governors(const std::filesystem::path& root) {
  std::set<std::string> governors;
  std::error_code ec;
  std::filesystem::directory_iterator it(root / "sys/devices/system/cpu", ec);
  if (ec) return {};
  for (const std::filesystem::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    // cpu0, cpu1, ...: not cpufreq, cpuidle or cpu hot-plug controls.
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
        !std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    if (auto text = read_file_if_present(it->path() / "cpufreq/scaling_governor")) {
      if (auto governor = trim(*text); !governor.empty()) governors.emplace(governor);
    }
  }
  return {governors.begin(), governors.end()};
}

std::optional<std::uint64_t> read_aer_total(const std::filesystem::path& root,
                                            const std::string& bus_id, const char* file,
                                            std::string_view key) {
  if (bus_id.empty()) return std::nullopt;
  auto text = read_file_if_present(root / "sys/bus/pci/devices" / bus_id / file);
  return text ? parse_aer_total(*text, key) : std::nullopt;
}

// ---- GPUs through nvidia-smi
// ---------------------------------------------------------------------

void sample_gpus_with_nvidia_smi(std::vector<GpuEnvironment>& gpus, const std::string& nvml_why) {
  SmiRun state = run_nvidia_smi(nvidia_smi_state_argv());
  if (!state.text && state.ran) {
    // Drivers before 535 know the mask only as clocks_throttle_reasons.active.
    SmiRun legacy = run_nvidia_smi(nvidia_smi_state_argv(true));
    if (legacy.text) state = std::move(legacy);
  }
  std::vector<SmiGpuState> rows;
  if (state.text) {
    try {
      rows = parse_nvidia_smi_state(*state.text);
    } catch (const std::invalid_argument& e) {
      state.text.reset();
      state.error = std::string("output not understood: ") + e.what();
    }
  }
  const std::string unavailable = "unavailable: NVML: " + nvml_why + "; nvidia-smi: ";
  if (!state.text) {
    for (auto& gpu : gpus) gpu.source = unavailable + state.error;
    return;
  }

  std::optional<std::vector<SmiComputeApp>> apps;
  if (SmiRun run = run_nvidia_smi(nvidia_smi_compute_apps_argv()); run.text) {
    try {
      apps = parse_nvidia_smi_compute_apps(*run.text);
    } catch (const std::invalid_argument&) {
      // Processes stay unknown (null), which is what the result must say; the GPU state is fine.
    }
  }

  for (auto& gpu : gpus) {
    // By bus id only: nvidia-smi's indexes follow PCI order, the inventory's follow CUDA's.
    auto row = std::find_if(rows.begin(), rows.end(), [&](const SmiGpuState& r) {
      return !gpu.pci_bus_id.empty() && r.pci_bus_id == gpu.pci_bus_id;
    });
    if (row == rows.end()) {
      gpu.source = unavailable + "no GPU at " +
                   (gpu.pci_bus_id.empty() ? std::string("an unknown bus id") : gpu.pci_bus_id);
      continue;
    }
    gpu.source = "nvidia-smi";
    gpu.clock_sm_mhz = row->clock_sm_mhz;
    gpu.clock_mem_mhz = row->clock_mem_mhz;
    gpu.temperature_c = row->temperature_c;
    gpu.power_w = row->power_w;
    gpu.power_limit_w = row->power_limit_w;
    gpu.clock_event_reasons_mask = row->clock_event_reasons_mask;
    if (row->clock_event_reasons_mask) {
      gpu.clock_event_reasons = decode_clock_event_reasons(*row->clock_event_reasons_mask);
    }
    if (apps) {
      std::vector<GpuProcess> processes;
      for (const auto& app : *apps) {
        if (app.pci_bus_id != gpu.pci_bus_id) continue;
        processes.push_back(GpuProcess{app.pid, app.name, app.used_memory_bytes, false});
      }
      gpu.processes = std::move(processes);
    }
  }
}

std::vector<GpuEnvironment> sample_gpus(const Inventory& inventory,
                                        const std::filesystem::path& root) {
  std::vector<GpuEnvironment> gpus;
  for (const auto& g : inventory.gpus) {
    GpuEnvironment gpu;
    gpu.index = g.index;
    gpu.pci_bus_id = g.pci_bus_id;
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) return gpus;

  std::string nvml_why;
  try {
    const NvmlSession nvml;
    for (auto& gpu : gpus) nvml.sample(gpu);
  } catch (const std::exception& e) {
    nvml_why = e.what();
  }
  if (!nvml_why.empty()) sample_gpus_with_nvidia_smi(gpus, nvml_why);

  const auto self = static_cast<unsigned>(::getpid());
  for (auto& gpu : gpus) {
    if (gpu.processes) {
      for (auto& process : *gpu.processes) {
        process.self = process.pid == self;
        // The short name the kernel keeps; nvidia-smi's (a path) stays when /proc hides the pid
        // (another PID namespace).
        const auto comm =
            read_file_if_present(root / "proc" / std::to_string(process.pid) / "comm");
        if (comm && !trim(*comm).empty()) process.name = std::string(trim(*comm));
      }
    }
    gpu.aer_correctable =
        read_aer_total(root, gpu.pci_bus_id, "aer_dev_correctable", "TOTAL_ERR_COR");
    gpu.aer_nonfatal =
        read_aer_total(root, gpu.pci_bus_id, "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL");
    gpu.aer_fatal = read_aer_total(root, gpu.pci_bus_id, "aer_dev_fatal", "TOTAL_ERR_FATAL");
  }
  return gpus;
}

// ---- JSON
// ----------------------------------------------------------------------------------------

nlohmann::ordered_json gpu_json(const GpuEnvironment& gpu) {
  nlohmann::ordered_json j;
  j["index"] = gpu.index;
  j["pci_bus_id"] = gpu.pci_bus_id;
  j["source"] = gpu.source;
  j["clock_sm_mhz"] = optional_json(gpu.clock_sm_mhz);
  j["clock_mem_mhz"] = optional_json(gpu.clock_mem_mhz);
  j["temperature_c"] = optional_json(gpu.temperature_c);
  j["power_w"] = optional_json(gpu.power_w);
  j["power_limit_w"] = optional_json(gpu.power_limit_w);
  j["clock_event_reasons"] = gpu.clock_event_reasons;
  j["clock_event_reasons_mask"] = optional_json(gpu.clock_event_reasons_mask);
  if (gpu.processes) {
    auto& processes = j["processes"] = nlohmann::ordered_json::array();
    for (const auto& process : *gpu.processes) {
      nlohmann::ordered_json p;
      p["pid"] = process.pid;
      p["name"] = process.name.empty() ? nlohmann::ordered_json(nullptr)
                                       : nlohmann::ordered_json(process.name);
      p["used_memory_bytes"] = optional_json(process.used_memory_bytes);
      p["self"] = process.self;
      processes.push_back(std::move(p));
    }
  } else {
    j["processes"] = nullptr;
  }
  j["pcie_replay_counter"] = optional_json(gpu.pcie_replay_counter);
  j["aer_correctable"] = optional_json(gpu.aer_correctable);
  j["aer_nonfatal"] = optional_json(gpu.aer_nonfatal);
  j["aer_fatal"] = optional_json(gpu.aer_fatal);
  return j;
}

nlohmann::ordered_json vm_counters_json(const VmCounters& counters) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  vm_counter_fields(
      [&](const char* name, VmCounter field) { j[name] = optional_json(counters.*field); });
  return j;
}

// Typed access to one JSON object; every mismatch names its pointer.
class Fields {
 public:
  Fields(const nlohmann::json& object, std::string pointer)
      : object_(object), pointer_(std::move(pointer)) {
    if (!object_.is_object()) fail("", "an object", object_);
  }

  // Missing or null leaves `out` as it is (optionals: empty).
  template <typename T>
  void get(const char* key, T& out) const {
    const auto* value = find(key);
    if (value != nullptr) out = convert<T>(key, *value);
  }
  template <typename T>
  void get(const char* key, std::optional<T>& out) const {
    const auto* value = find(key);
    if (value == nullptr) {
      out.reset();
    } else {
      out = convert<T>(key, *value);
    }
  }

  // The array at `key` (nullptr when missing or null).
  const nlohmann::json* array(const char* key) const {
    const auto* value = find(key);
    if (value != nullptr && !value->is_array()) fail(key, "an array", *value);
    return value;
  }
  const nlohmann::json* object(const char* key) const {
    const auto* value = find(key);
    if (value != nullptr && !value->is_object()) fail(key, "an object", *value);
    return value;
  }

  std::string pointer(const char* key) const { return pointer_ + "/" + key; }

 private:
  const nlohmann::json* find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  template <typename T>
  T convert(const char* key, const nlohmann::json& value) const {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!value.is_string()) fail(key, "a string", value);
      return value.get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!value.is_boolean()) fail(key, "a boolean", value);
      return value.get<bool>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!value.is_number()) fail(key, "a number", value);
      return value.get<T>();
    } else {
      static_assert(std::is_integral_v<T>);
      // nlohmann would turn 3.7 into 3 and -1 into 2^64-1 without a word.
      if (!value.is_number_integer()) fail(key, "an integer", value);
      if (value.is_number_unsigned()) {
        const auto v = value.get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
          fail(key, "a smaller integer", value);
        }
        return static_cast<T>(v);
      }
      const auto v = value.get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (v < 0) fail(key, "a non-negative integer", value);
      } else {
        if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
          fail(key, "a smaller integer", value);
        }
      }
      return static_cast<T>(v);
    }
  }

  [[noreturn]] void fail(const char* key, const char* expected, const nlohmann::json& value) const {
    const std::string where = *key == '\0' ? pointer_ : pointer_ + "/" + key;
    throw std::invalid_argument("environment JSON " + (where.empty() ? "/" : where) +
                                ": expected " + expected + ", got " + value.dump());
  }

  const nlohmann::json& object_;
  std::string pointer_;
};

GpuEnvironment gpu_from_json(const nlohmann::json& json, const std::string& pointer) {
  const Fields f(json, pointer);
  GpuEnvironment gpu;
  f.get("index", gpu.index);
  f.get("pci_bus_id", gpu.pci_bus_id);
  f.get("source", gpu.source);
  f.get("clock_sm_mhz", gpu.clock_sm_mhz);
  f.get("clock_mem_mhz", gpu.clock_mem_mhz);
  f.get("temperature_c", gpu.temperature_c);
  f.get("power_w", gpu.power_w);
  f.get("power_limit_w", gpu.power_limit_w);
  if (const auto* reasons = f.array("clock_event_reasons")) {
    for (std::size_t i = 0; i < reasons->size(); ++i) {
      const auto& reason = (*reasons)[i];
      if (!reason.is_string()) {
        throw std::invalid_argument("environment JSON " + f.pointer("clock_event_reasons") + "/" +
                                    std::to_string(i) + ": expected a string, got " +
                                    reason.dump());
      }
      gpu.clock_event_reasons.push_back(reason.get<std::string>());
    }
  }
  f.get("clock_event_reasons_mask", gpu.clock_event_reasons_mask);
  if (const auto* processes = f.array("processes")) {
    gpu.processes.emplace();
    for (std::size_t i = 0; i < processes->size(); ++i) {
      const Fields p((*processes)[i], f.pointer("processes") + "/" + std::to_string(i));
      GpuProcess process;
      p.get("pid", process.pid);
      p.get("name", process.name);
      p.get("used_memory_bytes", process.used_memory_bytes);
      p.get("self", process.self);
      gpu.processes->push_back(std::move(process));
    }
  }
  f.get("pcie_replay_counter", gpu.pcie_replay_counter);
  f.get("aer_correctable", gpu.aer_correctable);
  f.get("aer_nonfatal", gpu.aer_nonfatal);
  f.get("aer_fatal", gpu.aer_fatal);
  return gpu;
}

}  // namespace

// ---- parsers
// -------------------------------------------------------------------------------------

std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view text) {
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    const auto fields = words(line);
    // The aggregate line is "cpu"; "cpu0", "cpu1", ... are the per-CPU lines.
    if (fields.empty() || fields[0] != "cpu") continue;
    std::uint64_t values[8] = {};
    const std::size_t count = std::min<std::size_t>(fields.size() - 1, 8);
    if (count < 4) return std::nullopt;
    for (std::size_t i = 0; i < count; ++i) {
      auto value = whole_number<std::uint64_t>(fields[i + 1]);
      if (!value) return std::nullopt;
      values[i] = *value;
    }
    return CpuTimes{values[0], values[1], values[2], values[3],
                    values[4], values[5], values[6], values[7]};
  }
  return std::nullopt;
}

std::optional<std::array<double, 3>> parse_loadavg(std::string_view text) {
  const auto fields = words(text);
  if (fields.size() < 3) return std::nullopt;
  std::array<double, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    auto [end, ec] = std::from_chars(fields[i].data(), fields[i].data() + fields[i].size(), out[i]);
    if (ec != std::errc{} || end != fields[i].data() + fields[i].size() || out[i] < 0) {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<std::uint64_t> parse_aer_total(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const auto fields = words(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (fields.size() == 2 && fields[0] == key) return whole_number<std::uint64_t>(fields[1]);
  }
  return std::nullopt;
}

std::vector<std::string> decode_clock_event_reasons(std::uint64_t mask) {
  std::vector<std::string> names;
  for (unsigned bit = 0; bit < 64; ++bit) {
    const std::uint64_t flag = std::uint64_t{1} << bit;
    if ((mask & flag) == 0) continue;
    if (bit < std::size(kReasonNames)) {
      names.emplace_back(kReasonNames[bit]);
    } else {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "unknown_0x%llx", static_cast<unsigned long long>(flag));
      names.emplace_back(buffer);
    }
  }
  return names;
}

std::optional<CpuShare> cpu_share(const CpuTimes& start, const CpuTimes& end) {
  // Per field, a counter that went backwards (iowait does on some tickless kernels) counts 0.
  auto delta = [](std::uint64_t a, std::uint64_t b) { return b > a ? double(b - a) : 0.0; };
  const double user = delta(start.user, end.user) + delta(start.nice, end.nice);
  const double system = delta(start.system, end.system) + delta(start.irq, end.irq) +
                        delta(start.softirq, end.softirq);
  const double idle = delta(start.idle, end.idle);
  const double iowait = delta(start.iowait, end.iowait);
  const double steal = delta(start.steal, end.steal);
  const double total = user + system + idle + iowait + steal;
  if (total <= 0) return std::nullopt;
  return CpuShare{100.0 * steal / total, 100.0 * iowait / total, 100.0 * (user + system) / total};
}

// ---- collection
// ----------------------------------------------------------------------------------

EnvironmentSample collect_environment_sample(const Inventory& inventory,
                                             const std::filesystem::path& root) {
  EnvironmentSample sample;
  // Each part on its own: one that fails (an allocation, a clock) must not cost the others.
  try {
    sample.time = iso8601_utc_now();
  } catch (const std::exception&) {
  }
  try {
    if (auto text = read_file_if_present(root / "proc/stat"))
      sample.cpu = parse_proc_stat_cpu(*text);
    if (auto text = read_file_if_present(root / "proc/loadavg")) {
      sample.loadavg = parse_loadavg(*text);
    }
    sample.cpu_governors = read_cpu_governors(root);
  } catch (const std::exception&) {
  }
  try {
    sample.vmstat = read_vmstat(root);
  } catch (const std::exception&) {
  }
  try {
    sample.gpus = sample_gpus(inventory, root);
  } catch (const std::exception&) {
  }
  return sample;
}

// ---- JSON
// ----------------------------------------------------------------------------------------

nlohmann::ordered_json to_json(const EnvironmentSample& sample) {
  nlohmann::ordered_json j;
  j["time"] = sample.time;
  if (sample.cpu) {
    const CpuTimes& c = *sample.cpu;
    nlohmann::ordered_json cpu;
    cpu["user"] = c.user;
    cpu["nice"] = c.nice;
    cpu["system"] = c.system;
    cpu["idle"] = c.idle;
    cpu["iowait"] = c.iowait;
    cpu["irq"] = c.irq;
    cpu["softirq"] = c.softirq;
    cpu["steal"] = c.steal;
    j["cpu"] = std::move(cpu);
  } else {
    j["cpu"] = nullptr;
  }
  j["loadavg"] = optional_json(sample.loadavg);
  j["cpu_governors"] = sample.cpu_governors;
  j["vmstat"] = sample.vmstat ? vm_counters_json(*sample.vmstat) : nlohmann::ordered_json(nullptr);
  auto& gpus = j["gpus"] = nlohmann::ordered_json::array();
  for (const auto& gpu : sample.gpus) gpus.push_back(gpu_json(gpu));
  return j;
}

EnvironmentSample environment_sample_from_json(const nlohmann::json& json,
                                               const std::string& pointer) {
  const Fields f(json, pointer);
  EnvironmentSample sample;
  f.get("time", sample.time);
  if (const auto* cpu = f.object("cpu")) {
    const Fields c(*cpu, f.pointer("cpu"));
    CpuTimes t;
    c.get("user", t.user);
    c.get("nice", t.nice);
    c.get("system", t.system);
    c.get("idle", t.idle);
    c.get("iowait", t.iowait);
    c.get("irq", t.irq);
    c.get("softirq", t.softirq);
    c.get("steal", t.steal);
    sample.cpu = t;
  }
  if (const auto* loadavg = f.array("loadavg")) {
    std::array<double, 3> values{};
    if (loadavg->size() != 3 || !std::all_of(loadavg->begin(), loadavg->end(),
                                             [](const auto& v) { return v.is_number(); })) {
      throw std::invalid_argument("environment JSON " + f.pointer("loadavg") +
                                  ": expected three numbers, got " + loadavg->dump());
    }
    for (std::size_t i = 0; i < 3; ++i) values[i] = (*loadavg)[i].get<double>();
    sample.loadavg = values;
  }
  if (const auto* governors = f.array("cpu_governors")) {
    for (std::size_t i = 0; i < governors->size(); ++i) {
      if (!(*governors)[i].is_string()) {
        throw std::invalid_argument("environment JSON " + f.pointer("cpu_governors") + "/" +
                                    std::to_string(i) + ": expected a string, got " +
                                    (*governors)[i].dump());
      }
      sample.cpu_governors.push_back((*governors)[i].get<std::string>());
    }
  }
  if (const auto* vmstat = f.object("vmstat")) {
    const Fields v(*vmstat, f.pointer("vmstat"));
    VmCounters counters;
    vm_counter_fields([&](const char* name, VmCounter field) { v.get(name, counters.*field); });
    sample.vmstat = counters;
  }
  if (const auto* gpus = f.array("gpus")) {
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      sample.gpus.push_back(gpu_from_json((*gpus)[i], f.pointer("gpus") + "/" + std::to_string(i)));
    }
  }
  return sample;
}

nlohmann::ordered_json run_environment_json(const EnvironmentSample& start,
                                            const std::optional<EnvironmentSample>& end) {
  nlohmann::ordered_json j;
  j["start"] = to_json(start);
  j["end"] = end ? to_json(*end) : nlohmann::ordered_json(nullptr);

  std::optional<CpuShare> share;
  if (start.cpu && end && end->cpu) share = cpu_share(*start.cpu, *end->cpu);
  nlohmann::ordered_json cpu;
  cpu["steal_pct"] = share ? nlohmann::ordered_json(share->steal_pct) : nullptr;
  cpu["iowait_pct"] = share ? nlohmann::ordered_json(share->iowait_pct) : nullptr;
  cpu["busy_pct"] = share ? nlohmann::ordered_json(share->busy_pct) : nullptr;
  j["cpu_share"] = std::move(cpu);

  bool other = false;
  bool all_listed = true;
  for (const EnvironmentSample* sample : {&start, end ? &*end : nullptr}) {
    if (sample == nullptr) continue;
    for (const auto& gpu : sample->gpus) {
      if (!gpu.processes) {
        all_listed = false;
        continue;
      }
      for (const auto& process : *gpu.processes) other = other || !process.self;
    }
  }
  j["other_gpu_processes"] =
      other ? nlohmann::ordered_json(true)
            : (all_listed ? nlohmann::ordered_json(false) : nlohmann::ordered_json(nullptr));
  j["vmstat_over_run"] = vm_counters_json(start.vmstat && end && end->vmstat
                                              ? vm_counter_difference(*start.vmstat, *end->vmstat)
                                              : VmCounters{});
  return j;
}

}  // namespace pathbench
