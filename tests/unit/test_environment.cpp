#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fake_nvidia_smi.hpp"
#include "fake_root.hpp"
#include "inventory/environment.hpp"
#include "inventory/gpu_environment_smi.hpp"

namespace pathbench::test_environment {
namespace {

using pathbench::testing::FakeNvidiaSmi;
using pathbench::testing::nvidia_smi_fixture_path;
using pathbench::testing::read_nvidia_smi_fixture;

std::string read_fixture(const std::string& relative) { return read_fixture_text(relative); }

// ---- parsers ------------------------------------------------------------------------------------

TEST(ProcStat, ReadsTheAggregateCpuLine) {
  const auto cpu = parse_proc_stat_cpu(read_fixture("proc/stat"));
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->user, 4705u);
  EXPECT_EQ(cpu->nice, 150u);
  EXPECT_EQ(cpu->system, 1120u);
  EXPECT_EQ(cpu->idle, 1393280u);
  EXPECT_EQ(cpu->iowait, 1210u);
  EXPECT_EQ(cpu->irq, 0u);
  EXPECT_EQ(cpu->softirq, 140u);
  EXPECT_EQ(cpu->steal, 3025u);
}

TEST(ProcStat, OldKernelsAndGarbage) {
  // 2.4 kernels print four values; the rest are 0.
  const auto old = parse_proc_stat_cpu("cpu 10 20 30 40\ncpu0 10 20 30 40\n");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->idle, 40u);
  EXPECT_EQ(old->steal, 0u);
  EXPECT_FALSE(parse_proc_stat_cpu("").has_value());
  EXPECT_FALSE(parse_proc_stat_cpu("cpu0 1 2 3 4 5 6 7 8\n").has_value());  // no aggregate
  EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2 3\n").has_value());
  EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2 x 4 5\n").has_value());
  EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2 -3 4 5\n").has_value());
}

TEST(Loadavg, ThreeAverages) {
  const auto load = parse_loadavg(read_fixture("proc/loadavg"));
  ASSERT_TRUE(load.has_value());
  EXPECT_DOUBLE_EQ((*load)[0], 0.52);
  EXPECT_DOUBLE_EQ((*load)[1], 1.07);
  EXPECT_DOUBLE_EQ((*load)[2], 12.5);
  EXPECT_FALSE(parse_loadavg("").has_value());
  EXPECT_FALSE(parse_loadavg("0.1 0.2").has_value());
  EXPECT_FALSE(parse_loadavg("0.1 zero 0.3 1/2 3").has_value());
}

TEST(Aer, TotalLines) {
  EXPECT_EQ(parse_aer_total(read_fixture("aer/aer_dev_correctable"), "TOTAL_ERR_COR"), 7u);
  EXPECT_EQ(parse_aer_total(read_fixture("aer/aer_dev_nonfatal"), "TOTAL_ERR_NONFATAL"), 1u);
  EXPECT_EQ(parse_aer_total(read_fixture("aer/aer_dev_fatal"), "TOTAL_ERR_FATAL"), 0u);
  // The wrong file's key, an empty file, a malformed count: no value.
  EXPECT_FALSE(parse_aer_total(read_fixture("aer/aer_dev_fatal"), "TOTAL_ERR_COR").has_value());
  EXPECT_FALSE(parse_aer_total("", "TOTAL_ERR_COR").has_value());
  EXPECT_FALSE(parse_aer_total("TOTAL_ERR_COR many\n", "TOTAL_ERR_COR").has_value());
}

TEST(ClockEventReasons, DecodesEveryKnownBitAndShowsUnknownOnes) {
  EXPECT_TRUE(decode_clock_event_reasons(0).empty());
  EXPECT_EQ(decode_clock_event_reasons(0x1), (std::vector<std::string>{"gpu_idle"}));
  EXPECT_EQ(decode_clock_event_reasons(0x1ff),
            (std::vector<std::string>{"gpu_idle", "applications_clocks_setting", "sw_power_cap",
                                      "hw_slowdown", "sync_boost", "sw_thermal_slowdown",
                                      "hw_thermal_slowdown", "hw_power_brake_slowdown",
                                      "display_clock_setting"}));
  EXPECT_EQ(decode_clock_event_reasons(0x8 | 0x400),
            (std::vector<std::string>{"hw_slowdown", "unknown_0x400"}));
}

