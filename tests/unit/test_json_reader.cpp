#include "core/json_reader.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/baseline.hpp"
#include "compare/compare.hpp"
#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/text.hpp"
#include "export/compare_report.hpp"
#include "result/result.hpp"
#include "temp_dir.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_json_reader {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// TempDir with this file's prefix.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("pathbench_json_reader") {}
};

fs::path write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The InputError parsing `text` throws (both from memory and from a file), checked to agree.
InputError error_of(const std::string& text, const JsonReadOptions& options = {}) {
  std::optional<InputError> from_text, from_file;
  try {
    parse_json_text(text, "doc.json", options);
  } catch (const InputError& e) {
    from_text = e;
  }
  TempDir dir;
  const fs::path path = write(dir.path() / "doc.json", text);
  try {
    read_json_file(path, options);
  } catch (const InputError& e) {
    from_file = e;
  }
  if (!from_text || !from_file) throw std::runtime_error("no InputError for " + text);
  EXPECT_EQ(from_text->pointer(), from_file->pointer());
  EXPECT_EQ(from_file->file(), path.string());
  EXPECT_EQ(from_text->file(), "doc.json");
  return *from_text;
}

TEST(JsonReader, ReadsWhatNlohmannReadsKeepingKeyOrder) {
  const std::string text =
      R"({"z": 1, "a": [true, false, null, -3, 18446744073709551615, 2.5, "x\u00e9\n"],
          "m": {"b": {}, "a": []}, "e": ""})";
  const ojson doc = parse_json_text(text, "t");
  EXPECT_EQ(doc, ojson::parse(text));
  EXPECT_EQ(doc.dump(), ojson::parse(text).dump()) << "same order, same types";
  EXPECT_TRUE(doc["a"][4].is_number_unsigned());
  EXPECT_TRUE(doc["a"][3].is_number_integer());
}

TEST(JsonReader, DuplicateKeyAtTopLevel) {
  const InputError e = error_of(R"({"a": 1, "b": 2, "a": 3})");
  EXPECT_EQ(e.pointer(), "/a");
  EXPECT_TRUE(contains(e.what(), "duplicate key \"a\" (first near byte 4, again near byte 20)"))
      << e.what();
}

TEST(JsonReader, DuplicateKeyNested) {
  EXPECT_EQ(error_of(R"({"x": {"y": {"k": 1, "l": {"k": 0}, "k": 2}}})").pointer(), "/x/y/k");
  // Pointer tokens are escaped (RFC 6901).
  EXPECT_EQ(error_of(R"({"a/b": {"t~": 1, "t~": 2}})").pointer(), "/a~1b/t~0");
  // One key in two objects, or in an object and its parent, is no duplicate.
  EXPECT_NO_THROW(parse_json_text(R"([{"a": 1}, {"a": 2}, {"a": {"a": 3}}])", "t"));
}

TEST(JsonReader, DuplicateKeyInAnArrayOfObjects) {
  const std::string text = R"({"cases": [{"id": "a"}, {"id": "b", "x": 0, "id": "c"}]})";
  EXPECT_EQ(error_of(text).pointer(), "/cases/1/id");
  JsonReadOptions streamed;
  streamed.stream_array = "/cases";
  streamed.on_element = [](ojson&&, std::size_t, const ojson&) {};
  EXPECT_EQ(error_of(text, streamed).pointer(), "/cases/1/id");
}

TEST(JsonReader, DuplicateKeyInALargeObject) {
  // Past a few members the keys are found through an index: same verdict, same pointer.
  std::string text = "{\"o\": {";
  for (int i = 0; i < 1000; ++i)
    text += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  const std::string no_dup = text + "\"last\": 0}}";
  EXPECT_EQ(parse_json_text(no_dup, "t")["o"].size(), 1001u);
  const InputError e = error_of(text + "\"k17\": 0}}");
  EXPECT_EQ(e.pointer(), "/o/k17");
  EXPECT_TRUE(contains(e.what(), "duplicate key \"k17\"")) << e.what();
}

TEST(JsonReader, NestingDeeperThanTheLimitIsRefused) {
  const auto nested = [](std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
  };
  EXPECT_NO_THROW(parse_json_text(nested(kMaxJsonDepth), "t"));
  const InputError e = error_of(nested(kMaxJsonDepth + 1));
  EXPECT_TRUE(contains(e.what(), "nesting deeper than 64 levels")) << e.what();
  std::string innermost;  // the 65th array: element 0 of 64 nested ones
  for (std::size_t i = 0; i < kMaxJsonDepth; ++i) innermost += "/0";
  EXPECT_EQ(e.pointer(), innermost);
  // A hostile file: refused, no stack overflow.
  EXPECT_TRUE(contains(error_of(std::string(1'000'000, '[')).what(), "nesting deeper"));
  EXPECT_TRUE(contains(error_of(R"({"a": )" + nested(100) + "}").what(), "nesting deeper"));
}

