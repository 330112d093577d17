#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/subprocess.hpp"
#include "inventory/nvidia_smi.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_nvidia_smi {
namespace {

std::string read_fixture(const std::string& name) {
  const std::string path = std::string(PATHBENCH_FIXTURES) + "/nvidia-smi/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr std::uint64_t kMiB = 1u << 20;

TEST(NvidiaSmiQuery, ArgvIsTheFixedQuery) {
  const auto& argv = nvidia_smi_query_argv();
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[0], "nvidia-smi");
  EXPECT_EQ(argv[1],
            "--query-gpu=index,name,uuid,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,"
            "pcie.link.width.current,pcie.link.width.max,clocks.sm,clocks.mem,clocks.max.sm,"
            "clocks.max.mem,memory.total,driver_version,vbios_version,ecc.mode.current,"
            "persistence_mode,mig.mode.current");
  EXPECT_EQ(argv[2], "--format=csv,noheader,nounits");
}

TEST(NvidiaSmiParse, SingleH200) {
  const auto rows = parse_nvidia_smi_query(read_fixture("h200_x1.csv"));
  ASSERT_EQ(rows.size(), 1u);
  const NvidiaSmiGpu& gpu = rows[0];
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.name, "NVIDIA H200");
  EXPECT_EQ(gpu.uuid, "GPU-3f1c2b7e-8d4a-5c6b-9e0f-1a2b3c4d5e6f");
  EXPECT_EQ(gpu.pci_bus_id, "0000:19:00.0");
  EXPECT_EQ(gpu.pcie_gen_current, 5);
  EXPECT_EQ(gpu.pcie_gen_max, 5);
  EXPECT_EQ(gpu.pcie_width_current, 16);
  EXPECT_EQ(gpu.pcie_width_max, 16);
  EXPECT_EQ(gpu.clock_sm_mhz, 1980);
  EXPECT_EQ(gpu.clock_mem_mhz, 3201);
  EXPECT_EQ(gpu.clock_sm_max_mhz, 1980);
  EXPECT_EQ(gpu.clock_mem_max_mhz, 3201);
  EXPECT_EQ(gpu.memory_bytes, 143771 * kMiB);
  EXPECT_EQ(gpu.driver_version, "580.159.04");
  EXPECT_EQ(gpu.vbios, "96.00.AF.00.01");
  EXPECT_EQ(gpu.ecc_mode, "enabled");
  EXPECT_EQ(gpu.persistence_mode, "enabled");
  EXPECT_EQ(gpu.mig_mode, "disabled");
}

TEST(NvidiaSmiParse, EightH100WithNotAvailableFields) {
  const auto rows = parse_nvidia_smi_query(read_fixture("h100_sxm_x8.csv"));
  ASSERT_EQ(rows.size(), 8u);
  const char* bus_ids[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                           "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(rows[i].index, i);
    EXPECT_EQ(rows[i].name, "NVIDIA H100 80GB HBM3");  // spaces kept, edges trimmed
    EXPECT_EQ(rows[i].pci_bus_id, bus_ids[i]);
    EXPECT_EQ(rows[i].driver_version, "550.54.15");
  }
  // "[N/A]"
  EXPECT_FALSE(rows[2].pcie_gen_current.has_value());
  EXPECT_FALSE(rows[2].pcie_width_current.has_value());
  EXPECT_EQ(rows[2].pcie_gen_max, 5);
  EXPECT_EQ(rows[2].pcie_width_max, 16);
  // "[Not Supported]"
  EXPECT_FALSE(rows[3].clock_mem_max_mhz.has_value());
  EXPECT_EQ(rows[3].clock_sm_max_mhz, 1980);
  EXPECT_FALSE(rows[5].clock_sm_mhz.has_value());
  EXPECT_FALSE(rows[5].clock_mem_mhz.has_value());
  // bare "N/A"
  EXPECT_FALSE(rows[6].memory_bytes.has_value());
  EXPECT_EQ(rows[6].vbios, "");
  EXPECT_EQ(rows[7].memory_bytes, 81559 * kMiB);
  // Modes: lower-cased, and no value for a marker.
  EXPECT_EQ(rows[1].persistence_mode, "disabled");
  EXPECT_FALSE(rows[2].ecc_mode.has_value());
  EXPECT_EQ(rows[2].persistence_mode, "enabled");
  EXPECT_FALSE(rows[2].mig_mode.has_value());
  EXPECT_EQ(rows[3].ecc_mode, "disabled");
  EXPECT_EQ(rows[3].mig_mode, "enabled");
  EXPECT_FALSE(rows[6].ecc_mode.has_value());
  EXPECT_FALSE(rows[6].persistence_mode.has_value());
  EXPECT_FALSE(rows[6].mig_mode.has_value());
}

