// The services behind GPU-pair cases, without a GPU: the GPU pair axis (schema, decoding,
// validation, the derived `link`), the named_gpus and peer_access requirements, and the
// peer_link check of the driver's answer against the inventory.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "inventory/requirements.hpp"
#include "measure/link_check.hpp"
#include "scenario/typed_axis.hpp"
#include "test_machines.hpp"

namespace pathbench::test_gpu_pair_services {
namespace {

using pathbench::testing::make_link;

CaseSpec with_pair(const std::string& pair) {
  CaseSpec spec;
  spec.params = {{"pair", pair}, {"bytes", 4}};
  return spec;
}

TEST(GpuPairAxis, SchemaDecodingAndValidation) {
  const GpuPairAxis axis("pair", "source and destination");
  const AxisSchema schema = axis.schema();
  EXPECT_EQ(schema.name, "pair");
  EXPECT_EQ(schema.kind, AxisSchema::Kind::kString);
  EXPECT_TRUE(schema.allowed.empty());
  EXPECT_EQ(schema.help.rfind("source and destination, \"S-D\" (S != D); {\"gpu_pairs\"", 0), 0u)
      << schema.help;
  EXPECT_EQ(axis.decode(with_pair("3-1")), std::make_pair(3, 1));
  EXPECT_FALSE(axis.decode(with_pair("none")));
  EXPECT_FALSE(axis.invalid(with_pair("0-1")));
  EXPECT_FALSE(axis.invalid(with_pair("none")));
  for (const char* bad : {"0-0", "1", "x-y", "0 - 1", ""}) {
    const auto why = axis.invalid(with_pair(bad));
    ASSERT_TRUE(why) << bad;
    EXPECT_EQ(why->rfind("pair \"" + std::string(bad) + "\" is not \"S-D\"", 0), 0u) << *why;
  }
}

TEST(GpuPairAxis, DerivesTheLinkRightAfterThePair) {
  Machine m = testing::h200_machine(2);
  m.links = {make_link(0, 1, LinkType::kNvlink, 18, true)};
  const GpuPairAxis axis("pair", "");
  CaseSpec spec = with_pair("0-1");
  spec.params["link"] = "stale";  // derived before: replaced, never twice
  axis.derive_link(spec, m);
  std::vector<std::string> keys;
  for (const auto& [k, v] : spec.params.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"pair", "link", "bytes"}));
  EXPECT_EQ(spec.str("link"), "nvlink18");
  EXPECT_EQ(axis.link(with_pair("1-0"), m), "unknown");  // no 1->0 link in the inventory
  EXPECT_EQ(axis.link(with_pair("none"), m), "none");
  CaseSpec other;
  other.params = {{"bytes", 4}};
  axis.derive_link(other, m);  // no pair axis: nothing to derive
  EXPECT_EQ(other.params.size(), 1u);
}

TEST(GpuPairAxis, RequirementsOfThePairItself) {
  const GpuPairAxis axis("pair", "");
  EXPECT_TRUE(axis.present(with_pair("0-1")));
  CaseSpec without;
  without.params = {{"bytes", 4}};
  EXPECT_FALSE(axis.present(without));

  Machine two = testing::h200_machine(2);
  EXPECT_EQ(axis.requirements(with_pair("1-0")).unmet(two, 5), std::nullopt);  // not --device
  EXPECT_EQ(axis.requirements(with_pair("0-2"))
                .unmet(two, 0)
                .value_or("")
                .rfind("pair 0-2: GPU 2 does not exist; this machine has 2", 0),
            0u);
  EXPECT_EQ(axis.requirements(with_pair("none")).unmet(two, 0),
            "pair=none names no GPU pair, but 2 GPUs are selected; use {\"gpu_pairs\": \"all\"} "
            "or \"S-D\"");
  // Fewer than two GPUs: the two-GPU reason comes first, for "none" and a pair alike.
  const Machine one = testing::h200_machine(1);
  for (const char* pair : {"none", "0-1"}) {
    EXPECT_EQ(axis.requirements(with_pair(pair)).unmet(one, 0),
              "needs two GPUs; this machine has 1 (GPU 0: NVIDIA H200)")
        << pair;
  }
  // The axis's own name starts its reasons.
  const GpuPairAxis named("gpus", "");
  CaseSpec spec;
  spec.params = {{"gpus", "0-3"}};
  EXPECT_EQ(named.requirements(spec).unmet(two, 0).value_or("").rfind("gpus 0-3: GPU 3", 0), 0u);
}