TEST(JsonReader, NumberBeyondDoubleIsNotValidJson) {
  const InputError e = error_of(R"({"x": [0, 1e999]})");
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.what(), "not valid JSON")) << e.what();
  EXPECT_TRUE(contains(e.what(), "1e999 at /x/1 is beyond the range of a double")) << e.what();
  EXPECT_TRUE(contains(error_of("-1e999").what(), "at / is beyond")) << error_of("-1e999").what();
  // Integers beyond 64 bits are read as doubles, as nlohmann does.
  EXPECT_TRUE(parse_json_text("[1000000000000000000000000]", "t")[0].is_number_float());
}

TEST(JsonReader, ByteOrderMarkIsAccepted) {
  EXPECT_EQ(parse_json_text("\xEF\xBB\xBF{\"a\": 1}", "t"), ojson({{"a", 1}}));
  TempDir dir;
  EXPECT_EQ(read_json_file(write(dir.path() / "bom.json", "\xEF\xBB\xBF[1]\n")), ojson({1}));
}

TEST(JsonReader, TruncatedOrTrailingInputIsNotValidJson) {
  for (const std::string text : {R"({"a": [1, 2)", R"({"a": "unterminated)", "", "   ",
                                 R"({"a": 1} {"b": 2})", R"({"a": 1,})", "{\"a\": \"\xff\"}"}) {
    const InputError e = error_of(text);
    EXPECT_EQ(e.pointer(), "") << text;
    EXPECT_TRUE(contains(e.what(), "not valid JSON (byte ")) << e.what();
  }
  // Where the parser was is said too.
  EXPECT_TRUE(contains(error_of(R"({"cases": [{"id": "a"}, {"id": )").what(), "inside /cases/1"))
      << error_of(R"({"cases": [{"id": "a"}, {"id": )").what();
}

TEST(JsonReader, StreamedArrayElementsArriveInOrderAndAreNotKept) {
  const std::string text =
      R"({"schema": "s", "cases": [{"i": 0}, {"i": 1, "n": {"d": [1, 2]}}, 2, [3], null],
          "after": true, "other": {"cases": [9]}})";
  std::vector<ojson> seen;
  std::vector<std::size_t> indexes;
  JsonReadOptions options;
  options.stream_array = "/cases";
  options.on_element = [&](ojson&& element, std::size_t index, const ojson& document) {
    // The document so far: what came before, and the streamed array, empty.
    EXPECT_EQ(document.at("schema"), "s");
    EXPECT_EQ(document.at("cases"), ojson::array());
    EXPECT_FALSE(document.contains("after"));
    seen.push_back(std::move(element));
    indexes.push_back(index);
  };
  for (int from_file = 0; from_file < 2; ++from_file) {
    seen.clear();
    indexes.clear();
    TempDir dir;
    const ojson doc = from_file ? read_json_file(write(dir.path() / "s.json", text), options)
                                : parse_json_text(text, "t", options);
    EXPECT_EQ(indexes, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(ojson(seen), ojson::parse(text)["cases"]);
    EXPECT_EQ(doc["cases"], ojson::array()) << "the elements are not kept";
    EXPECT_EQ(doc["after"], true);
    EXPECT_EQ(doc["other"]["cases"], ojson({9})) << "only the array at exactly that pointer";
  }
}

TEST(JsonReader, StreamedPointerThatIsNotAnArrayIsKept) {
  JsonReadOptions options;
  options.stream_array = "/cases";
  int calls = 0;
  options.on_element = [&](ojson&&, std::size_t, const ojson&) { ++calls; };
  EXPECT_EQ(parse_json_text(R"({"cases": {"a": [1]}})", "t", options)["cases"]["a"], ojson({1}));
  EXPECT_EQ(parse_json_text(R"([{"cases": [1]}])", "t", options)[0]["cases"], ojson({1}));
  EXPECT_EQ(calls, 0);
}

TEST(JsonReader, AnExceptionFromTheCallbackEndsTheRead) {
  JsonReadOptions options;
  options.stream_array = "/a";
  int calls = 0;
  options.on_element = [&](ojson&&, std::size_t index, const ojson&) {
    ++calls;
    if (index == 1) throw InputError("f", "/a/1", "bad element");
  };
  try {
    parse_json_text(R"({"a": [0, 1, 2, 3]})", "t", options);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/a/1");
  }
  EXPECT_EQ(calls, 2);
}