TEST(CpuShareTest, PercentagesOfAllCpuTime) {
  CpuTimes start{100, 0, 50, 1000, 10, 0, 0, 5};
  CpuTimes end{200, 0, 100, 1800, 30, 0, 0, 55};  // +100 user, +50 sys, +800 idle, +20 io, +50 st
  const auto share = cpu_share(start, end);
  ASSERT_TRUE(share.has_value());
  EXPECT_NEAR(share->steal_pct, 50.0 / 1020 * 100, 1e-9);
  EXPECT_NEAR(share->iowait_pct, 20.0 / 1020 * 100, 1e-9);
  EXPECT_NEAR(share->busy_pct, 150.0 / 1020 * 100, 1e-9);
  EXPECT_FALSE(cpu_share(start, start).has_value());  // no time passed
  // iowait going backwards (tickless kernels) counts as none, not as a huge number.
  CpuTimes back = end;
  back.iowait = 0;
  EXPECT_NEAR(cpu_share(start, back)->iowait_pct, 0.0, 1e-12);
}

// ---- nvidia-smi fallback parsers
// ------------------------------------------------------------------

TEST(NvidiaSmiState, ArgvIsFixed) {
  const auto& argv = nvidia_smi_state_argv();
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[0], "nvidia-smi");
  EXPECT_EQ(argv[1],
            "--query-gpu=index,pci.bus_id,clocks.sm,clocks.mem,temperature.gpu,power.draw,"
            "enforced.power.limit,clocks_event_reasons.active");
  EXPECT_EQ(argv[2], "--format=csv,noheader,nounits");
  EXPECT_NE(nvidia_smi_state_argv(true)[1].find(",clocks_throttle_reasons.active"),
            std::string::npos);
  EXPECT_EQ(nvidia_smi_compute_apps_argv()[1],
            "--query-compute-apps=gpu_bus_id,pid,process_name,used_memory");
}

TEST(NvidiaSmiState, ParsesTheH200Capture) {
  const auto rows = parse_nvidia_smi_state(read_nvidia_smi_fixture("state_h200_x1.csv"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].index, 0);
  EXPECT_EQ(rows[0].pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(rows[0].clock_sm_mhz, 405);
  EXPECT_EQ(rows[0].clock_mem_mhz, 3201);
  EXPECT_EQ(rows[0].temperature_c, 41);
  EXPECT_DOUBLE_EQ(*rows[0].power_w, 125.53);
  EXPECT_DOUBLE_EQ(*rows[0].power_limit_w, 700.0);
  EXPECT_EQ(rows[0].clock_event_reasons_mask, 0x1u);
}

TEST(NvidiaSmiState, NotAvailableFieldsAreEmpty) {
  const auto rows = parse_nvidia_smi_state(read_nvidia_smi_fixture("state_h100_x8.csv"));
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[1].clock_event_reasons_mask, 0x60u);
  EXPECT_EQ(rows[3].pci_bus_id, "0000:5d:00.0");
  EXPECT_FALSE(rows[5].clock_sm_mhz.has_value());
  EXPECT_FALSE(rows[5].temperature_c.has_value());
  EXPECT_FALSE(rows[5].power_limit_w.has_value());
  EXPECT_FALSE(rows[5].clock_event_reasons_mask.has_value());
  EXPECT_FALSE(rows[6].power_w.has_value());
  EXPECT_EQ(rows[6].power_limit_w, 700.0);
}

