// Regression tests of the issue 10 bad-input audit (findings G1-G8): each finding's reader or
// validator logic, on small generated inputs. The end-to-end side (the real binary) is
// tests/e2e/test_bad_input_audit.py.
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/baseline.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_reader.hpp"
#include "core/option_values.hpp"
#include "result/gate_block.hpp"
#include "result/result.hpp"
#include "result/run_record.hpp"
#include "scenario/scenario_file.hpp"
#include "stats/summary.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_bad_input_audit {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// No family at all: the documents here are refused before any family is looked up.
class NoFamilies : public FamilyCatalog {
 public:
  const FamilySchema* find_schema(std::string_view) const override { return nullptr; }
  std::vector<std::string> names() const override { return {}; }
};

Result run_header() {
  Result r;
  r.context["hostname"] = "node-a";
  r.start_time = "2026-12-01T06:00:00Z";
  return r;
}

class AuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "pathbench_audit.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // The InputError `f` throws (a test failure when it throws none).
  template <typename F>
  static InputError error_of(F&& f) {
    try {
      f();
    } catch (const InputError& e) {
      return e;
    }
    ADD_FAILURE() << "no InputError";
    return InputError("", "", "none");
  }
  static ojson good_result() {
    std::ifstream in(std::string(PATHBENCH_FIXTURES) + "/results/cpu-only-default.json");
    return ojson::parse(in);
  }
  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// G1: a NUL byte is never the end of a document.

TEST_F(AuditTest, G1ANulByteAnywhereIsBadInputAtTheRoot) {
  const std::string doc = "{\"schema\": \"x\", \"n\": [1, 2]}";
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"trailing NUL", doc + std::string(1, '\0')},
      {"NUL then garbage", doc + std::string(1, '\0') + "{{{ \"unterminated"},
      {"NUL then a second document", doc + std::string(1, '\0') + doc},
      {"NUL in the middle", "{\"a\": " + std::string(1, '\0') + "1}"},
      {"NUL first", std::string(1, '\0') + doc},
      {"NUL after white space", doc + "  \n" + std::string(1, '\0')},
  };
  // Elements by name, not structured bindings: clang 14 (the sanitizer stage) cannot capture a
  // binding in a lambda.
  for (const auto& entry : texts) {
    const std::string& text = entry.second;
    SCOPED_TRACE(entry.first);
    const InputError from_text = error_of([&] { parse_json_text(text, "doc.json"); });
    EXPECT_EQ(from_text.pointer(), "");
    EXPECT_TRUE(contains(from_text.what(), "NUL")) << from_text.what();
    const fs::path file = write("doc.json", text);
    const InputError from_file = error_of([&] { read_json_file(file); });
    EXPECT_EQ(from_file.pointer(), "");
    EXPECT_EQ(from_file.file(), file.string());
    EXPECT_TRUE(contains(from_file.what(), "NUL")) << from_file.what();
  }
  // Where it is: the byte offset of the NUL.
  EXPECT_TRUE(contains(error_of([&] { parse_json_text(doc + std::string(1, '\0'), "d"); }).what(),
                       "(byte " + std::to_string(doc.size()) + ")"));
}

TEST_F(AuditTest, G1ARawNulInAStringIsRefusedAnEscapedOneIsAString) {
  EXPECT_EQ(error_of([] { parse_json_text(std::string("[\"a\0b\"]", 7), "d"); }).pointer(), "");
  const ojson ok = parse_json_text("[\"a\\u0000b\"]", "d");
  EXPECT_EQ(ok[0].get<std::string>(), std::string("a\0b", 3));
}

TEST_F(AuditTest, G1ScenarioAndResultReadersRefuseANulAfterTheDocument) {
  const std::string scenario =
      "{\"schema\": \"pathbench.scenario/v1\", \"scenarios\": [{\"name\": \"a\", \"family\": "
      "\"host_memory\", \"axes\": {\"measure\": [\"memcpy\"], \"bytes\": [4096]}}]}";
  const fs::path s = write("s.json", scenario + std::string(1, '\0') + "garbage");
  const InputError se = error_of([&] { load_scenario_file(s, NoFamilies{}, {0}, {}); });
  EXPECT_EQ(se.file(), s.string());
  EXPECT_EQ(se.pointer(), "");
  const fs::path r = write("r.json", good_result().dump(1) + std::string(1, '\0') + "{{{");
  const InputError re = error_of([&] { load_result(r); });
  EXPECT_EQ(re.file(), r.string());
  EXPECT_EQ(re.pointer(), "");
  EXPECT_TRUE(contains(re.what(), "NUL")) << re.what();
}

