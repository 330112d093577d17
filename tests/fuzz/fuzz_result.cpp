// Result files (pathbench.result/v1) as `compare`, `export`, `baseline promote` and the gate read
// them: through load_result on a file, since that reader streams from the file. A result that
// loads is then written back, compared with itself, checked against the floors, exported and
// promoted; each of those must either work or refuse with InputError.

#include <cstdint>

#include "compare/baseline.hpp"
#include "compare/compare.hpp"
#include "export/compare_report.hpp"
#include "core/errors.hpp"
#include "export/prometheus.hpp"
#include "result/result.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::InputFile file("result.json");
  const auto& path = file.write(fuzz::as_text(data, size));
  Result result;
  bool loaded = false;
  fuzz::expect_only<InputError>("load_result", [&] {
    result = load_result(path);
    loaded = true;
  });
  if (!loaded) return 0;
  fuzz::expect_no_throw("to_json(Result)", [&] { (void)to_json(result).dump(); });
  fuzz::expect_no_throw("context_json", [&] { (void)context_json(result); });
  fuzz::expect_only<InputError>("compare_results (self)", [&] {
    const Comparison c = compare_results(result, "a.json", result, "b.json", CompareOptions{});
    (void)to_json(c).dump();
    (void)junit_xml(c);
  });
  fuzz::expect_only<InputError>("check_result_floors", [&] {
    (void)to_json(check_result_floors(result, "a.json", CompareOptions{})).dump();
  });
  fuzz::expect_only<InputError>("prometheus_exposition",
                                [&] { (void)prometheus_exposition(result); });
  fuzz::expect_only<InputError>("build_baseline", [&] {
    (void)to_json(build_baseline({result}, {"a.json"}, PromoteOptions{})).dump();
  });
  fuzz::expect_only<InputError>("baseline_from_result",
                                [&] { (void)to_json(baseline_from_result(result, "a.json")); });
  return 0;
}
