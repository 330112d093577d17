// The ipc family's host side: its axes and rules, the GPU pair (recorded two-GPU topologies, one
// GPU, the setup command the child gets), the shipped scenario, the child's sample reply, and the
// launcher (core/ipc_child.hpp) against fake children that crash, exit, hang, write junk or
// oversized records: each is a CaseFailure saying what happened, within short timeouts.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/ipc.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "core/ipc_child.hpp"
#include "recorded_topologies.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_ipc_family {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

CaseSpec ipc_case(const std::string& method, const std::string& access, std::int64_t bytes) {
  return testing::scenario_case("ipc", {{"method", method}, {"access", access}, {"bytes", bytes}});
}

// A case of ipc-cross-gpu: the pair first, as the shipped scenario lists it.
CaseSpec pair_case(const std::string& pair, const std::string& method, const std::string& access,
                   std::int64_t bytes) {
  return testing::scenario_case(
      "ipc", {{"pair", pair}, {"method", method}, {"access", access}, {"bytes", bytes}});
}

// Short timeouts: a test that would hang fails within seconds instead.
IpcChildOptions quick() {
  IpcChildOptions o;
  o.hello_timeout = 5000ms;  // a Python fake starts in well under that, even on a busy machine
  o.reply_timeout = 500ms;
  o.exit_timeout = 500ms;
  return o;
}

std::vector<std::string> fake(const std::string& mode) {
  return {"/usr/bin/python3", std::string(PATHBENCH_SOURCE_DIR) + "/tests/unit/fake_ipc_child.py",
          mode};
}
std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script, "sh"}; }