TEST(NvidiaSmiState, MalformedOutputNamesLineAndField) {
  auto expect_rejected = [](const std::string& text, const std::string& needle) {
    try {
      parse_nvidia_smi_state(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_rejected("\n0, 00000000:19:00.0, 1980, 3201, 40, 100, 700\n", "line 2");
  expect_rejected("0, 00000000:19:00.0, 1980, 3201, 40, 100, 700, 0x1, extra\n", "got 9");
  expect_rejected("0, 00000000:19:00.0, fast, 3201, 40, 100, 700, 0x1\n", "clocks.sm");
  expect_rejected("0, 00000000:19:00.0, 1980, 3201, 40, 100, 700, 17\n", "hexadecimal");
  expect_rejected("0, 00000000:19:00.0, 1980, 3201, 40, 100, 700, 0xzz\n", "clocks_event_reasons");
  expect_rejected(read_nvidia_smi_fixture("driver_failure.txt"), "line 1");
  EXPECT_TRUE(parse_nvidia_smi_state("\r\n\n").empty());
}

TEST(NvidiaSmiComputeApps, ParsesNamesWithCommasAndMissingValues) {
  const auto apps = parse_nvidia_smi_compute_apps(read_nvidia_smi_fixture("compute_apps.csv"));
  ASSERT_EQ(apps.size(), 3u);
  EXPECT_EQ(apps[0].pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(apps[0].pid, 48211u);
  EXPECT_EQ(apps[0].name, "/usr/bin/python3");
  EXPECT_EQ(apps[0].used_memory_bytes, 71234ull << 20);
  EXPECT_EQ(apps[1].name, "/opt/vllm/bin/vllm, serve");
  EXPECT_EQ(apps[1].used_memory_bytes, 2048ull << 20);
  EXPECT_EQ(apps[2].pci_bus_id, "0000:2a:00.0");
  EXPECT_EQ(apps[2].name, "");
  EXPECT_FALSE(apps[2].used_memory_bytes.has_value());
  EXPECT_TRUE(parse_nvidia_smi_compute_apps("").empty());  // no process: no output at all
  EXPECT_THROW(parse_nvidia_smi_compute_apps("00000000:18:00.0, 12, python\n"),
               std::invalid_argument);
  EXPECT_THROW(parse_nvidia_smi_compute_apps("00000000:18:00.0, x, python, 1\n"),
               std::invalid_argument);
}

// ---- JSON ---------------------------------------------------------------------------------------

EnvironmentSample full_sample() {
  EnvironmentSample s;
  s.time = "2026-11-29T10:00:00Z";
  s.cpu = CpuTimes{4705, 150, 1120, 1393280, 1210, 0, 140, 3025};
  s.loadavg = std::array<double, 3>{0.5, 1.0, 12.5};
  s.cpu_governors = {"performance", "powersave"};
  GpuEnvironment gpu;
  gpu.index = 0;
  gpu.pci_bus_id = "0000:19:00.0";
  gpu.source = "nvml";
  gpu.clock_sm_mhz = 1980;
  gpu.clock_mem_mhz = 3201;
  gpu.temperature_c = 45;
  gpu.power_w = 125.53;
  gpu.power_limit_w = 700;
  gpu.clock_event_reasons_mask = 0x5;
  gpu.clock_event_reasons = decode_clock_event_reasons(0x5);
  gpu.processes = std::vector<GpuProcess>{{123, "pathbench", 536870912ull, true},
                                          {456, "", std::nullopt, false}};
  gpu.pcie_replay_counter = 1;
  gpu.aer_correctable = 7;
  gpu.aer_nonfatal = 0;
  GpuEnvironment bare;  // everything unknown
  bare.index = 1;
  bare.source = "unavailable: NVML: libnvidia-ml.so.1 cannot be loaded; nvidia-smi: not found";
  s.gpus = {gpu, bare};
  return s;
}

TEST(EnvironmentJson, RoundTripsEveryField) {
  const EnvironmentSample original = full_sample();
  const auto json = to_json(original);
  const EnvironmentSample back = environment_sample_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(to_json(back), json);
  // Not vacuous:
  ASSERT_EQ(back.gpus.size(), 2u);
  ASSERT_TRUE(back.gpus[0].processes.has_value());
  EXPECT_EQ(back.gpus[0].processes->at(0).used_memory_bytes, 536870912ull);
  EXPECT_TRUE(back.gpus[0].processes->at(0).self);
  EXPECT_FALSE(back.gpus[1].processes.has_value());
  EXPECT_EQ(back.cpu->steal, 3025u);
  EXPECT_EQ(back.gpus[0].clock_event_reasons,
            (std::vector<std::string>{"gpu_idle", "sw_power_cap"}));
}

TEST(EnvironmentJson, AbsentValuesAreNullAndKeysAreSnakeCase) {
  const auto json = to_json(full_sample());
  EXPECT_EQ(json.begin().key(), "time");
  EXPECT_EQ(json.at("loadavg"), (nlohmann::ordered_json{0.5, 1.0, 12.5}));
  const auto& bare = json.at("gpus").at(1);
  for (const char* key : {"clock_sm_mhz", "clock_mem_mhz", "temperature_c", "power_w",
                          "power_limit_w", "clock_event_reasons_mask", "processes",
                          "pcie_replay_counter", "aer_correctable", "aer_nonfatal", "aer_fatal"}) {
    EXPECT_TRUE(bare.at(key).is_null()) << key;
  }
  EXPECT_TRUE(bare.at("clock_event_reasons").is_array());
  EXPECT_TRUE(json.at("gpus").at(0).at("processes").at(1).at("name").is_null());
  EXPECT_TRUE(json.at("gpus").at(0).at("aer_fatal").is_null());
  const auto empty = to_json(EnvironmentSample{});
  EXPECT_TRUE(empty.at("cpu").is_null());
  EXPECT_TRUE(empty.at("loadavg").is_null());
  EXPECT_EQ(to_json(environment_sample_from_json(nlohmann::json(empty))), empty);
}

TEST(EnvironmentJson, WrongTypesNameThePointer) {
  const auto json = nlohmann::json::parse(to_json(full_sample()).dump());
  auto expect_error = [](const nlohmann::json& bad, const std::string& pointer) {
    try {
      environment_sample_from_json(bad, "/context/environment/start");
      ADD_FAILURE() << "accepted bad " << pointer;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(pointer), std::string::npos) << e.what();
    }
  };
  auto bad = json;
  bad["gpus"][0]["processes"][1]["pid"] = -4;
  expect_error(bad, "/context/environment/start/gpus/0/processes/1/pid");
  bad = json;
  bad["gpus"][0]["processes"][0]["self"] = "yes";
  expect_error(bad, "/context/environment/start/gpus/0/processes/0/self");
  bad = json;
  bad["cpu"]["steal"] = 1.5;
  expect_error(bad, "/context/environment/start/cpu/steal");
  bad = json;
  bad["loadavg"] = {1, 2};
  expect_error(bad, "/context/environment/start/loadavg");
  bad = json;
  bad["gpus"][1]["clock_event_reasons"] = {"gpu_idle", 3};
  expect_error(bad, "/context/environment/start/gpus/1/clock_event_reasons/1");
  bad = json;
  bad["gpus"] = "none";
  expect_error(bad, "/context/environment/start/gpus");
}

EnvironmentSample sample_at(const std::string& time, CpuTimes cpu,
                            std::optional<std::vector<GpuProcess>> processes,
                            std::uint64_t reasons = 0x1) {
  EnvironmentSample s;
  s.time = time;
  s.cpu = cpu;
  GpuEnvironment gpu;
  gpu.index = 0;
  gpu.pci_bus_id = "0000:19:00.0";
  gpu.source = "nvml";
  gpu.temperature_c = 40;
  gpu.power_w = 120;
  gpu.power_limit_w = 700;
  gpu.clock_event_reasons_mask = reasons;
  gpu.clock_event_reasons = decode_clock_event_reasons(reasons);
  gpu.processes = std::move(processes);
  s.gpus = {gpu};
  return s;
}

const GpuProcess kSelf{1000, "pathbench", 512ull << 20, true};
const GpuProcess kOther{4242, "python3", 2048ull << 20, false};

TEST(RunEnvironment, StartOnlyWhileRunning) {
  const auto j = run_environment_json(
      sample_at("2026-11-29T10:00:00Z", CpuTimes{100, 0, 50, 1000, 10, 0, 0, 5}, {{kSelf}}),
      std::nullopt);
  EXPECT_EQ(j.at("start").at("time"), "2026-11-29T10:00:00Z");
  EXPECT_TRUE(j.at("end").is_null());
  EXPECT_TRUE(j.at("cpu_share").at("steal_pct").is_null());
  EXPECT_TRUE(j.at("cpu_share").at("iowait_pct").is_null());
  EXPECT_TRUE(j.at("cpu_share").at("busy_pct").is_null());
  EXPECT_EQ(j.at("other_gpu_processes"), false);
  auto it = j.begin();
  EXPECT_EQ((it++).key(), "start");
  EXPECT_EQ((it++).key(), "end");
  EXPECT_EQ((it++).key(), "cpu_share");
  EXPECT_EQ((it++).key(), "other_gpu_processes");
}

TEST(RunEnvironment, CpuShareAndOtherProcesses) {
  const auto start =
      sample_at("2026-11-29T10:00:00Z", CpuTimes{100, 0, 50, 1000, 10, 0, 0, 5}, {{kSelf}});
  const auto end = sample_at("2026-11-29T10:01:00Z", CpuTimes{200, 0, 100, 1800, 30, 0, 0, 55},
                             {{kSelf, kOther}});
  const auto j = run_environment_json(start, end);
  EXPECT_NEAR(j.at("cpu_share").at("steal_pct").get<double>(), 50.0 / 1020 * 100, 1e-9);
  EXPECT_NEAR(j.at("cpu_share").at("busy_pct").get<double>(), 150.0 / 1020 * 100, 1e-9);
  EXPECT_EQ(j.at("other_gpu_processes"), true);
  // Processes that could not be listed: not "none".
  const auto unknown = run_environment_json(sample_at("t", CpuTimes{}, std::nullopt),
                                            sample_at("t", CpuTimes{}, {{kSelf}}));
  EXPECT_TRUE(unknown.at("other_gpu_processes").is_null());
  EXPECT_TRUE(unknown.at("cpu_share").at("steal_pct").is_null());  // no time passed
  // No GPU at all: nothing else can be on one.
  EXPECT_EQ(
      run_environment_json(EnvironmentSample{}, EnvironmentSample{}).at("other_gpu_processes"),
      false);
}

// ---- noise --------------------------------------------------------------------------------------

nlohmann::json context_with(const EnvironmentSample& start,
                            const std::optional<EnvironmentSample>& end) {
  nlohmann::json context = {{"hostname", "gpu-node-3"}};
  context["environment"] = nlohmann::json(run_environment_json(start, end));
  return context;
}

const CpuTimes kStart{100, 0, 50, 1000, 10, 0, 0, 5};
const CpuTimes kQuietEnd{200, 0, 100, 1800, 30, 0, 0, 6};     // steal 1 of 971: 0.1 %
const CpuTimes kStolenEnd{200, 0, 100, 1800, 30, 0, 0, 105};  // steal 100 of 1070: 9.3 %

TEST(Noise, CleanRunHasNoReasons) {
  const auto context = context_with(sample_at("s", kStart, {{kSelf}}, 0x1),
                                    sample_at("e", kQuietEnd, {{kSelf}}, 0x4 | 0x1));
  EXPECT_TRUE(noise_reasons(context).empty()) << noise_reasons(context).front();
  // A result's context is an ordered_json; it converts.
  nlohmann::ordered_json ordered;
  ordered["environment"] = run_environment_json(sample_at("s", kStart, {{kSelf}}),
                                                sample_at("e", kStolenEnd, {{kSelf}}));
  EXPECT_EQ(noise_reasons(ordered).size(), 1u);
}

TEST(Noise, OlderResultsWithoutEnvironmentAreNotRefused) {
  EXPECT_TRUE(noise_reasons(nlohmann::json{{"hostname", "old"}}).empty());
  EXPECT_TRUE(noise_reasons(nlohmann::json{{"environment", nullptr}}).empty());
  EXPECT_TRUE(noise_reasons(nlohmann::json::object()).empty());
  EXPECT_TRUE(noise_reasons(nlohmann::json::array()).empty());
  // Killed before the end sample: only the start counts, and there is no steal figure.
  EXPECT_TRUE(noise_reasons(context_with(sample_at("s", kStart, {{kSelf}}), std::nullopt)).empty());
}

TEST(Noise, CpuSteal) {
  const auto context =
      context_with(sample_at("s", kStart, {{kSelf}}), sample_at("e", kStolenEnd, {{kSelf}}));
  const auto reasons = noise_reasons(context);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("CPU steal was 9.3 %"), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[0].find("5.0 %"), std::string::npos) << reasons[0];
  EXPECT_TRUE(noise_reasons(context, NoiseThresholds{10.0}).empty());
  // Without the stored share the counters still tell.
  auto no_share = context;
  no_share["environment"].erase("cpu_share");
  EXPECT_EQ(noise_reasons(no_share).size(), 1u);
}

TEST(Noise, AnotherGpuProcessIsNamed) {
  const auto context = context_with(sample_at("s", kStart, {{kSelf, kOther}}),
                                    sample_at("e", kQuietEnd, {{kOther, kSelf}}));
  const auto reasons = noise_reasons(context);
  ASSERT_EQ(reasons.size(), 1u) << reasons[0];
  EXPECT_NE(reasons[0].find("GPU 0 (0000:19:00.0)"), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[0].find("pid 4242 (python3, 2 GiB"), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[0].find("the start and the end"), std::string::npos) << reasons[0];

  const auto at_end = noise_reasons(
      context_with(sample_at("s", kStart, {{kSelf}}), sample_at("e", kQuietEnd, {{kOther}})));
  ASSERT_EQ(at_end.size(), 1u);
  EXPECT_NE(at_end[0].find("at the end of the run"), std::string::npos) << at_end[0];
}

TEST(Noise, HardwareAndThermalThrottlingButNotPowerCapOrIdle) {
  for (std::uint64_t bit : {0x8ull, 0x20ull, 0x40ull, 0x80ull}) {
    const auto reasons = noise_reasons(context_with(sample_at("s", kStart, {{kSelf}}, bit | 0x4),
                                                    sample_at("e", kQuietEnd, {{kSelf}})));
    ASSERT_EQ(reasons.size(), 1u) << bit;
    EXPECT_NE(reasons[0].find("was throttled at the start"), std::string::npos) << reasons[0];
    EXPECT_NE(reasons[0].find(decode_clock_event_reasons(bit).front()), std::string::npos)
        << reasons[0];
    EXPECT_EQ(reasons[0].find("sw_power_cap"), std::string::npos) << reasons[0];
    EXPECT_NE(reasons[0].find("temperature 40 C, power 120 W of 700 W"), std::string::npos)
        << reasons[0];
  }
  EXPECT_TRUE(noise_reasons(context_with(sample_at("s", kStart, {{kSelf}}, 0x1 | 0x4 | 0x10),
                                         sample_at("e", kQuietEnd, {{kSelf}}, 0x4)))
                  .empty());
}

TEST(Noise, EveryKindAtOnce) {
  const auto reasons = noise_reasons(context_with(sample_at("s", kStart, {{kSelf}}),
                                                  sample_at("e", kStolenEnd, {{kOther}}, 0x40)));
  ASSERT_EQ(reasons.size(), 3u);
  EXPECT_NE(reasons[0].find("steal"), std::string::npos);
  EXPECT_NE(reasons[1].find("pid 4242"), std::string::npos);
  EXPECT_NE(reasons[2].find("hw_thermal_slowdown"), std::string::npos);
}

TEST(Noise, MalformedEnvironmentNamesThePointer) {
  auto context = context_with(sample_at("s", kStart, {{kSelf}}), sample_at("e", kQuietEnd, {}));
  context["environment"]["end"]["gpus"][0]["processes"] = 3;
  try {
    noise_reasons(context);
    FAIL() << "accepted a malformed environment";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/context/environment/end/gpus/0/processes"),
              std::string::npos)
        << e.what();
  }
  context["environment"] = "noisy";
  EXPECT_THROW(noise_reasons(context), std::invalid_argument);
}

// ---- collection ---------------------------------------------------------------------------------

class EnvironmentRoot : public FakeRootTest {
 protected:
  static bool nvml_loadable() {
    void* handle = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) return false;
    dlclose(handle);
    return true;
  }

  // One GPU at the bus id of the H200 capture, AER counters and two processes' comm.
  Inventory one_gpu() {
    write("sys/bus/pci/devices/0000:00:06.0/aer_dev_correctable",
          read_fixture("aer/aer_dev_correctable"));
    write("sys/bus/pci/devices/0000:00:06.0/aer_dev_nonfatal",
          read_fixture("aer/aer_dev_nonfatal"));
    write("sys/bus/pci/devices/0000:00:06.0/aer_dev_fatal", read_fixture("aer/aer_dev_fatal"));
    write("proc/4242/comm", "python3\n");
    write("proc/" + std::to_string(::getpid()) + "/comm", "pathbench\n");
    Inventory inventory;
    GpuInventory gpu;
    gpu.index = 0;
    gpu.pci_bus_id = "0000:00:06.0";
    inventory.gpus = {gpu};
    return inventory;
  }

  std::string apps_output() const {
    return "printf '00000000:00:06.0, " + std::to_string(::getpid()) +
           ", /build/pathbench, 512\\n00000000:00:06.0, 4242, /usr/bin/python3, 2048\\n'";
  }
};

