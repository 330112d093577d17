#pragma once

#include "measure/family.hpp"

namespace pathbench {

// Every built-in family (bench/).
FamilyRegistry builtin_families();

// Lets go of what the families keep from one case to the next (the storage family's test file,
// removed now unless a case still holds it): when a run ends, and before its process is replaced.
void release_kept_between_cases();

}  // namespace pathbench
