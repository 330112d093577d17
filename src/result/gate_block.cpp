#include "result/gate_block.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "core/json_reader.hpp"
#include "core/json_text.hpp"
#include "core/text.hpp"
#include "stats/operation_distribution.hpp"

namespace pathbench {

namespace {

using ojson = nlohmann::ordered_json;

std::string text_of(const ojson& v) {
  return v.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

bool is_percent(const ojson& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0 &&
         v.get<double>() <= kMaxGatePercent;
}

bool is_gate_statistic(std::string_view name) {
  return name == kMedianStatistic || distribution_statistic_index(name).has_value();
}

}  // namespace

std::string gate_statistic_names() {
  return concat(kMedianStatistic, ", ", distribution_statistic_names());
}

void check_gate_block(const ojson& gate, const std::string& file, const std::string& pointer) {
  if (!gate.is_object()) {
    throw InputError(file, pointer, "expected an object, found " + json_kind(gate));
  }
  const auto percent = [&](const ojson& v, const std::string& at) {
    if (!is_percent(v)) {
      throw InputError(file, at, "expected a percentage in (0, 1000], found " + text_of(v));
    }
  };
  const auto boolean = [&](const ojson& v, const std::string& at) {
    if (!v.is_boolean()) throw InputError(file, at, "expected true or false, found " + text_of(v));
  };
  // One metric's entry: a percentage, or {"statistic": ..., "threshold_pct": ..., "fixed": ...}.
  const auto entry = [&](const ojson& v, const std::string& at) {
    if (v.is_number()) {
      percent(v, at);
      return;
    }
    if (!v.is_object()) {
      throw InputError(file, at,
                       "expected a percentage in (0, 1000] or an object {\"statistic\": ..., "
                       "\"threshold_pct\": ...}, found " +
                           text_of(v));
    }
    if (v.empty()) {
      throw InputError(file, at,
                       "an empty object: give statistic (one of " + gate_statistic_names() +
                           "), threshold_pct, or both");
    }
    for (const auto& [key, value] : v.items()) {
      const std::string field_at = at + "/" + pointer_token(key);
      if (key == "threshold_pct") {
        percent(value, field_at);
      } else if (key == "statistic") {
        if (!value.is_string() || !is_gate_statistic(value.get<std::string>())) {
          throw InputError(
              file, field_at,
              "expected one of " + gate_statistic_names() + ", found " + text_of(value));
        }
      } else if (key == "fixed") {
        boolean(value, field_at);
      } else {
        throw InputError(file, field_at,
                         "unknown field (known fields: statistic, threshold_pct, fixed)");
      }
    }
  };
  for (const auto& [key, value] : gate.items()) {
    const std::string at = pointer + "/" + pointer_token(key);
    if (key == "threshold_pct") {
      percent(value, at);
    } else if (key == "fixed") {
      boolean(value, at);
    } else if (key == "metrics") {
      if (!value.is_object() || value.empty()) {
        throw InputError(
            file, at,
            "expected a non-empty object of metric name: percent or {\"statistic\", "
            "\"threshold_pct\"}, found " +
                (value.is_object() ? std::string("an empty object") : json_kind(value)));
      }
      for (const auto& [metric, e] : value.items()) entry(e, at + "/" + pointer_token(metric));
    } else {
      throw InputError(file, at, "unknown field (known fields: threshold_pct, fixed, metrics)");
    }
  }
}

MetricGate metric_gate(const ojson& gate, const std::string& metric) {
  MetricGate g;
  if (!gate.is_object()) return g;
  if (const auto t = gate.find("threshold_pct"); t != gate.end() && t->is_number()) {
    g.threshold_pct = t->get<double>();
  }
  if (const auto f = gate.find("fixed"); f != gate.end() && f->is_boolean()) {
    g.fixed = f->get<bool>();
  }
  const auto metrics = gate.find("metrics");
  if (metrics == gate.end() || !metrics->is_object()) return g;
  const auto e = metrics->find(metric);
  if (e == metrics->end()) return g;
  g.named = true;
  if (e->is_number()) {
    g.threshold_pct = e->get<double>();
  } else if (e->is_object()) {
    if (const auto t = e->find("threshold_pct"); t != e->end() && t->is_number()) {
      g.threshold_pct = t->get<double>();
    }
    if (const auto s = e->find("statistic"); s != e->end() && s->is_string()) {
      g.statistic = s->get<std::string>();
    }
    if (const auto f = e->find("fixed"); f != e->end() && f->is_boolean()) {
      g.fixed = f->get<bool>();
    }
  }
  return g;
}

}  // namespace pathbench