TEST(JsonReader, LargeFileIsReadAcrossChunks) {
  // Several MiB: strings and numbers cut at every chunk boundary somewhere.
  ojson doc = ojson::object();
  ojson& list = doc["list"] = ojson::array();
  for (int i = 0; i < 60000; ++i) {
    list.push_back(ojson{{"id", "case/" + std::string(i % 97, 'x') + std::to_string(i)},
                         {"v", i * 0.125},
                         {"n", i}});
  }
  TempDir dir;
  const fs::path path = write(dir.path() / "big.json", doc.dump(1));
  ASSERT_GT(fs::file_size(path), 4u << 20);
  EXPECT_EQ(read_json_file(path), doc);
  std::size_t streamed = 0;
  JsonReadOptions options;
  options.stream_array = "/list";
  options.on_element = [&](ojson&& element, std::size_t index, const ojson&) {
    EXPECT_EQ(element, doc["list"][index]);
    ++streamed;
  };
  EXPECT_EQ(read_json_file(path, options), ojson({{"list", ojson::array()}}));
  EXPECT_EQ(streamed, 60000u);
}

TEST(JsonReader, OnlyRegularFilesAreRead) {
  TempDir dir;
  const fs::path fifo = dir.path() / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Refused at once: no writer is waited for.
  auto read_fifo = std::async(std::launch::async, [&] {
    try {
      read_json_file(fifo);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  });
  ASSERT_EQ(read_fifo.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const std::string fifo_error = read_fifo.get();
  EXPECT_TRUE(contains(fifo_error, "cannot read")) << fifo_error;
  EXPECT_TRUE(contains(fifo_error, "a FIFO")) << fifo_error;
  try {
    read_json_file(dir.path());
    FAIL() << "a directory was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), dir.path().string());
    EXPECT_TRUE(contains(e.what(), "cannot read")) << e.what();
    EXPECT_TRUE(contains(e.what(), "a directory")) << e.what();
  }
  try {
    read_json_file(dir.path() / "absent.json");
    FAIL() << "a missing file was read";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot read: No such file or directory")) << e.what();
  }
  JsonReadOptions small;
  small.max_bytes = 8;
  try {
    read_json_file(write(dir.path() / "long.json", "[1, 2, 3, 4, 5]"), small);
    FAIL() << "a file over the cap was read";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "more than the 8")) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Results and baselines go through the reader.

TEST(JsonReader, DuplicateKeyInAResultOrBaselineFileIsBadInput) {
  const fs::path fixture =
      fs::path(PATHBENCH_FIXTURES) / "bad_results" / "duplicate_metric_key.json";
  for (const bool as_baseline : {false, true}) {
    try {
      if (as_baseline) {
        load_baseline(fixture);
      } else {
        load_result(fixture);
      }
      FAIL() << "no InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), fixture.string());
      EXPECT_EQ(e.pointer(), "/cases/1/metrics/bandwidth/stats/median");
      EXPECT_TRUE(contains(e.what(), "duplicate key \"median\"")) << e.what();
    }
  }
}

Result synthetic_result(std::size_t n) {
  Result r;
  r.context = ojson{{"node_type", "synthetic"}, {"topology_fingerprint", "f"}, {"hostname", "h"}};
  r.start_time = "2026-12-01T00:00:00Z";
  r.end_time = "2026-12-01T00:01:00Z";
  for (std::size_t i = 0; i < n; ++i) {
    CaseResult c;
    c.id = concat("host_memory/measure=memcpy/bytes=4096/index=", std::to_string(i));
    c.scenario = std::string("s");  // assign("s") trips GCC 12 -Wrestrict (bug 105651)
    c.family = "host_memory";
    c.params = ojson{{"measure", "memcpy"}, {"bytes", 4096}, {"index", i}};
    c.timing_method = "host_steady_clock";
    c.status = i % 50 == 7 ? CaseStatus::kSkipped : CaseStatus::kOk;
    if (c.status == CaseStatus::kSkipped) c.reason = "not here";
    if (c.status == CaseStatus::kOk) {
      MetricResult m;
      m.name = "bandwidth";
      m.unit = "GB/s";
      m.better = Better::kHigher;
      for (int k = 0; k < 7; ++k) m.samples.push_back(10.0 + static_cast<double>((i + k) % 5));
      m.stats = summarize(m.samples);
      c.metrics.push_back(std::move(m));
    }
    c.checks.push_back(Check{"placement", true, "pages where asked", ojson(1)});
    r.cases.push_back(std::move(c));
  }
  return r;
}

TEST(JsonReader, ThousandsOfCasesCompareThroughTheStreamingPath) {
  TempDir dir;
  const Result r = synthetic_result(3000);
  const fs::path path = dir.path() / "r.json";
  save_result(path, r);
  const Result back = load_result(path);
  EXPECT_EQ(to_json(back), to_json(r)) << "read case by case, the result is the same";

  const Baseline from_file = load_baseline(path);
  const Baseline in_memory = baseline_from_result(r, path.string());
  EXPECT_EQ(to_json(from_file).dump(), to_json(in_memory).dump())
      << "a result read as a baseline case by case equals one converted whole";

  // A one-run baseline of host-timed metrics: gated only when the run minimums are lifted.
  CompareOptions one_run;
  one_run.min_runs_heavy = 1;
  one_run.min_machines_heavy = 1;
  const Comparison c = compare_results(from_file, path.string(), back, path.string(), one_run);
  ASSERT_EQ(c.cases.size(), 3000u);
  std::size_t pass = 0, skipped = 0;
  for (const auto& k : c.cases) {
    pass += k.verdict == Verdict::kPass;
    skipped += k.verdict == Verdict::kSkipped;
  }
  EXPECT_EQ(pass, 3000u - 60u);
  EXPECT_EQ(skipped, 60u);
  EXPECT_EQ(c.exit_code, 0);
  // The --json text is written case by case, and is exactly the document's dump.
  EXPECT_EQ(to_json_text(c), to_json(c).dump(2) + "\n");
}

TEST(JsonReader, ComparisonTextEqualsTheDocumentsDump) {
  Comparison c;
  EXPECT_EQ(to_json_text(c), to_json(c).dump(2) + "\n") << "no cases";
  CaseComparison k{"a/b", "copy", Verdict::kUnstable, "spread", {}};
  MetricComparison m;
  m.name = "bandwidth";
  m.unit = "GB/s";
  m.verdict = Verdict::kUnstable;
  m.p_value = 0.5;
  m.confirmation = Confirmation{1, 3, {1.0, 2.0}, {0.5, -0.5}, {"re-run 2: the case did not run"}};
  k.metrics.push_back(m);
  c.cases = {k, k, CaseComparison{"c", "copy", Verdict::kMissing, "not in the result", {}}};
  c.changes.push_back(ContextChange{});
  c.noise = {"result: steal 5 %"};
  EXPECT_EQ(to_json_text(c), to_json(c).dump(2) + "\n");
}

TEST(JsonReader, ResultWhoseSchemaFollowsItsCasesIsStillRead) {
  TempDir dir;
  const Result r = synthetic_result(5);
  ojson j = to_json(r);
  ojson moved = ojson::object();
  moved["cases"] = j["cases"];
  for (const auto& [key, value] : j.items()) {
    if (key != "cases") moved[key] = value;
  }
  const fs::path path = write(dir.path() / "late_schema.json", moved.dump());
  EXPECT_EQ(to_json(load_result(path)), to_json(r));
  EXPECT_EQ(load_baseline(path).cases.size(), 5u);
}

TEST(JsonReader, DuplicateCaseIdIsStillRefusedWhenStreamed) {
  TempDir dir;
  Result r = synthetic_result(4);
  r.cases[3].id = r.cases[1].id;
  const fs::path path = dir.path() / "dup.json";
  save_result(path, r);
  for (const bool as_baseline : {false, true}) {
    try {
      if (as_baseline) {
        load_baseline(path);
      } else {
        load_result(path);
      }
      FAIL() << "no InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(e.pointer(), "/cases/3/id");
      EXPECT_TRUE(contains(e.what(), "(also /cases/1/id)")) << e.what();
    }
  }
}

TEST(JsonReader, ResultHeaderErrorsComeBeforeCaseErrors) {
  // A wrong schema is named even though the first case is malformed too.
  TempDir dir;
  const fs::path path =
      write(dir.path() / "r.json", R"({"schema": "pathbench.result/v0", "cases": [{"id": 1}]})");
  try {
    load_result(path);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/schema");
  }
}

// The words every reader's "expected X, found Y" message uses, for both JSON value types.
TEST(JsonKind, IntegersAndFloatsAreToldApart) {
  using ojson = nlohmann::ordered_json;
  EXPECT_EQ(json_kind(ojson(3)), "integer");
  EXPECT_EQ(json_kind(ojson(-3)), "integer");
  EXPECT_EQ(json_kind(ojson(2.5)), "number");
  EXPECT_EQ(json_kind(ojson("x")), "string");
  EXPECT_EQ(json_kind(ojson::array()), "array");
  EXPECT_EQ(json_kind(ojson::object()), "object");
  EXPECT_EQ(json_kind(ojson(true)), "boolean");
  EXPECT_EQ(json_kind(ojson(nullptr)), "null");
  EXPECT_EQ(json_kind(nlohmann::json(4u)), "integer");
  EXPECT_EQ(json_kind(nlohmann::json(0.5)), "number");
}

}  // namespace
}  // namespace pathbench::test_json_reader
