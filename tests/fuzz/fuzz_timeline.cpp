// Timeline files (pathbench.timeline/v1: the recorded CUPTI timelines the fixtures and the report
// tests use). The text is parsed as JSON with the readers' depth limit, read by
// timeline_from_json (std::invalid_argument for bad content), analysed and turned into a Chrome
// trace; to_json of a timeline that loaded must load again to the same JSON (it is the
// documented inverse).

#include <cstdint>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/json_text.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "timeline/timeline.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  if (json_nesting_depth(text) > kMaxJsonDepth) return 0;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  Timeline timeline;
  bool loaded = false;
  fuzz::expect_only<std::invalid_argument>("timeline_from_json", [&] {
    timeline = timeline_from_json(doc);
    loaded = true;
  });
  if (!loaded) return 0;
  fuzz::expect_no_throw("timeline use", [&] {
    const TimelineAnalysis a = analyze_timeline(timeline);
    fuzz::check(a.overlap_fraction >= 0 && a.overlap_fraction <= 1,
                "overlap_fraction " + std::to_string(a.overlap_fraction) + " outside [0, 1]");
    (void)chrome_trace(timeline, "fuzz").dump();
    const nlohmann::ordered_json written = to_json(timeline);
    const Timeline back = timeline_from_json(nlohmann::json::parse(written.dump()));
    fuzz::check(to_json(back) == written, "to_json -> timeline_from_json changed the timeline");
  });
  return 0;
}
