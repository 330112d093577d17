#include "result/run_context.hpp"

#include "result/run_context_fields.hpp"

// RunContext::to_json: the modelled fields written over the context as it was read.

namespace pathbench {
namespace {

using ojson = nlohmann::ordered_json;

// Writes a modelled field over `j`; one equal to what is there keeps its exact JSON.
template <typename T>
void put(ojson& j, const char* key, const Recorded<T>& f) {
  if (!f.present) {
    j.erase(key);
    return;
  }
  ojson v = f.value ? ojson(*f.value) : ojson(nullptr);
  if (const auto it = j.find(key); it != j.end() && *it == v) return;
  j[key] = std::move(v);
}

ojson base_of(const ojson& raw) { return raw.is_object() ? raw : ojson::object(); }

// Writes every field of a part's table over `j`.
auto writer(ojson& j) {
  return [&j](const char* key, const auto& field, context_fields::Null) { put(j, key, field); };
}

ojson gpu_to_json(const GpuContext& g) {
  ojson j = base_of(g.raw);
  context_fields::gpu(g, writer(j));
  if (g.nvlink) {
    const auto it = j.find("nvlink");
    ojson n = it != j.end() && it->is_object() ? *it : ojson::object();
    context_fields::nvlink(*g.nvlink, writer(n));
    j["nvlink"] = std::move(n);
  } else if (const auto it = j.find("nvlink"); it != j.end() && !it->is_null()) {
    *it = nullptr;
  }
  return j;
}

ojson link_to_json(const LinkContext& l) {
  ojson j = base_of(l.raw);
  context_fields::link(l, writer(j));
  return j;
}

}  // namespace

ojson RunContext::to_json() const {
  ojson j = base_of(raw);
  context_fields::head(*this, writer(j));
  if (iommu) {
    ojson i = base_of(iommu->raw);
    context_fields::iommu(*iommu, writer(i));
    j["iommu"] = std::move(i);
  } else if (const auto it = j.find("iommu"); it != j.end() && !it->is_null()) {
    *it = nullptr;
  }
  if (j.contains("gpus") || !gpus.empty()) {
    ojson array = ojson::array();
    for (const auto& g : gpus) array.push_back(gpu_to_json(g));
    j["gpus"] = std::move(array);
  }
  if (j.contains("links") || !links.empty()) {
    ojson array = ojson::array();
    for (const auto& l : links) array.push_back(link_to_json(l));
    j["links"] = std::move(array);
  }
  context_fields::tail(*this, writer(j));
  if (environment) {
    if (const auto it = j.find("environment"); it == j.end() || *it != *environment) {
      j["environment"] = *environment;
    }
  } else {
    j.erase("environment");
  }
  return j;
}

const GpuContext* RunContext::gpu(int position) const {
  if (position < 0 || static_cast<std::size_t>(position) >= gpus.size()) return nullptr;
  return &gpus[static_cast<std::size_t>(position)];
}

}  // namespace pathbench
