#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "result/result.hpp"
#include "result/run_record.hpp"

namespace pathbench::test_run_record {
namespace {

namespace fs = std::filesystem;

class RunRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "pathbench_run_record.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    out_ = dir_ / "run.json";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static Result header(const std::string& start = "2026-12-01T06:00:00Z") {
    Result r;
    r.context["hostname"] = "node-a";
    r.start_time = start;
    return r;
  }
  static CaseResult ok_case(const std::string& id) {
    CaseResult c;
    c.id = id;
    c.scenario = "s";
    c.family = "host_memory";
    c.timing_method = "host_steady_clock";
    const std::vector<double> samples = {1.0, 2.0, 3.0};
    MetricResult m{"bandwidth", "B/s", Better::kHigher, samples, summarize(samples), std::nullopt};
    c.metrics.push_back(m);
    return c;
  }
  std::vector<std::string> ids(const Result& r) const {
    std::vector<std::string> out;
    for (const auto& c : r.cases) out.push_back(c.id);
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_, out_;
};

TEST_F(RunRecordTest, AFinishedRunIsCompleteAndLeavesNoJournal) {
  {
    RunRecord record(out_, header());
    EXPECT_FALSE(load_result(out_).complete) << "a run in progress is marked incomplete";
    EXPECT_TRUE(fs::exists(journal_path(out_)));
    record.add(ok_case("a"));
    record.add(ok_case("b"));
    record.finish(true);
  }
  const Result r = load_result(out_);
  EXPECT_TRUE(r.complete);
  EXPECT_FALSE(r.end_time.empty());
  EXPECT_EQ(ids(r), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(), std::vector<std::string>{"run.json"});
}

TEST_F(RunRecordTest, AnInterruptedRunSaysWhy) {
  {
    RunRecord record(out_, header());
    record.add(ok_case("a"));
    record.finish(false, "interrupted by SIGTERM");
  }
  const Result r = load_result(out_);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.incomplete_reason, "interrupted by SIGTERM");
  EXPECT_EQ(ids(r), std::vector<std::string>{"a"});
  EXPECT_EQ(names(), std::vector<std::string>{"run.json"});
}

TEST_F(RunRecordTest, AKilledRunKeepsEveryCaseThroughItsJournal) {
  {
    RunRecord record(out_, header());
    for (const char* id : {"a", "b", "c", "d"}) record.add(ok_case(id));
    // Destroyed without finish(): what a kill leaves. The result file was saved at most at the
    // start (saves are rate-limited); the journal has every case.
  }
  const Result raw = result_from_json(load_json_document(out_), out_.string());
  EXPECT_FALSE(raw.complete);
  EXPECT_LT(raw.cases.size(), 4u) << "saves are not per case (the point of the journal)";
  Result folded = raw;
  EXPECT_EQ(fold_journal(folded, out_), 4u - raw.cases.size());
  EXPECT_EQ(ids(folded), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(fold_journal(folded, out_), 0u) << "folding twice adds nothing";
}

TEST_F(RunRecordTest, ALineCutShortByAKillIsIgnored) {
  {
    RunRecord record(out_, header());
    record.add(ok_case("a"));
  }
  {
    std::ofstream journal(journal_path(out_), std::ios::app);
    journal << "{\"id\": \"b\", \"scen";  // the kill came mid-line
  }
  Result r = result_from_json(load_json_document(out_), out_.string());
  r.cases.clear();
  EXPECT_EQ(fold_journal(r, out_), 1u);
  EXPECT_EQ(ids(r), std::vector<std::string>{"a"});
}

TEST_F(RunRecordTest, AnotherRunsJournalIsNotFolded) {
  {
    RunRecord record(out_, header("2026-12-01T06:00:00Z"));
    record.add(ok_case("a"));
  }
  Result other = header("2026-12-01T07:00:00Z");
  other.complete = false;
  EXPECT_EQ(fold_journal(other, out_), 0u);
  Result complete = header("2026-12-01T06:00:00Z");
  complete.complete = true;
  EXPECT_EQ(fold_journal(complete, out_), 0u) << "a complete result has every case";
}

TEST_F(RunRecordTest, ASecondRunOnTheSameOutputIsRefusedNamingTheFirstsPid) {
  RunRecord first(out_, header());
  try {
    RunRecord second(out_, header());
    FAIL() << "two runs wrote one output";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("PID " + std::to_string(::getpid())), std::string::npos)
        << e.what();
    EXPECT_EQ(e.file(), out_.string());
  }
  first.add(ok_case("a"));
  first.finish(true);
  EXPECT_EQ(ids(load_result(out_)), std::vector<std::string>{"a"}) << "the first run is intact";
}