// ---------------------------------------------------------------------------------------------
// G4 (reader side): white space is skipped, never kept, and positions stay byte offsets.

TEST_F(AuditTest, G4PositionsInMessagesAreByteOffsetsAcrossSkippedWhiteSpace) {
  const std::string text = "[1," + std::string(1000, ' ') + "x]";
  const InputError e = error_of([&] { parse_json_text(text, "d"); });
  EXPECT_TRUE(contains(e.what(), "not valid JSON (byte 1004)")) << e.what();
  // Inside strings white space is content, untouched.
  const ojson s = parse_json_text("[\"a   \\\"  b\"  ,  \"  \"]", "d");
  EXPECT_EQ(s[0].get<std::string>(), "a   \"  b");
  EXPECT_EQ(s[1].get<std::string>(), "  ");
  // Across chunk boundaries of a file (1 MiB chunks): a value after 3 MiB of white space.
  const fs::path big =
      write("ws.json", "{\"a\":" + std::string(3 << 20, '\n') + "7}" + std::string(5 << 20, ' '));
  EXPECT_EQ(read_json_file(big).at("a"), 7);
}

TEST_F(AuditTest, G4ARunOfWhiteSpaceIsBounded) {
  const std::string at_cap = "[1," + std::string(kMaxJsonWhiteSpaceRun, ' ') + "2]";
  EXPECT_EQ(parse_json_text(at_cap, "d").size(), 2u);
  // One more byte: refused, naming where the run began, as soon as the run is that long (a
  // truncated file padded with a GB of spaces is refused without reading the rest).
  const std::string beyond = "[1," + std::string(kMaxJsonWhiteSpaceRun + 1, '\n') + "2]";
  const InputError e = error_of([&] { parse_json_text(beyond, "d"); });
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.what(), "(byte 3): more than " + std::to_string(kMaxJsonWhiteSpaceRun) +
                                     " bytes of white space in a row"))
      << e.what();
}

#if defined(__SANITIZE_ADDRESS__)
#define PATHBENCH_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PATHBENCH_UNDER_ASAN 1
#endif
#endif

