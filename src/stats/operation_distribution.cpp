#include "stats/operation_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/json_text.hpp"
#include "core/text.hpp"
#include "stats/summary.hpp"

namespace pathbench {

std::optional<std::size_t> distribution_statistic_index(std::string_view name) {
  for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
    if (kDistributionStatistics[k].name == name) return k;
  }
  return std::nullopt;
}

std::string distribution_statistic_names() {
  std::string out;
  for (const auto& s : kDistributionStatistics) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

namespace {

std::size_t index_or_throw(std::string_view name) {
  const auto k = distribution_statistic_index(name);
  if (!k) {
    throw std::invalid_argument(concat("unknown distribution statistic \"", name, "\" (one of ",
                                       distribution_statistic_names(), ")"));
  }
  return *k;
}

}  // namespace

double OperationDistribution::statistic(std::string_view name) const {
  return overall[index_or_throw(name)];
}

const std::vector<double>& OperationDistribution::repetition_values(std::string_view name) const {
  return per_repetition[index_or_throw(name)];
}

nlohmann::ordered_json to_json(const OperationDistribution& d) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["operations"] = d.operations;
  j["mean"] = d.mean;
  for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
    j[std::string(kDistributionStatistics[k].name)] = d.overall[k];
  }
  nlohmann::ordered_json per = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
    per[std::string(kDistributionStatistics[k].name)] = d.per_repetition[k];
  }
  j["per_repetition"] = std::move(per);
  j["histogram"] = d.histogram.to_json();
  return j;
}

namespace {

[[noreturn]] void fail(const std::string& where, std::string_view field, std::string_view what) {
  throw std::invalid_argument(concat(where, field, ": ", what));
}

double finite_non_negative(const nlohmann::ordered_json& v, const std::string& where,
                           const std::string& field) {
  if (!v.is_number()) fail(where, field, concat("expected a number, found ", v.dump()));
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < 0) {
    fail(where, field, concat("expected a finite number >= 0, found ", v.dump()));
  }
  return x;
}

// `field` by value: a reference parameter bound to a temporary ("") makes gcc 13's
// -Wdangling-reference take the returned reference for one into that temporary.
const nlohmann::ordered_json& member(const nlohmann::ordered_json& j, const std::string& where,
                                     std::string_view field, std::string_view key) {
  const auto it = j.find(key);
  if (it == j.end()) fail(where, field, concat("missing field \"", key, "\""));
  return *it;
}

}  // namespace

OperationDistribution distribution_from_json(const nlohmann::ordered_json& j,
                                             const std::string& where) {
  if (!j.is_object()) fail(where, "", concat("expected an object, found ", j.dump()));
  for (const auto& [key, _] : j.items()) {
    const bool known = key == "operations" || key == "mean" || key == "per_repetition" ||
                       key == "histogram" || distribution_statistic_index(key).has_value();
    if (!known) fail(where, concat("/", pointer_token(key)), "unknown field");
  }
  OperationDistribution d;
  const auto& ops = member(j, where, "", "operations");
  const bool positive = ops.is_number_unsigned()  ? ops.get<std::uint64_t>() > 0
                        : ops.is_number_integer() ? ops.get<std::int64_t>() > 0
                                                  : false;
  if (!positive) {
    fail(where, "/operations", concat("expected an integer >= 1, found ", ops.dump()));
  }
  d.operations = ops.get<std::uint64_t>();
  d.mean = finite_non_negative(member(j, where, "", "mean"), where, "/mean");
  for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
    const std::string key(kDistributionStatistics[k].name);
    d.overall[k] = finite_non_negative(member(j, where, "", key), where, "/" + key);
    if (k > 0 && d.overall[k] < d.overall[k - 1]) {
      fail(where, "/" + key,
           concat("is below ", kDistributionStatistics[k - 1].name, ": percentiles are ordered"));
    }
  }
  const auto& per = member(j, where, "", "per_repetition");
  if (!per.is_object()) fail(where, "/per_repetition", "expected an object");
  for (const auto& [key, _] : per.items()) {
    if (!distribution_statistic_index(key)) {
      fail(where, concat("/per_repetition/", pointer_token(key)),
           concat("unknown statistic (one of ", distribution_statistic_names(), ")"));
    }
  }
  for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
    const std::string key(kDistributionStatistics[k].name);
    const std::string at = "/per_repetition/" + key;
    const auto& values = member(per, where, "/per_repetition", key);
    if (!values.is_array() || values.empty()) {
      fail(where, at, "expected a non-empty array, one value per repetition");
    }
    for (std::size_t r = 0; r < values.size(); ++r) {
      d.per_repetition[k].push_back(
          finite_non_negative(values[r], where, concat(at, "/", std::to_string(r))));
    }
    if (d.per_repetition[k].size() != d.per_repetition[0].size()) {
      fail(where, at,
           concat("has ", std::to_string(d.per_repetition[k].size()), " values but p50 has ",
                  std::to_string(d.per_repetition[0].size())));
    }
  }
  d.histogram =
      LatencyHistogram::from_json(member(j, where, "", "histogram"), where + "/histogram");
  if (d.histogram.count() != d.operations) {
    fail(where, "/operations",
         concat("is ", std::to_string(d.operations), " but the histogram counts ",
                std::to_string(d.histogram.count())));
  }
  return d;
}

double DistributionRecorder::add_repetition(std::vector<double> seconds) {
  if (seconds.empty()) throw std::invalid_argument("a repetition timed no operation");
  for (double s : seconds) {
    if (!std::isfinite(s) || s < 0) {
      throw std::invalid_argument("an operation's duration is not a finite number >= 0");
    }
  }
  for (double s : seconds) histogram_.record(s);
  std::sort(seconds.begin(), seconds.end());
  for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
    per_repetition_[k].push_back(percentile(seconds, kDistributionStatistics[k].quantile));
  }
  all_.insert(all_.end(), seconds.begin(), seconds.end());
  return per_repetition_[0].back();
}

std::optional<OperationDistribution> DistributionRecorder::finish() const {
  if (all_.empty()) return std::nullopt;
  std::vector<double> sorted = all_;
  std::sort(sorted.begin(), sorted.end());
  OperationDistribution d;
  d.operations = sorted.size();
  d.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
    d.overall[k] = percentile(sorted, kDistributionStatistics[k].quantile);
  }
  d.per_repetition = per_repetition_;
  d.histogram = histogram_;
  return d;
}

}  // namespace pathbench