// The CaseFailure's reason when starting `argv` (and asking it for a sample) fails; empty when it
// did not fail.
std::string failure(const std::vector<std::string>& argv, IpcChildOptions o = quick()) {
  try {
    IpcChild child(argv, o);
    child.request(ipc_sample_command(2));
  } catch (const CaseFailure& e) {
    return e.what();
  }
  return {};
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(IpcFamily, DeclaresItsAxesMetricsAndRules) {
  const auto family = make_ipc_family();
  EXPECT_EQ(family->name(), "ipc");
  const auto names = family->metric_names(ipc_case("cuda_ipc", "copy", 64 * kMiB));
  ASSERT_TRUE(names);
  EXPECT_EQ(*names,
            (std::vector<std::string>{"export_time", "open_time", "close_time", "bandwidth"}));
  for (const auto& m : ipc_metrics()) {
    EXPECT_EQ(m.unit, m.name == "bandwidth" ? "GB/s" : "s") << m.name;
    EXPECT_EQ(m.better, m.name == "bandwidth" ? Better::kHigher : Better::kLower) << m.name;
  }
  EXPECT_FALSE(family->invalid_combination(ipc_case("vmm_fd", "kernel", 64 * kMiB)));
  const auto why = family->invalid_combination(ipc_case("vmm_fd", "kernel", 64 * kMiB + 8));
  ASSERT_TRUE(why);
  EXPECT_CONTAINS(*why, "4 KiB");

  const auto copy = family->memory_needs(ipc_case("cuda_ipc", "copy", 64 * kMiB));
  EXPECT_EQ(copy.device_bytes, 2u * 64 * kMiB);
  EXPECT_EQ(copy.host_bytes, 0u);
  const auto kernel = family->memory_needs(ipc_case("vmm_fd", "kernel", 64 * kMiB));
  EXPECT_EQ(kernel.device_bytes, 64u * kMiB);
  const auto shared = family->memory_needs(ipc_case("shared_pinned", "kernel", 64 * kMiB));
  EXPECT_EQ(shared.host_bytes, 64u * kMiB);
  EXPECT_EQ(shared.device_bytes, 0u);
}

TEST(IpcFamily, TheDefaultChildIsThisBinaryInItsHelperMode) {
  const auto c = default_ipc_child_command();
  ASSERT_EQ(c.argv.size(), 2u);
  EXPECT_EQ(c.argv[1], "ipc-child");
  EXPECT_EQ(c.argv[0].front(), '/');
  EXPECT_NE(c.argv[0], "/proc/self/exe");  // resolved in the parent, not in the child
}

// The shipped file's cases, derived and validated on `machine` with its selected GPUs.
std::vector<CaseSpec> shipped_cases(const Machine& machine, const std::string& scenario) {
  FamilyRegistry families;
  families.add(make_ipc_family());
  const auto file = load_scenario_file(std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/ipc.json",
                                       families, machine.numa_nodes, machine.selected_gpus);
  for (const auto& s : file.scenarios) {
    if (s.name != scenario) continue;
    auto cases = expand(s);
    derive_case_params(cases, *families.find("ipc"), machine);
    EXPECT_NO_THROW(validate_cases(s, cases, *families.find("ipc"), machine, 0)) << s.name;
    return cases;
  }
  ADD_FAILURE() << "no scenario " << scenario << " in scenarios/ipc.json";
  return {};
}

std::vector<std::string> ids_of(const std::vector<CaseSpec>& cases) {
  std::vector<std::string> ids;
  for (const auto& c : cases) ids.push_back(c.id);
  return ids;
}

TEST(IpcFamily, ShippedScenarioExpandsToEveryMethodAccessAndSize) {
  // ipc-sharing has no pair: its ids are what they were before pairs, on one GPU or two.
  for (const Machine& m : {testing::h200_machine(1), testing::recorded_nvlink_pair()}) {
    const auto ids = ids_of(shipped_cases(m, "ipc-sharing"));
    ASSERT_EQ(ids.size(), 12u);
    EXPECT_EQ(ids.front(), "ipc/method=cuda_ipc/access=copy/bytes=67108864");
    EXPECT_EQ(ids.back(), "ipc/method=shared_pinned/access=kernel/bytes=1073741824");
  }
}

TEST(IpcFamily, CrossGpuScenarioOnARecordedNvlinkPairRunsEveryPairBothWays) {
  const Machine two = testing::recorded_nvlink_pair();
  const auto cases = shipped_cases(two, "ipc-cross-gpu");
  const auto ids = ids_of(cases);
  ASSERT_EQ(ids.size(), 2u * 12);  // 0-1 and 1-0, 3 methods x 2 accesses x 2 sizes
  EXPECT_EQ(ids.front(), "ipc/pair=0-1/link=nvlink18/method=cuda_ipc/access=copy/bytes=67108864");
  EXPECT_EQ(ids.back(),
            "ipc/pair=1-0/link=nvlink18/method=shared_pinned/access=kernel/bytes=1073741824");
  const auto family = make_ipc_family();
  for (const auto& c : cases) EXPECT_EQ(family->skip_reason(c, two, 0), std::nullopt) << c.id;
  // The pair's GPUs, never --device: a --device the machine lacks does not matter.
  EXPECT_EQ(family->skip_reason(cases.front(), two, 7), std::nullopt);
  // Without the pair the case needs the --device GPU, as it always did.
  EXPECT_EQ(family->skip_reason(ipc_case("cuda_ipc", "copy", 64 * kMiB), two, 7),
            "GPU 7 does not exist (this machine has 2)");
}

TEST(IpcFamily, CrossGpuOnARecordedPcieMachineWithoutP2pSkipsTheMethodsThatMapGpuMemory) {
  const Machine pcie = testing::recorded_pcie_pair_without_p2p();
  const auto cases = shipped_cases(pcie, "ipc-cross-gpu");
  ASSERT_EQ(cases.size(), 2u * 12);
  const auto family = make_ipc_family();
  for (const auto& c : cases) {
    EXPECT_EQ(c.str("link"), "host-staged") << c.id;
    const auto why = family->skip_reason(c, pcie, 0);
    if (c.str("method") == "shared_pinned") {
      EXPECT_EQ(why, std::nullopt) << c.id;  // host memory needs no peer access
      continue;
    }
    ASSERT_TRUE(why) << c.id;
    // The importer (D) would map the exporter's (S) memory: D cannot access S.
    const std::string s = c.str("pair").substr(0, 1), d = c.str("pair").substr(2, 1);
    EXPECT_EQ(why->rfind("GPU " + d + " cannot access GPU " + s +
                             "'s memory (cudaDeviceCanAccessPeer = 0; link pix, host-staged): "
                             "method=" +
                             c.str("method") + " across GPUs maps the exporter's GPU memory",
                         0),
              0u)
        << *why;
    EXPECT_CONTAINS(*why, "shared_pinned shares host memory across this pair");
  }
  // The need names what maps it, per method.
  EXPECT_CONTAINS(
      ipc_peer_access_need(decode_ipc_request(pair_case("0-1", "cuda_ipc", "copy", kMiB))),
      "cudaIpcOpenMemHandle with cudaIpcMemLazyEnablePeerAccess");
  EXPECT_CONTAINS(
      ipc_peer_access_need(decode_ipc_request(pair_case("0-1", "vmm_fd", "copy", kMiB))),
      "cuMemSetAccess");
}

TEST(IpcFamily, CrossGpuOnOneGpuIsSkippedWithTheReason) {
  for (const Machine& m : {testing::h200_machine(1), testing::h200_machine(0)}) {
    const auto cases = shipped_cases(m, "ipc-cross-gpu");
    ASSERT_EQ(cases.size(), 12u);
    EXPECT_EQ(cases.front().id,
              "ipc/pair=none/link=none/method=cuda_ipc/access=copy/bytes=67108864");
    const auto family = make_ipc_family();
    for (const auto& c : cases) {
      const auto why = family->skip_reason(c, m, 0);
      ASSERT_TRUE(why) << c.id;
      EXPECT_EQ(why->rfind("needs two GPUs; this machine has ", 0), 0u) << *why;
    }
  }
  EXPECT_EQ(make_ipc_family()->skip_reason(pair_case("none", "vmm_fd", "kernel", 64 * kMiB),
                                           testing::h200_machine(1), 0),
            "needs two GPUs; this machine has 1 (GPU 0: NVIDIA H200)");
  // "none" where two GPUs are selected is the scenario's mistake, said so.
  const auto none_on_two = make_ipc_family()->skip_reason(
      pair_case("none", "cuda_ipc", "copy", 64 * kMiB), testing::recorded_nvlink_pair(), 0);
  ASSERT_TRUE(none_on_two);
  EXPECT_CONTAINS(*none_on_two, "pair=none names no GPU pair, but 2 GPUs are selected");
}

TEST(IpcFamily, APairDecodesToTheExporterAndImporterGpusAndPerGpuMemory) {
  const auto r = decode_ipc_request(pair_case("1-0", "vmm_fd", "copy", 64 * kMiB));
  EXPECT_TRUE(r.has_pair());
  EXPECT_EQ(r.exporter_gpu(5), 1);  // --device does not matter
  EXPECT_EQ(r.importer_gpu(5), 0);
  EXPECT_TRUE(r.needs_peer_access());
  EXPECT_EQ(ipc_placement(r, 5), "GPU 1's memory, read by the child on GPU 0");
  const auto shared = decode_ipc_request(pair_case("0-1", "shared_pinned", "kernel", kMiB));
  EXPECT_FALSE(shared.needs_peer_access());
  EXPECT_EQ(ipc_placement(shared, 0), "host memory, read by the child on GPU 1");
  const auto plain = decode_ipc_request(ipc_case("cuda_ipc", "copy", kMiB));
  EXPECT_FALSE(plain.has_pair());
  EXPECT_FALSE(plain.needs_peer_access());
  EXPECT_EQ(plain.exporter_gpu(3), 3);
  EXPECT_EQ(plain.importer_gpu(3), 3);
  EXPECT_EQ(ipc_placement(plain, 3), "GPU 3's memory, read by the child on GPU 3");
  const auto none = decode_ipc_request(pair_case("none", "cuda_ipc", "copy", kMiB));
  EXPECT_TRUE(none.has_pair());
  EXPECT_FALSE(none.gpus);

  // Across a pair each GPU holds one buffer: the shared one on S, the copy's destination on D.
  const auto family = make_ipc_family();
  EXPECT_EQ(family->memory_needs(pair_case("0-1", "cuda_ipc", "copy", 64 * kMiB)).device_bytes,
            64u * kMiB);
  EXPECT_EQ(family->memory_needs(pair_case("0-1", "vmm_fd", "kernel", 64 * kMiB)).device_bytes,
            64u * kMiB);
  const auto pinned = family->memory_needs(pair_case("0-1", "shared_pinned", "kernel", 64 * kMiB));
  EXPECT_EQ(pinned.host_bytes, 64u * kMiB);
  EXPECT_EQ(pinned.device_bytes, 0u);
}

TEST(IpcFamily, TheSetupCommandSendsTheChildToTheImportersGpu) {
  const auto command = [](const IpcRequest& r, int device) {
    return nlohmann::json::parse(ipc_setup_command(r, device, 42));
  };
  const auto across = command(decode_ipc_request(pair_case("0-1", "cuda_ipc", "kernel", kMiB)), 0);
  EXPECT_EQ(across["op"], "setup");
  EXPECT_EQ(across["device"], 1);  // the importer's GPU, though --device is 0
  EXPECT_EQ(across["exporter_device"], 0);
  EXPECT_EQ(across["method"], "cuda_ipc");
  EXPECT_EQ(across["access"], "kernel");
  EXPECT_EQ(across["seed"], 42);
  const auto back = command(decode_ipc_request(pair_case("1-0", "vmm_fd", "copy", kMiB)), 1);
  EXPECT_EQ(back["device"], 0);
  EXPECT_EQ(back["exporter_device"], 1);
  // Without a pair both are --device, as before.
  const auto same = command(decode_ipc_request(ipc_case("vmm_fd", "copy", kMiB)), 2);
  EXPECT_EQ(same["device"], 2);
  EXPECT_EQ(same["exporter_device"], 2);

  // The child reads back what the parent wrote.
  const IpcChildSetup setup = parse_ipc_setup_command(across);
  EXPECT_EQ(setup.device, 1);
  EXPECT_EQ(setup.exporter_device, 0);
  EXPECT_EQ(setup.seed, 42u);
  EXPECT_EQ(setup.request.method, IpcRequest::Method::kCudaIpc);
  EXPECT_EQ(setup.request.access, IpcRequest::Access::kKernel);
  EXPECT_EQ(setup.request.bytes, static_cast<std::uint64_t>(kMiB));
  // A command without an exporter (an older parent): the child's own GPU.
  auto older = across;
  older.erase("exporter_device");
  EXPECT_EQ(parse_ipc_setup_command(older).exporter_device, 1);
  const std::pair<const char*, nlohmann::json> bad[] = {{"device", -1},
                                                        {"device", "1"},
                                                        {"exporter_device", 1.5},
                                                        {"method", "nvlink"},
                                                        {"bytes", 12}};
  for (const auto& [key, value] : bad) {
    auto j = across;
    j[key] = value;
    try {
      parse_ipc_setup_command(j);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const CaseFailure& e) {
      EXPECT_CONTAINS(e.what(), "the child cannot set up");
    }
  }
}

TEST(IpcFamily, ABadMethodOrSizeIsRefusedAtLoadNamingFileAndField) {
  FamilyRegistry families;
  families.add(make_ipc_family());
  const Family& family = *families.find("ipc");
  // The InputError's message when the axes are refused, by the parser or case validation.
  const auto refused = [&](const std::string& axes) {
    try {
      const auto file = parse_scenario_file(
          "bad_ipc.json",
          R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "x", "family": "ipc", )"
          R"("axes": )" +
              axes + "}]}",
          families, {0});
      const auto& s = file.scenarios.at(0);
      validate_cases(s, expand(s), family, testing::h200_machine(), 0);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string method =
      refused(R"({"method": ["nvlink"], "access": ["copy"], "bytes": ["64MiB"]})");
  EXPECT_CONTAINS(method, "bad_ipc.json");
  EXPECT_CONTAINS(method, "/scenarios/0/axes/method");
  const std::string access =
      refused(R"({"method": ["cuda_ipc"], "access": ["peek"], "bytes": ["64MiB"]})");
  EXPECT_CONTAINS(access, "/scenarios/0/axes/access");
  const std::string small =
      refused(R"({"method": ["cuda_ipc"], "access": ["copy"], "bytes": [4096]})");
  EXPECT_CONTAINS(small, "/scenarios/0/axes/bytes");
  const std::string odd =
      refused(R"({"method": ["cuda_ipc"], "access": ["copy"], "bytes": [1048580]})");
  EXPECT_CONTAINS(odd, "bad_ipc.json");
  EXPECT_CONTAINS(odd, "4 KiB");
  EXPECT_EQ(refused(R"({"method": ["cuda_ipc"], "access": ["copy"], "bytes": ["64MiB"]})"), "");
  // A pair that is not "S-D": refused at load, naming the file, the axes and the value.
  for (const char* pair : {"1-1", "0", "all", "0-1-2"}) {
    const std::string why = refused(std::string(R"({"pair": [")") + pair +
                                    R"("], "method": ["cuda_ipc"], "access": ["copy"], )"
                                    R"("bytes": ["64MiB"]})");
    EXPECT_CONTAINS(why, "bad_ipc.json: /scenarios/0/axes: ");
    EXPECT_CONTAINS(why, std::string("pair \"") + pair + "\" is not \"S-D\"");
  }
  EXPECT_CONTAINS(refused(R"({"pair": {"gpu_pairs": "some"}, "method": ["cuda_ipc"], )"
                          R"("access": ["copy"], "bytes": ["64MiB"]})"),
                  "/scenarios/0/axes/pair/gpu_pairs: expected \"all\"");
  EXPECT_EQ(refused(R"({"pair": ["0-1"], "method": ["vmm_fd"], "access": ["copy"], )"
                    R"("bytes": ["64MiB"]})"),
            "");
}