TEST_F(AuditTest, G4WhiteSpaceCostsNoMemoryWhileParsing) {
#ifdef PATHBENCH_UNDER_ASAN
  GTEST_SKIP() << "an address-space limit means nothing under AddressSanitizer";
#else
  // 96 MiB of spaces after a document cut short: nlohmann's lexer kept every character since the
  // last string in a buffer, so this needed 96+ MiB more (and a copy for the message). In a child
  // whose address space may grow by 48 MiB only, the refusal must still come as an InputError.
  const std::string text = "{\"a\": [1, 2" + std::string(std::size_t{96} << 20, ' ');
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::ifstream statm("/proc/self/statm");
    unsigned long pages = 0;
    statm >> pages;
    const rlim_t limit = static_cast<rlim_t>(pages) * ::sysconf(_SC_PAGESIZE) + (48u << 20);
    const rlimit rl{limit, limit};
    if (::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(4);
    try {
      parse_json_text(text, "d");
    } catch (const InputError&) {
      ::_exit(0);
    } catch (...) {
      ::_exit(1);  // std::bad_alloc: the white space was kept
    }
    ::_exit(2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: out of memory on white space";
#endif
}

// ---------------------------------------------------------------------------------------------
// G2: a result's fields after its cases.

TEST_F(AuditTest, G2AContextAfterTheCasesIsAValidResult) {
  const ojson good = good_result();
  ojson reordered = ojson::object();
  reordered["schema"] = good["schema"];
  reordered["complete"] = true;
  reordered["cases"] = good["cases"];
  reordered["context"] = good["context"];  // last
  const fs::path p = write("r.json", reordered.dump(1));
  const Result r = load_result(p);
  const Result expected = result_from_json(good, "good");
  EXPECT_EQ(r.cases.size(), expected.cases.size());
  EXPECT_EQ(r.start_time, expected.start_time);
  EXPECT_EQ(r.end_time, expected.end_time);
  EXPECT_EQ(r.complete, expected.complete);
  // Streamed: export's reader sees every case too.
  std::size_t streamed = 0;
  read_result_file(p, [&](CaseResult&&, std::size_t) { ++streamed; });
  EXPECT_EQ(streamed, expected.cases.size());
  // A baseline from such a file (compare A B reads A so).
  EXPECT_EQ(load_baseline(p).cases.size(), expected.cases.size());
}

TEST_F(AuditTest, G2ABadFieldAfterTheCasesIsNamedByItsOwnPointer) {
  const ojson good = good_result();
  ojson bad = ojson::object();
  bad["schema"] = good["schema"];
  bad["cases"] = good["cases"];
  bad["context"] = good["context"];
  bad["context"]["end_time"] = 5;
  const fs::path p = write("r.json", bad.dump());
  EXPECT_EQ(error_of([&] { load_result(p); }).pointer(), "/context/end_time");
  // Still missing when it never comes; and a field before the cases is checked before them.
  ojson none = ojson::object();
  none["schema"] = good["schema"];
  none["cases"] = good["cases"];
  EXPECT_EQ(error_of([&] { load_result(write("n.json", none.dump())); }).pointer(), "/context");
  ojson early = ojson::object();
  early["schema"] = good["schema"];
  early["complete"] = "yes";
  early["cases"] = good["cases"];
  early["cases"][0]["status"] = "weird";
  early["context"] = good["context"];
  EXPECT_EQ(error_of([&] { load_result(write("e.json", early.dump())); }).pointer(), "/complete");
  // A bad case before a context: the case, in the file's order.
  ojson case_first = ojson::object();
  case_first["schema"] = good["schema"];
  case_first["cases"] = good["cases"];
  case_first["cases"][1]["status"] = "weird";
  case_first["context"] = good["context"];
  case_first["context"]["end_time"] = 5;
  EXPECT_EQ(error_of([&] { load_result(write("c.json", case_first.dump())); }).pointer(),
            "/cases/1/status");
}

// ---------------------------------------------------------------------------------------------
// G3: one gate-block rule for scenarios, results and baselines.

TEST_F(AuditTest, G3TheGateBlockRule) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"("x")", ""},
      {R"({"threshold_pct": "x"})", "/threshold_pct"},
      {R"({"threshold_pct": null})", "/threshold_pct"},
      {R"({"threshold_pct": -1})", "/threshold_pct"},
      {R"({"threshold_pct": 0})", "/threshold_pct"},
      {R"({"threshold_pct": 1000.5})", "/threshold_pct"},
      {R"({"metrics": "x"})", "/metrics"},
      {R"({"metrics": 5})", "/metrics"},
      {R"({"metrics": [1, 2]})", "/metrics"},
      {R"({"metrics": {}})", "/metrics"},
      {R"({"metrics": {"bandwidth": "x"}})", "/metrics/bandwidth"},
      {R"({"metrics": {"bandwidth": -3}})", "/metrics/bandwidth"},
      {R"({"metrics": {"a/b": null}})", "/metrics/a~1b"},
      {R"({"zzz": 1})", "/zzz"},
  };
  for (const auto& entry : bad) {
    const std::string& text = entry.first;
    const std::string& at = entry.second;
    SCOPED_TRACE(text);
    const InputError e = error_of([&] { check_gate_block(ojson::parse(text), "f", "/g"); });
    EXPECT_EQ(e.file(), "f");
    EXPECT_EQ(e.pointer(), "/g" + at);
  }
  check_gate_block(ojson::parse(R"({"threshold_pct": 1000, "metrics": {"a": 0.5}})"), "f", "/g");
  check_gate_block(ojson::object(), "f", "/g");
}

