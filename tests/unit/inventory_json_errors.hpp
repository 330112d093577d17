#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "inventory/inventory.hpp"

namespace pathbench::testing {

// inventory_from_json must refuse `bad`, naming the JSON pointer of the wrong field.
inline void expect_inventory_json_error(const nlohmann::json& bad, const std::string& pointer) {
  try {
    inventory_from_json(bad);
    ADD_FAILURE() << "accepted bad " << pointer;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(pointer), std::string::npos) << e.what();
  }
}

}  // namespace pathbench::testing
