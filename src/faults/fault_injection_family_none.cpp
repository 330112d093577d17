#include "faults/fault_injection_family.hpp"

namespace pathbench {

std::unique_ptr<Family> make_fault_injection_family() { return nullptr; }

}  // namespace pathbench
