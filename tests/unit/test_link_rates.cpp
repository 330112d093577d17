#include <gtest/gtest.h>

#include "inventory/link_rates.hpp"
#include "inventory/nvlink.hpp"

namespace pathbench::test_link_rates {
namespace {

TEST(LinkRates, PcieTableOfEveryGeneration) {
  // GT/s x lanes x encoding / 8, GB = 1e9 bytes.
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(1, 1), 0.25);
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(2, 16), 8.0);
  EXPECT_NEAR(*pcie_raw_gb_per_s(3, 16), 15.75, 0.005);  // 15.754
  EXPECT_NEAR(*pcie_raw_gb_per_s(4, 16), 31.51, 0.005);
  EXPECT_NEAR(*pcie_raw_gb_per_s(5, 16), 63.0, 0.02);  // 63.015: DESIGN.md's H200 figure
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(5, 16), 32.0 * 16 * 128.0 / 130.0 / 8.0);
  // FLIT mode: 242 of every 256 flit bytes are TLP and DLLP.
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(6, 16), 64.0 * 16 * 242.0 / 256.0 / 8.0);
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(6, 16), 121.0);
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(7, 16), 242.0);
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(5, 8) * 2, *pcie_raw_gb_per_s(5, 16));
}

TEST(LinkRates, EncodingsByName) {
  EXPECT_EQ(pcie_generation(2)->encoding_name, "8b/10b");
  EXPECT_EQ(pcie_generation(3)->encoding_name, "128b/130b");
  EXPECT_EQ(pcie_generation(5)->encoding_name, "128b/130b");
  EXPECT_EQ(pcie_generation(6)->encoding_name, "flit 242/256");
  EXPECT_EQ(pcie_generation(7)->encoding_name, "flit 242/256");
  EXPECT_DOUBLE_EQ(pcie_generation(7)->gt_per_s, 128.0);
  EXPECT_EQ(pcie_generation(4)->generation, 4);
}

TEST(LinkRates, UnknownGenerationOrWidthIsEmpty) {
  EXPECT_FALSE(pcie_generation(0).has_value());
  EXPECT_FALSE(pcie_generation(8).has_value());
  EXPECT_FALSE(pcie_raw_gb_per_s(8, 16).has_value());
  EXPECT_FALSE(pcie_raw_gb_per_s(-3, 16).has_value());
  EXPECT_FALSE(pcie_raw_gb_per_s(5, 0).has_value());
  EXPECT_FALSE(pcie_raw_gb_per_s(5, -16).has_value());
  EXPECT_FALSE(pcie_raw_gb_per_s(5, 33).has_value());  // no PCIe link is wider than x32
  EXPECT_TRUE(pcie_raw_gb_per_s(5, 32).has_value());
}

TEST(LinkRates, NvlinkVersionFromNvmlEnum) {
  // nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0.
  EXPECT_EQ(nvlink_version_major(1), 1);
  EXPECT_EQ(nvlink_version_major(3), 2);
  EXPECT_EQ(nvlink_version_major(5), 3);  // what an A100 reports
  EXPECT_EQ(nvlink_version_major(6), 4);  // H100 / H200
  EXPECT_EQ(nvlink_version_major(7), 5);
  EXPECT_FALSE(nvlink_version_major(0).has_value());
  EXPECT_FALSE(nvlink_version_major(8).has_value());
}

TEST(LinkRates, NvlinkRateFromNvmlVersionWhenCudaIsSilent) {
  // No compute capability (CUDA does not see the GPU), NVML says NVLink4: the coding is known.
  const auto rate = nvlink_link_rate(26.5625, "", 4);
  ASSERT_TRUE(rate.has_value());
  EXPECT_NEAR(rate->gb_per_s, 25.0, 1e-9);
  EXPECT_NE(rate->source.find("NVLink4 per NVML"), std::string::npos) << rate->source;
  // The compute capability wins when both are known; an unknown version changes nothing.
  EXPECT_NEAR(nvlink_link_rate(53.125, "10.0", 4)->gb_per_s, 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(nvlink_link_rate(26.562, "", 9)->gb_per_s, 26.562);
  EXPECT_EQ(nvlink_generation_of_version(3)->data_gb_per_s, 25.0);
  EXPECT_FALSE(nvlink_generation_of_version(1).has_value());
}

}  // namespace
}  // namespace pathbench::test_link_rates