TEST(IpcFamily, TheChildsSampleReplyIsCheckedBeforeItBecomesASample) {
  const auto r = parse_ipc_sample_reply(
      R"({"open_time":0.001,"close_time":0.002,"access_seconds":0.5,"accesses":3,"verified":"ok"})",
      3);
  EXPECT_DOUBLE_EQ(r.open_time, 0.001);
  EXPECT_DOUBLE_EQ(r.close_time, 0.002);
  EXPECT_DOUBLE_EQ(r.access_seconds, 0.5);
  EXPECT_EQ(r.accesses, 3u);
  const std::pair<std::string, std::string> bad[] = {
      {"not json", "not a JSON object"},
      {R"({"close_time":0,"access_seconds":1,"accesses":3,"verified":"ok"})", "open_time"},
      {R"({"open_time":-1,"close_time":0,"access_seconds":1,"accesses":3,"verified":"ok"})",
       "impossible \"open_time\""},
      {R"({"open_time":0,"close_time":0,"access_seconds":0,"accesses":3,"verified":"ok"})",
       "access_seconds"},
      {R"({"open_time":0,"close_time":0,"access_seconds":1,"accesses":2,"verified":"ok"})",
       "asked for 3"},
      {R"({"open_time":0,"close_time":0,"access_seconds":1,"accesses":3})", "verified"},
  };
  for (const auto& [json, says] : bad) {
    try {
      parse_ipc_sample_reply(json, 3);
      ADD_FAILURE() << "accepted " << json;
    } catch (const CaseFailure& e) {
      EXPECT_CONTAINS(e.what(), says);
    }
  }
}