TEST(NvidiaSmiParse, MalformedLineNamesItsNumber) {
  try {
    parse_nvidia_smi_query(read_fixture("malformed.csv"));
    FAIL() << "malformed output accepted";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("line 2"), std::string::npos) << message;
    EXPECT_NE(message.find("expected 18"), std::string::npos) << message;
    EXPECT_NE(message.find("got 14"), std::string::npos) << message;
  }
}

TEST(NvidiaSmiParse, DriverFailureMessageIsNotMistakenForData) {
  EXPECT_THROW(parse_nvidia_smi_query(read_fixture("driver_failure.txt")), std::invalid_argument);
}

TEST(NvidiaSmiParse, NonNumericFieldIsNamed) {
  const std::string line =
      "0, NVIDIA H200, GPU-x, 00000000:19:00.0, five, 5, 16, 16, 1980, 3201, 1980, 3201, 143771, "
      "580.159.04, 96.00.AF.00.01, Enabled, Enabled, Disabled\n";
  try {
    parse_nvidia_smi_query(line);
    FAIL() << "accepted a non-numeric link gen";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("line 1"), std::string::npos) << message;
    EXPECT_NE(message.find("pcie.link.gen.current"), std::string::npos) << message;
    EXPECT_NE(message.find("five"), std::string::npos) << message;
  }
}

TEST(NvidiaSmiParse, BadBusIdAndMissingIndexAreRejected) {
  EXPECT_THROW(
      parse_nvidia_smi_query("0, A, B, zz:19:00.0, 5, 5, 16, 16, 1, 1, 1, 1, 1, d, v, e, p, m"),
      std::invalid_argument);
  EXPECT_THROW(
      parse_nvidia_smi_query("[N/A], A, B, 19:00.0, 5, 5, 16, 16, 1, 1, 1, 1, 1, d, v, e, p, m"),
      std::invalid_argument);
}

TEST(NvidiaSmiParse, ToleratesCrlfBlankLinesAndEmptyOutput) {
  EXPECT_TRUE(parse_nvidia_smi_query("").empty());
  EXPECT_TRUE(parse_nvidia_smi_query("\n\n").empty());
  const std::string text =
      "\r\n0, NVIDIA H200, GPU-a, 00000000:19:00.0, 5, 5, 16, 16, 1980, 3201, 1980, 3201, 143771, "
      "580.159.04, 96.00.AF.00.01, Enabled, Disabled, [N/A]\r\n\r\n";
  const auto rows = parse_nvidia_smi_query(text);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].vbios, "96.00.AF.00.01");
  EXPECT_EQ(rows[0].pci_bus_id, "0000:19:00.0");
  EXPECT_EQ(rows[0].persistence_mode, "disabled");
  EXPECT_FALSE(rows[0].mig_mode.has_value());  // the CR is not part of the marker
}

