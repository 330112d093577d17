// Baseline files as `compare` and `gate` read them: load_baseline takes a pathbench.baseline/v1
// file or, as a one-run baseline, a pathbench.result/v1 file. A baseline that loads is written
// back; its between-run statistics must come out of the loader without a throw.

#include <cstdint>

#include "compare/baseline.hpp"
#include "core/errors.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::InputFile file("baseline.json");
  const auto& path = file.write(fuzz::as_text(data, size));
  Baseline baseline;
  bool loaded = false;
  fuzz::expect_only<InputError>("load_baseline", [&] {
    baseline = load_baseline(path);
    loaded = true;
  });
  if (!loaded) return 0;
  fuzz::expect_no_throw("to_json(Baseline)", [&] { (void)to_json(baseline).dump(); });
  fuzz::expect_no_throw("baseline lookups", [&] {
    for (const auto& c : baseline.cases) {
      fuzz::check(baseline.find(c.id) != nullptr, "find() misses case " + c.id);
      for (const auto& m : c.metrics) {
        (void)m.pooled_samples();
        (void)between_run_of(m.runs);
      }
    }
  });
  return 0;
}