TEST(IpcChildLauncher, AWellBehavedChildServesAndExitsCleanly) {
  IpcChild child(fake("serve"), quick());
  EXPECT_GT(child.pid(), 0);
  EXPECT_CONTAINS(child.hello(), "\"protocol\": 1");
  const auto reply = parse_ipc_sample_reply(child.request(ipc_sample_command(4)), 4);
  EXPECT_EQ(reply.accesses, 4u);
  const pid_t pid = child.pid();
  EXPECT_TRUE(child.stop());
  EXPECT_FALSE(process_exists(pid));
}

TEST(IpcChildLauncher, ACrashIsAFailureNamingTheSignal) {
  EXPECT_CONTAINS(failure(sh("kill -SEGV $$")), "killed by signal 11");
  const std::string during = failure(fake("crash_on_sample"));
  EXPECT_CONTAINS(during, "killed by signal 11");
  EXPECT_CONTAINS(during, "while waiting for the reply to");
}

TEST(IpcChildLauncher, ANonzeroExitIsAFailureNamingTheStatus) {
  const std::string why = failure(sh("exit 7"));
  EXPECT_CONTAINS(why, "exited with status 7");
  EXPECT_CONTAINS(why, "hello");
}

TEST(IpcChildLauncher, AMissingProgramIsAFailure) {
  EXPECT_CONTAINS(failure({"/nonexistent/pathbench"}), "could not start");
}

