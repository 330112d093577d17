#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "compare/mann_whitney.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_mann_whitney {
namespace {

// tests/fixtures/mann_whitney/reference.json is written by generate.py with SciPy; the C++
// result must match it without Python present.
nlohmann::json load_reference() {
  const std::string path = std::string(PATHBENCH_FIXTURES) + "/mann_whitney/reference.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

TEST(MannWhitney, ReferenceFileIsComplete) {
  const auto ref = load_reference();
  EXPECT_EQ(ref.at("schema"), "pathbench.mann_whitney_reference/v1");
  EXPECT_FALSE(ref.at("scipy_version").get<std::string>().empty());
  EXPECT_GE(ref.at("cases").size(), 15u);
}

TEST(MannWhitney, MatchesScipyReference) {
  const auto ref = load_reference();
  int exact_cases = 0, asymptotic_cases = 0;
  for (const auto& c : ref.at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const auto x = c.at("x").get<std::vector<double>>();
    const auto y = c.at("y").get<std::vector<double>>();
    const MannWhitneyResult r = mann_whitney_u(x, y);
    EXPECT_EQ(r.u1, c.at("statistic").get<double>());
    EXPECT_NEAR(r.p_value, c.at("pvalue").get<double>(), 1e-6);
    const bool want_exact = c.at("method") == "exact";
    EXPECT_EQ(r.exact, want_exact);
    EXPECT_EQ(r.n1, x.size());
    EXPECT_EQ(r.n2, y.size());
    (want_exact ? exact_cases : asymptotic_cases)++;
  }
  // Both code paths must be exercised by the fixture.
  EXPECT_GT(exact_cases, 5);
  EXPECT_GT(asymptotic_cases, 5);
}

TEST(MannWhitney, SymmetricInArgumentOrder) {
  const auto ref = load_reference();
  for (const auto& c : ref.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto x = c.at("x").get<std::vector<double>>();
    const auto y = c.at("y").get<std::vector<double>>();
    const auto xy = mann_whitney_u(x, y);
    const auto yx = mann_whitney_u(y, x);
    EXPECT_EQ(xy.p_value, yx.p_value);
    EXPECT_EQ(xy.exact, yx.exact);
    // U1 of y is U2 of x.
    EXPECT_EQ(yx.u1, static_cast<double>(x.size() * y.size()) - xy.u1);
  }
}

TEST(MannWhitney, KnownExactValues) {
  // Completely separated 8 vs 8: only 2 of C(16, 8) = 12870 arrangements are that extreme.
  std::vector<double> hi, lo;
  for (int i = 1; i <= 8; ++i) {
    lo.push_back(i);
    hi.push_back(i + 8);
  }
  const auto r = mann_whitney_u(hi, lo);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u1, 64);
  EXPECT_NEAR(r.p_value, 2.0 / 12870.0, 1e-15);
}

TEST(MannWhitney, ZeroVarianceGivesOne) {
  // SciPy: s = 0, z = -inf, p = 2 clipped to 1 (not NaN).
  const std::vector<double> same(7, 3.25);
  const auto r = mann_whitney_u(same, same);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.p_value, 1.0);
}

TEST(MannWhitney, LargeExactStaysAccurate) {
  // 8 vs 2000 without ties is still exact for SciPy (counts pass 2^64, where SciPy switches to
  // floats); values computed with SciPy 1.17.1.
  std::vector<double> y;
  for (int i = 0; i < 2000; ++i) y.push_back(i);
  std::vector<double> middle, high;
  for (int i = 0; i < 8; ++i) {
    middle.push_back(900.5 + 25 * i);
    high.push_back(1500.5 + 25 * i);
  }
  const auto m = mann_whitney_u(middle, y);
  EXPECT_TRUE(m.exact);
  EXPECT_EQ(m.u1, 7908);
  EXPECT_NEAR(m.p_value, 0.9562575950848161, 1e-9);
  const auto h = mann_whitney_u(high, y);
  EXPECT_TRUE(h.exact);
  EXPECT_EQ(h.u1, 12708);
  EXPECT_NEAR(h.p_value, 0.002732437496348809, 1e-9);
}

TEST(MannWhitney, EmptyInputThrows) {
  const std::vector<double> some{1.0, 2.0};
  const std::vector<double> none;
  EXPECT_THROW(mann_whitney_u(none, some), std::invalid_argument);
  EXPECT_THROW(mann_whitney_u(some, none), std::invalid_argument);
  EXPECT_THROW(mann_whitney_u(none, none), std::invalid_argument);
}

TEST(MannWhitney, NanInputThrows) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> good{1.0, 2.0, 3.0};
  const std::vector<double> bad{1.0, nan};
  EXPECT_THROW(mann_whitney_u(bad, good), std::invalid_argument);
  EXPECT_THROW(mann_whitney_u(good, bad), std::invalid_argument);
}

TEST(MannWhitney, InfinityIsAnOrdinaryValue) {
  // SciPy rejects only NaN; an infinity just ranks last.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x{inf, 5.0, 6.0};
  const std::vector<double> y{1.0, 2.0, 3.0};
  const auto r = mann_whitney_u(x, y);
  EXPECT_EQ(r.u1, 9);
  EXPECT_NEAR(r.p_value, 0.1, 1e-15);  // same as tiny_3v3_separated
}

}  // namespace
}  // namespace pathbench::test_mann_whitney