TEST(PciBusId, NormalisesEveryCommonSpelling) {
  EXPECT_EQ(normalize_pci_bus_id("00000000:65:00.0"), "0000:65:00.0");
  EXPECT_EQ(normalize_pci_bus_id("0000:65:00.0"), "0000:65:00.0");
  EXPECT_EQ(normalize_pci_bus_id("00000000:AB:1F.7"), "0000:ab:1f.7");
  EXPECT_EQ(normalize_pci_bus_id("65:00.0"), "0000:65:00.0");
  EXPECT_EQ(normalize_pci_bus_id(" 0001:5:3.1\n"), "0001:05:03.1");
  // VMD domains are wider than 4 digits; Linux prints them in full.
  EXPECT_EQ(normalize_pci_bus_id("00010000:01:00.0"), "10000:01:00.0");
}

TEST(PciBusId, RejectsGarbage) {
  for (const char* bad : {"", "GPU-0", "0000:65:00", "0000:65:00.8", "0000:165:00.0",
                          "0000:65:20.0", "000000000:65:00.0", "0000:zz:00.0", "../../etc.0"}) {
    try {
      normalize_pci_bus_id(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("\"") + bad + "\""), std::string::npos)
          << e.what();
    }
  }
}

// The subprocess runner is what runs nvidia-smi; its tests live beside the query's.
TEST(Subprocess, CapturesStdoutStderrAndExitStatus) {
  const auto result = run_subprocess({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(result.outcome, SubprocessOutcome::kExited);
  EXPECT_EQ(result.exit_status, 3);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.stdout_text, "out\n");
  EXPECT_EQ(result.stderr_text, "err\n");
  EXPECT_NE(result.error.find("status 3"), std::string::npos) << result.error;
}

TEST(Subprocess, SuccessIsOk) {
  const auto result = run_subprocess({"true"});
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_TRUE(result.error.empty());
}

TEST(Subprocess, ArgumentsAreNeverInterpretedByAShell) {
  const std::string hostile = "$(echo injected); `id` > /dev/null | cat *";
  const auto result = run_subprocess({"printf", "%s", hostile});
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stdout_text, hostile);
}

TEST(Subprocess, MissingProgramIsNotFoundNotAnException) {
  const auto result = run_subprocess({"pathbench-no-such-tool-7f3a"});
  EXPECT_EQ(result.outcome, SubprocessOutcome::kNotFound);
  EXPECT_EQ(result.error, "pathbench-no-such-tool-7f3a not found on PATH");
  EXPECT_FALSE(result.ok());
}

TEST(Subprocess, TimeoutKillsTheChildAndItsChildren) {
  SubprocessOptions options;
  options.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  // The background sleep keeps stdout open: only killing the process group ends the wait.
  const auto result = run_subprocess({"sh", "-c", "sleep 30 & sleep 30; wait"}, options);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.outcome, SubprocessOutcome::kTimedOut);
  EXPECT_NE(result.error.find("300 ms"), std::string::npos) << result.error;
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(Subprocess, SignalDeathIsReported) {
  const auto result = run_subprocess({"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(result.outcome, SubprocessOutcome::kSignaled);
  EXPECT_EQ(result.signal, 15);
}

TEST(Subprocess, OutputBeyondTheLimitIsDrainedAndDropped) {
  SubprocessOptions options;
  options.max_output_bytes = 1000;
  const auto result = run_subprocess({"head", "-c", "1000000", "/dev/zero"}, options);
  EXPECT_TRUE(result.ok()) << result.error;  // the child did not block on a full pipe
  EXPECT_EQ(result.stdout_text.size(), 1000u);
  EXPECT_TRUE(result.stdout_truncated);
}

TEST(Subprocess, StdinIsEmptyAndStderrCanBeDiscarded) {
  SubprocessOptions options;
  options.capture_stderr = false;
  const auto result = run_subprocess({"sh", "-c", "cat; echo hidden >&2; echo done"}, options);
  EXPECT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stdout_text, "done\n");
  EXPECT_TRUE(result.stderr_text.empty());
}

TEST(Subprocess, EmptyArgvIsAProgrammingError) {
  EXPECT_THROW(run_subprocess({}), std::invalid_argument);
}

}  // namespace
}  // namespace pathbench::test_nvidia_smi