TEST(Requirements, NamedGpusExistAndAreSelected) {
  Machine m = testing::h200_machine(4);
  m.selected_gpus = {0, 2};
  EXPECT_FALSE(Requirements().named_gpus({2, 0}, "pair 2-0").unmet(m, 0));
  EXPECT_EQ(Requirements().named_gpus({0, 1}, "pair 0-1").unmet(m, 0),
            "pair 0-1: GPU 1 is not selected (--devices selects GPU 0, 2)");
  const auto absent = Requirements().named_gpus({0, 7}, "pair 0-7").unmet(m, 0);
  ASSERT_TRUE(absent);
  EXPECT_EQ(absent->rfind("pair 0-7: GPU 7 does not exist; this machine has 4 (GPU 0: ", 0), 0u)
      << *absent;
}

TEST(Requirements, PeerAccessFromTheInventoryLinkMap) {
  Machine m = testing::h200_machine(2);
  m.links = {make_link(0, 1, LinkType::kSys, 0, false), make_link(1, 0, LinkType::kPix, 0, true)};
  EXPECT_FALSE(Requirements().peer_access(1, 0, "x").unmet(m, 0));
  const auto why = Requirements().peer_access(0, 1, "method=sm_read needs it").unmet(m, 0);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("GPU 0 cannot access GPU 1's memory (cudaDeviceCanAccessPeer = 0; link "
                       "sys, host-staged): method=sm_read needs it",
                       0),
            0u)
      << *why;
  EXPECT_NE(why->find("nvidia-smi topo -p2p r"), std::string::npos) << *why;
  // Unknown to the inventory (no link, or no driver answer recorded): the bench asks the driver.
  m.links = {make_link(0, 1, LinkType::kPix, 0, std::nullopt)};
  EXPECT_FALSE(Requirements().peer_access(0, 1, "x").unmet(m, 0));
  m.links.clear();
  EXPECT_FALSE(Requirements().peer_access(0, 1, "x").unmet(m, 0));
  // The driver's own refusal reads the same, without a link when the inventory has none.
  EXPECT_EQ(no_peer_access_reason(1, 0, nullptr, "y")
                .rfind("GPU 1 cannot access GPU 0's memory (cudaDeviceCanAccessPeer = 0): y", 0),
            0u);
}

TEST(PeerLinkCheck, DriverAnswerAgainstTheInventory) {
  Machine m = testing::h200_machine(2);
  m.links = {make_link(0, 1, LinkType::kNvlink, 18, true)};
  const Check agrees = peer_link_check(m, 0, 1, true, true);
  EXPECT_EQ(agrees.name, "peer_link");
  EXPECT_TRUE(agrees.passed);
  EXPECT_EQ(agrees.value, "nvlink18");
  EXPECT_EQ(
      agrees.detail,
      "cudaDeviceCanAccessPeer: 0->1 yes, 1->0 yes; inventory link nvlink x18 (nvlink18), which "
      "agrees");
  const Check differs = peer_link_check(m, 0, 1, false, true);
  EXPECT_FALSE(differs.passed);
  EXPECT_NE(differs.detail.find("which recorded peer access yes"), std::string::npos);
  // No link in the inventory: nothing to contradict.
  const Check unknown = peer_link_check(m, 1, 0, false, false);
  EXPECT_TRUE(unknown.passed);
  EXPECT_EQ(unknown.value, "unknown");
  EXPECT_NE(unknown.detail.find("1->0 no, 0->1 no; the inventory has no link"), std::string::npos)
      << unknown.detail;
  // A link without a recorded driver answer cannot disagree.
  m.links = {make_link(0, 1, LinkType::kPxb, 0, std::nullopt)};
  EXPECT_TRUE(peer_link_check(m, 0, 1, false, false).passed);
}

}  // namespace
}  // namespace pathbench::test_gpu_pair_services