TEST_F(AuditTest, G3ABaselinesGateBlockIsCheckedAsAResultsIs) {
  const Result r = result_from_json(good_result(), "good");
  const ojson baseline = to_json(baseline_from_result(r, "good"));
  ASSERT_FALSE(baseline["cases"].empty());
  const std::vector<std::pair<ojson, std::string>> gates = {
      {ojson::parse(R"({"threshold_pct": "x"})"), "/cases/0/gate/threshold_pct"},
      {ojson::parse(R"({"threshold_pct": null})"), "/cases/0/gate/threshold_pct"},
      {ojson::parse(R"({"threshold_pct": 0})"), "/cases/0/gate/threshold_pct"},
      {ojson::parse(R"({"metrics": [1, 2]})"), "/cases/0/gate/metrics"},
      {ojson::parse(R"({"metrics": {"bandwidth": -3}})"), "/cases/0/gate/metrics/bandwidth"},
      {ojson::parse(R"({"zzz": 1})"), "/cases/0/gate/zzz"},
      {ojson("x"), "/cases/0/gate"},
  };
  for (const auto& [gate, at] : gates) {
    SCOPED_TRACE(gate.dump());
    ojson b = baseline;
    b["cases"][0]["gate"] = gate;
    EXPECT_EQ(error_of([&] { baseline_from_json(b, "b.json"); }).pointer(), at);
    // The result reader gives the same pointer for the same block.
    ojson res = good_result();
    res["cases"][0]["gate"] = gate;
    EXPECT_EQ(error_of([&] { result_from_json(res, "r.json"); }).pointer(), at);
  }
  ojson ok = baseline;
  ok["cases"][0]["gate"] = ojson::parse(R"({"threshold_pct": 10})");
  const Baseline read = baseline_from_json(ok, "b.json");
  EXPECT_EQ(read.cases[0].gate.value("threshold_pct", 0), 10);
}

// ---------------------------------------------------------------------------------------------
// G4 (journal side): read line by line, a line bounded, a journal it cannot trust refused.

class JournalAudit : public AuditTest {
 protected:
  void SetUp() override {
    AuditTest::SetUp();
    out_ = dir_ / "run.json";
    {
      RunRecord record(out_, run_header());
      record.add(ok_case("a"));
    }
    std::ifstream in(journal_path(out_), std::ios::binary);
    initial_journal_.assign(std::istreambuf_iterator<char>(in), {});
  }
  // The journal as the run left it (its header and case "a").
  void reset_journal() const {
    std::ofstream(journal_path(out_), std::ios::trunc | std::ios::binary) << initial_journal_;
  }
  static CaseResult ok_case(const std::string& id) {
    CaseResult c;
    c.id = id;
    c.scenario = "s";
    c.family = "host_memory";
    c.timing_method = "host_steady_clock";
    const std::vector<double> samples = {1.0, 2.0, 3.0};
    c.metrics.push_back(MetricResult{"bandwidth", "B/s", Better::kHigher, samples,
                                     summarize(samples), std::nullopt});
    return c;
  }
  void append(const std::string& text) const {
    std::ofstream(journal_path(out_), std::ios::app | std::ios::binary) << text;
  }
  Result incomplete() const {
    Result r = result_from_json(load_json_document(out_), out_.string());
    r.cases.clear();
    return r;
  }
  fs::path out_;
  std::string initial_journal_;
};

TEST_F(JournalAudit, G4ALineLongerThanTheCapIsRefusedNamingTheJournal) {
  append(std::string(kMaxJournalLineBytes + 1, 'x'));  // no newline: also a cut-short "line"
  Result r = incomplete();
  const InputError e = error_of([&] { fold_journal(r, out_); });
  EXPECT_TRUE(contains(e.file(), journal_path(out_).string())) << e.what();
  EXPECT_TRUE(contains(e.what(), out_.string())) << "names the result too: " << e.what();
  EXPECT_TRUE(contains(e.what(), "line 3")) << e.what();
  EXPECT_TRUE(contains(e.what(), std::to_string(kMaxJournalLineBytes))) << e.what();
}

TEST_F(JournalAudit, G4AWholeLineThatIsNotACaseIsRefused) {
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"not json\n", "not valid JSON"},
      {"{\"id\": 1}\n", "/id"},
      {std::string("{\"a\":\0}\n", 8), "NUL"},
  };
  for (const auto& [line, says] : lines) {
    SCOPED_TRACE(line);
    reset_journal();
    append(line);
    Result r = incomplete();
    const InputError e = error_of([&] { fold_journal(r, out_); });
    EXPECT_TRUE(contains(
        e.what(), journal_path(out_).string() + " (the journal of " + out_.string() + ") line 3"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), says)) << e.what();
  }
}