TEST_F(EnvironmentRoot, HostPartsFromTheRoot) {
  write("proc/stat", read_fixture("proc/stat"));
  write("proc/loadavg", read_fixture("proc/loadavg"));
  write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
  write("sys/devices/system/cpu/cpu12/cpufreq/scaling_governor", "performance\n");
  write("sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "schedutil\n");  // not a CPU
  write("sys/devices/system/cpu/online", "0-1,12\n");
  const EnvironmentSample s = collect_environment_sample(Inventory{}, root_);
  EXPECT_EQ(s.time.size(), 20u) << s.time;  // 2026-11-29T10:00:00Z
  ASSERT_TRUE(s.cpu.has_value());
  EXPECT_EQ(s.cpu->steal, 3025u);
  ASSERT_TRUE(s.loadavg.has_value());
  EXPECT_DOUBLE_EQ((*s.loadavg)[2], 12.5);
  EXPECT_EQ(s.cpu_governors, (std::vector<std::string>{"performance", "powersave"}));
  EXPECT_TRUE(s.gpus.empty());
}

TEST_F(EnvironmentRoot, HiddenFilesGiveNullsNotErrors) {
  const EnvironmentSample s = collect_environment_sample(Inventory{}, root_ / "nothing-here");
  EXPECT_FALSE(s.cpu.has_value());
  EXPECT_FALSE(s.loadavg.has_value());
  EXPECT_TRUE(s.cpu_governors.empty());
  write("proc/stat", "garbage\n");
  write("proc/loadavg", "\n");
  const EnvironmentSample garbage = collect_environment_sample(Inventory{}, root_);
  EXPECT_FALSE(garbage.cpu.has_value());
  EXPECT_FALSE(garbage.loadavg.has_value());
}

TEST_F(EnvironmentRoot, FallsBackToNvidiaSmiWithoutNvml) {
  if (nvml_loadable()) GTEST_SKIP() << "NVML is loadable here; the fallback is not taken";
  const Inventory inventory = one_gpu();
  FakeNvidiaSmi fake("case \"$1\" in\n  --query-gpu=*clocks_event_reasons.active) cat '" +
                     nvidia_smi_fixture_path("state_h200_x1.csv") +
                     "' ;;\n  --query-compute-apps=*) " + apps_output() +
                     " ;;\n  *) exit 2 ;;\nesac");
  const EnvironmentSample s = collect_environment_sample(inventory, root_);
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuEnvironment& gpu = s.gpus[0];
  EXPECT_EQ(gpu.source, "nvidia-smi");
  EXPECT_EQ(gpu.pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(gpu.clock_sm_mhz, 405);
  EXPECT_EQ(gpu.temperature_c, 41);
  EXPECT_EQ(gpu.power_limit_w, 700.0);
  EXPECT_EQ(gpu.clock_event_reasons, (std::vector<std::string>{"gpu_idle"}));
  EXPECT_FALSE(gpu.pcie_replay_counter.has_value());  // nvidia-smi has no query field for it
  EXPECT_EQ(gpu.aer_correctable, 7u);
  EXPECT_EQ(gpu.aer_nonfatal, 1u);
  EXPECT_EQ(gpu.aer_fatal, 0u);
  ASSERT_TRUE(gpu.processes.has_value());
  ASSERT_EQ(gpu.processes->size(), 2u);
  EXPECT_TRUE(gpu.processes->at(0).self);
  EXPECT_EQ(gpu.processes->at(0).name, "pathbench");  // /proc/<pid>/comm wins
  EXPECT_FALSE(gpu.processes->at(1).self);
  EXPECT_EQ(gpu.processes->at(1).name, "python3");
  EXPECT_EQ(gpu.processes->at(1).used_memory_bytes, 2048ull << 20);

  const auto reasons = noise_reasons(
      nlohmann::json{{"environment", nlohmann::json(run_environment_json(s, std::nullopt))}});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("pid 4242 (python3"), std::string::npos) << reasons[0];
}

TEST_F(EnvironmentRoot, OldDriversGetTheThrottleFieldName) {
  if (nvml_loadable()) GTEST_SKIP() << "NVML is loadable here; the fallback is not taken";
  const Inventory inventory = one_gpu();
  FakeNvidiaSmi fake(
      "case \"$1\" in\n"
      "  --query-gpu=*clocks_event_reasons.active) echo 'Field \"clocks_event_reasons.active\" "
      "is not a valid field to query.'; exit 2 ;;\n"
      "  --query-gpu=*clocks_throttle_reasons.active) cat '" +
      nvidia_smi_fixture_path("state_h200_x1.csv") +
      "' ;;\n  --query-compute-apps=*) exit 0 ;;\n  *) exit 2 ;;\nesac");
  const EnvironmentSample s = collect_environment_sample(inventory, root_);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].source, "nvidia-smi");
  EXPECT_EQ(s.gpus[0].clock_event_reasons_mask, 0x1u);
  ASSERT_TRUE(s.gpus[0].processes.has_value());
  EXPECT_TRUE(s.gpus[0].processes->empty());  // listed, and none
}

