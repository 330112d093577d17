#include "result/gate_block.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "core/json_text.hpp"

namespace pathbench {

namespace {

std::string type_of(const nlohmann::ordered_json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number_float()) return "number";
  return v.type_name();
}

}  // namespace

void check_gate_block(const nlohmann::ordered_json& gate, const std::string& file,
                      const std::string& pointer) {
  if (!gate.is_object()) {
    throw InputError(file, pointer, "expected an object, found " + type_of(gate));
  }
  const auto percent = [&](const nlohmann::ordered_json& v, const std::string& at) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0) ||
        v.get<double>() > kMaxGatePercent) {
      throw InputError(file, at,
                       "expected a percentage in (0, 1000], found " +
                           v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    }
  };
  for (const auto& [key, value] : gate.items()) {
    const std::string at = pointer + "/" + pointer_token(key);
    if (key == "threshold_pct") {
      percent(value, at);
    } else if (key == "metrics") {
      if (!value.is_object() || value.empty()) {
        throw InputError(file, at,
                         "expected a non-empty object of metric name: percent, found " +
                             (value.is_object() ? std::string("an empty object") : type_of(value)));
      }
      for (const auto& [metric, pct] : value.items()) percent(pct, at + "/" + pointer_token(metric));
    } else {
      throw InputError(file, at, "unknown field (known fields: threshold_pct, metrics)");
    }
  }
}

}  // namespace pathbench