TEST_F(JournalAudit, G4AJournalThatIsNotARegularFileIsRefused) {
  fs::remove(journal_path(out_));
  ASSERT_EQ(::mkfifo(journal_path(out_).c_str(), 0600), 0);
  Result r = incomplete();
  EXPECT_TRUE(contains(error_of([&] { fold_journal(r, out_); }).what(), "FIFO"));
  fs::remove(journal_path(out_));
  fs::create_symlink(journal_path(out_), journal_path(out_));  // a loop
  EXPECT_TRUE(
      contains(error_of([&] { fold_journal(r, out_); }).file(), journal_path(out_).string()));
  fs::remove(journal_path(out_));
  EXPECT_EQ(fold_journal(r, out_), 0u) << "no journal: nothing to add, no error";
}

TEST_F(JournalAudit, G4TheLastLineCutShortIsStillIgnored) {
  append("{\"id\": \"b\", \"scen");
  Result r = incomplete();
  EXPECT_EQ(fold_journal(r, out_), 1u);
}

// ---------------------------------------------------------------------------------------------
// G5: a scenario directory's *.json entries that are not regular files.

TEST_F(AuditTest, G5AFifoOrDeviceInAScenarioDirectoryIsBadInputNamingIt) {
  const fs::path d = dir_ / "scenarios";
  fs::create_directories(d / "sub.json");  // a folder named *.json: left out
  std::ofstream(d / "a.json") << "{}";
  EXPECT_EQ(collect_scenario_paths({d.string()}), std::vector<fs::path>{d / "a.json"});
  ASSERT_EQ(::mkfifo((d / "b_fifo.json").c_str(), 0600), 0);
  InputError e = error_of([&] { collect_scenario_paths({d.string()}); });
  EXPECT_EQ(e.file(), (d / "b_fifo.json").string());
  EXPECT_TRUE(contains(e.what(), "FIFO")) << e.what();
  fs::remove(d / "b_fifo.json");
  fs::create_symlink("/dev/zero", d / "b_zero.json");
  e = error_of([&] { collect_scenario_paths({d.string()}); });
  EXPECT_EQ(e.file(), (d / "b_zero.json").string());
  EXPECT_TRUE(contains(e.what(), "character device")) << e.what();
}

// ---------------------------------------------------------------------------------------------
// G6: an output that is a symbolic link loop.

TEST_F(AuditTest, G6AnOutputThatIsALinkLoopIsRefusedLeavingNothing) {
  const fs::path loop = dir_ / "loop";
  fs::create_symlink(loop, loop);
  EXPECT_THROW(check_output_target(loop), NotARegularFile);
  EXPECT_THROW(check_output_target(loop / "x.json"), NotARegularFile);
  EXPECT_THROW(write_file_atomically(loop, "x"), NotARegularFile);
  EXPECT_THROW(write_file_atomically(loop / "x.json", "x"), NotARegularFile);
  const InputError e = error_of([&] { RunRecord record(loop, run_header()); });
  EXPECT_EQ(e.file(), loop.string());
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir_)) left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"loop"}) << "no journal, no temporary file";
  // A link to a regular file, or to nothing yet, is written through.
  fs::create_symlink(dir_ / "target.json", dir_ / "link.json");
  EXPECT_EQ(check_output_target(dir_ / "link.json"), dir_ / "target.json");
}

// ---------------------------------------------------------------------------------------------
// G7: what messages echo.

TEST_F(AuditTest, G7ControlCharactersAreEscaped) {
  EXPECT_EQ(printable_text("a\x1b[2Jb"), "a\\u001b[2Jb");
  EXPECT_EQ(printable_text(std::string("k\0y", 3)), "k\\u0000y");
  EXPECT_EQ(printable_text("\t\n\r\x7f"), "\\u0009\\u000a\\u000d\\u007f");
  EXPECT_EQ(printable_text("\xc2\x9b"
                           "1m"),
            "\\u009b1m");  // C1 CSI
  EXPECT_EQ(printable_text("\xff"
                           "x"),
            "\\xffx");  // not UTF-8
  EXPECT_EQ(printable_text("caf\xc3\xa9 \xe2\x86\x92 ok"), "caf\xc3\xa9 \xe2\x86\x92 ok");
  EXPECT_EQ(printable_lines("\033[31mred\033[0m \033[2J\nnext", {"\033[31m", "\033[0m"}),
            "\033[31mred\033[0m \\u001b[2J\nnext");
}