TEST_F(EnvironmentRoot, SaysWhyThereIsNoGpuData) {
  if (nvml_loadable()) GTEST_SKIP() << "NVML is loadable here; the fallback is not taken";
  Inventory inventory = one_gpu();
  {
    FakeNvidiaSmi fake("echo 'NVIDIA-SMI has failed because it could not communicate'\nexit 9");
    const EnvironmentSample s = collect_environment_sample(inventory, root_);
    ASSERT_EQ(s.gpus.size(), 1u);
    const std::string& source = s.gpus[0].source;
    EXPECT_EQ(source.rfind("unavailable: NVML: ", 0), 0u) << source;
    // Why NVML gave nothing: the library could not be loaded, or this build has no nvml.h.
#if PATHBENCH_HAVE_NVML_H
    EXPECT_NE(source.find("libnvidia-ml.so.1"), std::string::npos) << source;
#else
    EXPECT_NE(source.find("built without nvml.h"), std::string::npos) << source;
#endif
    EXPECT_NE(source.find("nvidia-smi: nvidia-smi exited with status 9: NVIDIA-SMI has failed"),
              std::string::npos)
        << source;
    EXPECT_FALSE(s.gpus[0].processes.has_value());
    EXPECT_EQ(s.gpus[0].aer_correctable, 7u);  // sysfs still answers
  }
  {
    // nvidia-smi works but lists another GPU.
    inventory.gpus[0].pci_bus_id = "0000:19:00.0";
    FakeNvidiaSmi fake("case \"$1\" in\n  --query-gpu=*) cat '" +
                       nvidia_smi_fixture_path("state_h200_x1.csv") + "' ;;\n  *) exit 0 ;;\nesac");
    const EnvironmentSample s = collect_environment_sample(inventory, root_);
    EXPECT_NE(s.gpus[0].source.find("nvidia-smi: no GPU at 0000:19:00.0"), std::string::npos)
        << s.gpus[0].source;
  }
}

TEST(EnvironmentLive, SamplesThisMachineWithoutThrowing) {
  const EnvironmentSample s = collect_environment_sample(Inventory{});
  EXPECT_FALSE(s.time.empty());
  if (std::filesystem::exists("/proc/stat")) {
    EXPECT_TRUE(s.cpu.has_value());
  }
  EXPECT_TRUE(s.gpus.empty());
}

}  // namespace
}  // namespace pathbench::test_environment
