// The ipc family's host side: its axes and rules, the shipped scenario, the child's sample reply,
// and the launcher (core/ipc_child.hpp) against fake children that crash, exit, hang, write junk
// or oversized records: each is a CaseFailure saying what happened, within short timeouts.
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
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

CaseSpec ipc_case(const std::string& method, const std::string& access, std::int64_t bytes) {
  return testing::scenario_case("ipc", {{"method", method}, {"access", access}, {"bytes", bytes}});
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

TEST(IpcFamily, ShippedScenarioExpandsToEveryMethodAccessAndSize) {
  FamilyRegistry families;
  families.add(make_ipc_family());
  const auto file =
      load_scenario_file(std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/ipc.json", families, {0});
  std::vector<std::string> ids;
  for (const auto& s : file.scenarios) {
    for (const auto& c : expand(s)) ids.push_back(c.id);
  }
  ASSERT_EQ(ids.size(), 12u);
  EXPECT_EQ(ids.front(), "ipc/method=cuda_ipc/access=copy/bytes=67108864");
  EXPECT_EQ(ids.back(), "ipc/method=shared_pinned/access=kernel/bytes=1073741824");
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
}  // namespace pathbench