TEST_F(RunRecordTest, TheNextRunReplacesAKilledRunsJournal) {
  {
    RunRecord killed(out_, header("2026-12-01T05:00:00Z"));
    killed.add(ok_case("old"));
  }
  {
    RunRecord next(out_, header("2026-12-01T06:00:00Z"));
    next.add(ok_case("new"));
    next.finish(true);
  }
  EXPECT_EQ(ids(load_result(out_)), std::vector<std::string>{"new"});
  EXPECT_EQ(names(), std::vector<std::string>{"run.json"});
}

TEST_F(RunRecordTest, AResumedRunKeepsItsCasesAndItsStartTime) {
  {
    RunRecord killed(out_, header());
    killed.add(ok_case("a"));
  }
  Result resumed = result_from_json(load_json_document(out_), out_.string());
  fold_journal(resumed, out_);
  {
    RunRecord record(out_, resumed);
    record.add(ok_case("b"));
    record.finish(true);
  }
  const Result r = load_result(out_);
  EXPECT_EQ(ids(r), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.start_time, "2026-12-01T06:00:00Z");
  EXPECT_TRUE(r.complete);
}

TEST_F(RunRecordTest, ABareFileNameIsInTheWorkingDirectory) {
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  {
    RunRecord record("bare.json", header());
    EXPECT_EQ(journal_path("bare.json"), fs::canonical(dir_) / ".bare.json.journal");
    record.add(ok_case("a"));
    record.finish(true);
  }
  fs::current_path(before);
  EXPECT_EQ(ids(load_result(dir_ / "bare.json")), std::vector<std::string>{"a"});
}

TEST_F(RunRecordTest, AnOutputThatIsADirectoryIsBadInput) {
  fs::create_directory(out_);
  EXPECT_THROW(RunRecord record(out_, header()), InputError);
  EXPECT_TRUE(fs::is_directory(out_));
}

// ------------------------------------------------------------------------------------------------
// Temporary files of killed writers

std::string this_host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// A PID no process has: the highest one the kernel could hand out, checked.
long dead_pid() {
  for (long pid = 4194000; pid > 1000; --pid) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return pid;
  }
  return -1;
}

TEST_F(RunRecordTest, TheNextWriteRemovesTheTemporaryFilesOfDeadWritersOnly) {
  const long dead = dead_pid();
  ASSERT_GT(dead, 0);
  const std::string prefix = ".run.json.tmp-" + this_host() + "-";
  const fs::path stale = dir_ / (prefix + std::to_string(dead) + ".AbC123");
  const fs::path live = dir_ / (prefix + std::to_string(::getpid()) + ".XyZ789");
  const fs::path other_host =
      dir_ / (".run.json.tmp-elsewhere-" + std::to_string(dead) + ".QwE456");
  const fs::path unrelated =
      dir_ / (".other.json.tmp-" + this_host() + "-" + std::to_string(dead) + ".RtY012");
  for (const auto& p : {stale, live, other_host, unrelated}) std::ofstream(p) << "{";
  write_file_atomically(out_, "{}\n");
  EXPECT_FALSE(fs::exists(stale)) << "a killed writer's leftover goes with the next write";
  EXPECT_TRUE(fs::exists(live)) << "a live writer's file is not touched";
  EXPECT_TRUE(fs::exists(other_host)) << "another host's writer on a shared folder is not judged";
  EXPECT_TRUE(fs::exists(unrelated)) << "another output's files are not touched";
}

TEST(WriteErrors, AFullDiskIsDiskFullNotBadInput) {
  EXPECT_THROW(throw_write_error("write(x)", ENOSPC), DiskFull);
  EXPECT_THROW(throw_write_error("write(x)", EDQUOT), DiskFull);
  try {
    throw_write_error("write(x)", EACCES);
  } catch (const DiskFull&) {
    FAIL() << "EACCES is not a full disk";
  } catch (const SystemError& e) {
    EXPECT_EQ(e.error_number(), EACCES);
  }
}

TEST(WriteErrors, WriteOutputFileNamesTheFileAndLetsDiskFullThrough) {
  // /dev/full is a device: refused as bad input without being touched.
  try {
    write_output_file("/dev/full", "x", "the report");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "/dev/full");
    EXPECT_NE(std::string(e.what()).find("cannot write the report"), std::string::npos);
  }
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

}  // namespace
}  // namespace pathbench::test_run_record
