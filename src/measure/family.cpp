#include "measure/family.hpp"

#include <stdexcept>

namespace pathbench {

void FamilyRegistry::add(std::unique_ptr<Family> family) {
  std::string name(family->name());
  if (!families_.emplace(name, std::move(family)).second) {
    throw std::logic_error("family \"" + name + "\" registered twice");
  }
}

const Family* FamilyRegistry::find(std::string_view name) const {
  const auto it = families_.find(name);
  return it == families_.end() ? nullptr : it->second.get();
}

std::vector<std::string> FamilyRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, family] : families_) out.push_back(name);
  return out;
}

}  // namespace pathbench
