#include "stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace pathbench {

double percentile(std::span<const double> sorted_samples, double q) {
  if (sorted_samples.empty()) throw std::invalid_argument("percentile of no samples");
  if (!(q >= 0.0 && q <= 1.0)) {
    throw std::invalid_argument("percentile: q must be in [0, 1], got " + std::to_string(q));
  }
  const std::size_t n = sorted_samples.size();
  const double virtual_index = static_cast<double>(n - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(virtual_index));
  if (lo + 1 >= n) return sorted_samples[n - 1];
  const double a = sorted_samples[lo];
  const double b = sorted_samples[lo + 1];
  const double t = virtual_index - static_cast<double>(lo);
  // NumPy's _lerp: interpolating from the nearer end keeps the result monotonic in q and matches
  // numpy.percentile bit for bit, so reports computed in Python agree with the tool.
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  if (samples.empty()) return s;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!std::isfinite(samples[i])) {
      // A NaN would poison every statistic and cannot be written to JSON; it means the
      // measurement itself is broken, so refuse instead of reporting a plausible-looking number.
      throw std::invalid_argument("summarize: sample " + std::to_string(i) +
                                  " is not a finite number (" + std::to_string(samples[i]) + ")");
    }
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();

  s.n = n;
  s.min = sorted.front();
  s.max = sorted.back();
  // Like numpy.median: the mean of the two middle values for an even count.
  s.median = n % 2 == 1 ? sorted[n / 2] : std::midpoint(sorted[n / 2 - 1], sorted[n / 2]);
  s.p10 = percentile(sorted, 0.10);
  s.p90 = percentile(sorted, 0.90);

  // Two passes: the deviations from the mean are small next to the values themselves, and
  // summing their squares directly avoids the cancellation of sum(x^2) - n*mean^2.
  const double sum = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  s.mean = sum / static_cast<double>(n);
  if (n >= 2) {
    double squares = 0.0;
    for (double x : sorted) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  s.cv = s.mean == 0.0 ? 0.0 : s.stddev / s.mean;
  return s;
}

void to_json(nlohmann::ordered_json& j, const Summary& s) {
  j = nlohmann::ordered_json::object();
  j["n"] = s.n;
  j["median"] = s.median;
  j["min"] = s.min;
  j["max"] = s.max;
  j["mean"] = s.mean;
  j["p10"] = s.p10;
  j["p90"] = s.p90;
  j["stddev"] = s.stddev;
  j["cv"] = s.cv;
}

void from_json(const nlohmann::json& j, Summary& s) {
  Summary out;
  out.n = j.at("n").get<std::size_t>();
  out.median = j.at("median").get<double>();
  out.min = j.at("min").get<double>();
  out.max = j.at("max").get<double>();
  out.mean = j.at("mean").get<double>();
  out.p10 = j.at("p10").get<double>();
  out.p90 = j.at("p90").get<double>();
  out.stddev = j.at("stddev").get<double>();
  out.cv = j.at("cv").get<double>();
  s = out;
}

}  // namespace pathbench