TEST_F(AuditTest, G7InputErrorMessagesArePrintableWhole) {
  // A key "\u0000": the message used to end at the NUL.
  const InputError nul("f.json", std::string("/scenarios/0/\0", 14), "unknown field");
  EXPECT_EQ(std::string(nul.what()), "f.json: /scenarios/0/\\u0000: unknown field");
  EXPECT_EQ(nul.pointer(), std::string("/scenarios/0/\0", 14)) << "the pointer itself is kept";
  const InputError esc("f.json", "/a", "\"\x1b[2J\x1b[31mh2d\" is not one of: h2d, d2h");
  EXPECT_EQ(std::string(esc.what()).find('\x1b'), std::string::npos) << esc.what();
  EXPECT_TRUE(contains(esc.what(), "\\u001b[2J")) << esc.what();
  const InputError opt = InputError::option("--filter", "bad \x1b");
  EXPECT_EQ(std::string(opt.what()), "--filter: bad \\u001b");
}

TEST_F(AuditTest, G7EchoedValuesAreShortened) {
  const std::string value(1200000, 'v');
  const InputError e("f.json", "/scenarios/0/axes/host_memory/0",
                     "\"" + value + "\" is not one of: pinned, pageable-4k");
  const std::string m = e.what();
  EXPECT_LT(m.size(), 600u) << m.substr(0, 300);
  EXPECT_TRUE(contains(m, std::string(kMaxEchoedChars, 'v') + "\u2026\" (1200000 bytes)")) << m;
  EXPECT_FALSE(contains(m, std::string(kMaxEchoedChars + 1, 'v')));
  EXPECT_TRUE(contains(m, "is not one of: pinned, pageable-4k")) << "the rest is kept";
  // A long key in the pointer.
  const std::string key(100000, 'k');
  const InputError p("f.json", "/scenarios/0/gate/metrics/" + key,
                     "unknown metric \"" + key + "\"");
  EXPECT_LT(std::string(p.what()).size(), 800u);
  EXPECT_TRUE(contains(p.what(), "/scenarios/0/gate/metrics/" + std::string(kMaxEchoedChars, 'k') +
                                     "\u2026 (100000 bytes): unknown metric"))
      << std::string(p.what()).substr(0, 400);
  // Short ones are untouched; a whole message never exceeds the cap by much.
  EXPECT_EQ(std::string(InputError("f", "/a", "\"short\" is bad").what()),
            "f: /a: \"short\" is bad");
  const InputError huge("f", "/a", std::string(100000, 'x'));
  EXPECT_LT(std::string(huge.what()).size(), kMaxMessageBytes + 100);
  EXPECT_TRUE(contains(huge.what(), "(message cut: 100000 bytes)"));
  // A UTF-8 value is cut between characters, never inside one.
  std::string accents;
  for (int i = 0; i < 300; ++i) accents += "\xc3\xa9";
  const std::string cut = InputError("f", "/a", "\"" + accents + "\"").what();
  EXPECT_TRUE(contains(cut, "\xc3\xa9\u2026\" (600 bytes)")) << cut;
  EXPECT_EQ(cut.find("\\x"), std::string::npos) << cut;
}

// ---------------------------------------------------------------------------------------------
// G8: integer options, parsed strictly.

TEST_F(AuditTest, G8IntegerOptionsAreParsedStrictlyWithinBounds) {
  EXPECT_EQ(parse_integer_option("--repetitions", "1", 1, 100000), 1);
  EXPECT_EQ(parse_integer_option("--repetitions", "100000", 1, 100000), 100000);
  for (const char* bad : {"", "0", "-1", "100001", "0x10", "1e3", "3.5", "+5", " 5", "5 ", "abc",
                          "99999999999999999999", "1e400"}) {
    SCOPED_TRACE(bad);
    const InputError e = error_of([&] { parse_integer_option("--repetitions", bad, 1, 100000); });
    EXPECT_EQ(std::string(e.what()).rfind("--repetitions: expected an integer in [1, 100000]", 0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace pathbench::test_bad_input_audit
