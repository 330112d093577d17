#pragma once

#include "measure/family.hpp"

namespace pathbench {

// Every built-in family (bench/).
FamilyRegistry builtin_families();

}  // namespace pathbench