TEST(IpcChildLauncher, AHangIsKilledAtTheTimeoutNeverWaitedFor) {
  IpcChildOptions o = quick();
  o.hello_timeout = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string before = failure(sh("sleep 1000"), o);
  EXPECT_CONTAINS(before, "timed out");
  EXPECT_CONTAINS(before, "killed");
  const std::string during = failure(fake("hang_on_sample"));
  EXPECT_CONTAINS(during, "timed out");
  EXPECT_CONTAINS(during, "500 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

TEST(IpcChildLauncher, JunkAndOversizedRecordsAreProtocolErrors) {
  const std::string junk = failure(sh("printf 'not a message' >&3; sleep 1000"));
  EXPECT_CONTAINS(junk, "broke the protocol");
  EXPECT_CONTAINS(junk, "magic");
  const std::string garbage = failure(fake("garbage_on_sample"));
  EXPECT_CONTAINS(garbage, "broke the protocol");
  const std::string oversized = failure(fake("oversized_on_sample"));
  EXPECT_CONTAINS(oversized, "broke the protocol");
  EXPECT_CONTAINS(oversized, "beyond the 65536-byte limit");
  EXPECT_CONTAINS(failure(fake("bad_hello")), "hello");
}

TEST(IpcChildLauncher, TheChildsErrorFailsTheRequestAndTheChildStillStops) {
  IpcChild child(fake("error_on_sample"), quick());
  try {
    child.request(ipc_sample_command(1));
    ADD_FAILURE() << "an error reply was taken for a result";
  } catch (const CaseFailure& e) {
    EXPECT_CONTAINS(e.what(), "cudaIpcOpenMemHandle: invalid handle");
  }
  EXPECT_NO_THROW(parse_ipc_sample_reply(child.request(ipc_sample_command(1)), 1));
  EXPECT_TRUE(child.stop());
}

TEST(IpcChildLauncher, AChildThatIgnoresExitIsKilledByTheDestructor) {
  pid_t pid = -1;
  const auto t0 = std::chrono::steady_clock::now();
  {
    IpcChild child(fake("ignore_exit"), quick());
    pid = child.pid();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 8s);
  EXPECT_FALSE(process_exists(pid));
}

}  // namespace
}  // namespace pathbench::test_ipc_family
