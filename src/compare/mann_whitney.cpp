#include "compare/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <vector>

// Mirrors scipy/stats/_mannwhitneyu.py (read in SciPy 1.17.1 and 1.10.1; both agree on every
// point below):
//  - ranks are average ranks over the concatenation x ++ y; U1 = R1 - n1(n1+1)/2;
//  - the two-sided test uses U = max(U1, U2) and doubles the survival function at U;
//  - method 'auto' (_mwu_choose_method): asymptotic when n1 > 8 and n2 > 8, else asymptotic when
//    the pooled sample has any tie, else exact. So "exact" means min(n1, n2) <= 8 and no ties;
//  - exact: sf(U) = P(U' >= U) = cdf(n1 n2 - U) by symmetry, from the exact null distribution;
//  - asymptotic: z = (U - n1 n2 / 2 - 0.5) / s with the tie-corrected s, p = 2 ndtr(-z);
//  - finally p is clipped to [0, 1] (2 sf exceeds 1 when U sits at the centre).

namespace pathbench {
namespace {

struct Ranking {
  double rank_sum_x = 0;  // R1: sum of the average ranks of x's values in the pooled sample
  double tie_term = 0;    // sum over tie groups of t^3 - t
  bool any_ties = false;
};

Ranking rank_pooled(std::span<const double> x, std::span<const double> y) {
  const std::size_t n = x.size() + y.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto value = [&](std::size_t i) { return i < x.size() ? x[i] : y[i - x.size()]; };
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return value(a) < value(b); });

  // Twice the rank sum stays an integer (an average rank is a half-integer at worst), so R1 is
  // exact however the tie groups fall; SciPy sums float ranks, which agrees for any size
  // where the sum is representable.
  std::uint64_t twice_rank_sum_x = 0;
  Ranking r;
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin + 1;
    while (end < n && value(order[end]) == value(order[begin])) ++end;
    // Positions begin..end-1 hold 1-based ranks begin+1..end; their average times two:
    const std::uint64_t twice_avg_rank = static_cast<std::uint64_t>(begin + 1 + end);
    for (std::size_t k = begin; k < end; ++k) {
      if (order[k] < x.size()) twice_rank_sum_x += twice_avg_rank;
    }
    const auto t = static_cast<double>(end - begin);
    if (end - begin > 1) {
      r.any_ties = true;
      r.tie_term += t * t * t - t;
    }
    begin = end;
  }
  r.rank_sum_x = static_cast<double>(twice_rank_sum_x) / 2.0;
  return r;
}

// P(U <= k) under the null hypothesis for sample sizes m and n (no ties). The number of
// arrangements with U = u is the coefficient of q^u in the Gaussian binomial
// [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i); the power series is truncated at
// q^k, which keeps the work at O(min(m,n) * k). SciPy counts the same arrangements with a
// different recurrence (Loeffler's); the counts are identical, so only rounding differs.
double exact_cdf(std::size_t m, std::size_t n, std::size_t k) {
  if (m > n) std::swap(m, n);  // fewer factors
  // long double: counts reach C(m+n, m); the extra mantissa bits keep the subtraction below
  // from costing precision in the tail.
  std::vector<long double> c(k + 1, 0.0L);
  c[0] = 1.0L;
  for (std::size_t i = 1; i <= m; ++i) {
    // Multiply by (1 - q^(n+i)): descending, so each term reads the unmodified lower one.
    const std::size_t up = n + i;
    for (std::size_t u = k + 1; u-- > up;) c[u] -= c[u - up];
    // Divide by (1 - q^i), i.e. multiply by 1 + q^i + q^2i + ...: ascending running sums.
    for (std::size_t u = i; u <= k; ++u) c[u] += c[u - i];
  }
  long double below = 0.0L;
  for (long double v : c) below += v;
  // C(m+n, m) as a product of ratios, each step exact enough for long double.
  long double total = 1.0L;
  for (std::size_t i = 1; i <= m; ++i) {
    total = total * static_cast<long double>(n + i) / static_cast<long double>(i);
  }
  return static_cast<double>(below / total);
}

// Standard normal survival function, computed as SciPy's special.ndtr(-z) is (Cephes ndtr):
// erf near zero, erfc in the tails, so neither loses relative precision.
double normal_sf(double z) {
  constexpr double kSqrtHalf = std::numbers::sqrt2 / 2;  // == M_SQRT1_2, scaling by 2 is exact
  const double a = -z;
  const double x = a * kSqrtHalf;
  const double ax = std::fabs(x);
  double y;
  if (ax < kSqrtHalf) {
    y = 0.5 + 0.5 * std::erf(x);
  } else {
    y = 0.5 * std::erfc(ax);
    if (x > 0) y = 1.0 - y;
  }
  return y;
}

}  // namespace

MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty()) {
    throw std::invalid_argument("mann_whitney_u: both samples must be non-empty");
  }
  auto has_nan = [](std::span<const double> s) {
    return std::any_of(s.begin(), s.end(), [](double v) { return std::isnan(v); });
  };
  if (has_nan(x) || has_nan(y)) {
    throw std::invalid_argument("mann_whitney_u: samples must not contain NaN");
  }

  MannWhitneyResult result;
  result.n1 = x.size();
  result.n2 = y.size();
  const auto n1 = static_cast<double>(result.n1);
  const auto n2 = static_cast<double>(result.n2);

  const Ranking ranking = rank_pooled(x, y);
  result.u1 = ranking.rank_sum_x - n1 * (n1 + 1) / 2;
  const double u2 = n1 * n2 - result.u1;
  const double u = std::max(result.u1, u2);

  result.exact = !(result.n1 > 8 && result.n2 > 8) && !ranking.any_ties;

  double p;
  if (result.exact) {
    // Without ties U is an integer; sf(U) includes the mass at U, hence cdf(n1 n2 - U).
    const auto u_int = static_cast<std::size_t>(u);
    const std::size_t k = result.n1 * result.n2 - u_int;
    p = 2.0 * exact_cdf(result.n1, result.n2, k);
  } else {
    const double mu = n1 * n2 / 2;
    const double n = n1 + n2;
    const double s = std::sqrt(n1 * n2 / 12 * ((n + 1) - ranking.tie_term / (n * (n - 1))));
    // U >= mu always (U is the larger of U1, U2), so subtracting 0.5 moves it towards the mean.
    const double numerator = u - mu - 0.5;
    if (!(s > 0)) {
      // Every value is identical: s == 0 and U == mu. SciPy evaluates -0.5 / 0 = -inf, ndtr(inf)
      // = 1 and clips 2 to 1, so p = 1 (not NaN). Spelled out here to avoid dividing by zero.
      p = 1.0;
    } else {
      p = 2.0 * normal_sf(numerator / s);
    }
  }
  result.p_value = std::clamp(p, 0.0, 1.0);
  return result;
}

}  // namespace pathbench
