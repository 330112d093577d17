// A result's context as `compare` and the gate read it back: the inventory (topology lines behind
// the fingerprint, inventory_from_json) and the environment samples the noise check judges
// (noise_reasons, environment_sample_from_json). Input is a context object, or a whole result
// whose "context" is used, so that result fixtures seed it. Both readers document
// std::invalid_argument for a field of the wrong type. RunContext, the typed context the readers
// share, throws InputError instead, and what it accepts it writes back unchanged.

#include <cstdint>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "inventory/environment.hpp"
#include "inventory/fingerprint.hpp"
#include "inventory/inventory.hpp"
#include "result/run_context.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  if (json_nesting_depth(text) > kMaxJsonDepth) return 0;
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  if (doc.is_object() && doc.contains("context")) doc = doc["context"];

  fuzz::expect_only<std::invalid_argument>("inventory_from_json", [&] {
    const Inventory inventory = inventory_from_json(doc);
    (void)topology_canonical_text(inventory);
    (void)topology_fingerprint(inventory);
    (void)to_json(inventory).dump();
  });
  fuzz::expect_only<std::invalid_argument>("noise_reasons", [&] { (void)noise_reasons(doc); });
  fuzz::expect_only<InputError>("RunContext::from_json", [&] {
    const nlohmann::ordered_json context(doc);
    fuzz::check(RunContext::from_json(context, "context.json").to_json() == context,
                "RunContext::to_json did not give back the context it read");
  });
  if (doc.is_object() && doc.contains("environment") && doc["environment"].is_object()) {
    for (const char* key : {"start", "end"}) {
      const auto& env = doc["environment"];
      if (!env.contains(key)) continue;
      fuzz::expect_only<std::invalid_argument>("environment_sample_from_json", [&] {
        const EnvironmentSample sample = environment_sample_from_json(env[key], "/environment");
        (void)to_json(sample).dump();
        if (sample.cpu) (void)cpu_share(*sample.cpu, *sample.cpu);
      });
    }
  }
  return 0;
}
