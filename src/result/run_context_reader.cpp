#include <cmath>
#include <limits>
#include <type_traits>

#include "core/errors.hpp"
#include "core/json_reader.hpp"
#include "result/run_context.hpp"
#include "result/run_context_fields.hpp"

// RunContext::from_json: reading a context and checking each field it models.

namespace pathbench {
namespace {

using ojson = nlohmann::ordered_json;

using context_fields::Null;

// Reads one context object, naming the file and the JSON pointer of whatever is wrong.
class ContextReader {
 public:
  explicit ContextReader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw InputError(file_, at, what);
  }

  const ojson& object(const ojson& v, const std::string& at) const {
    if (!v.is_object()) fail(at, "expected an object, found " + json_kind(v));
    return v;
  }

  // The array under `key`, or nullptr when the key is absent.
  const ojson* array(const ojson& obj, const std::string& at, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return nullptr;
    if (!it->is_array()) fail(at + "/" + key, "expected an array, found " + json_kind(*it));
    return &*it;
  }

  // The object under `key`, or nullptr when the key is absent or null.
  const ojson* optional_object(const ojson& obj, const std::string& at, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    if (!it->is_object()) {
      fail(at + "/" + key, "expected an object or null, found " + json_kind(*it));
    }
    return &*it;
  }

  template <typename T>
  void read(const ojson& obj, const std::string& at, const char* key, Recorded<T>& out,
            Null null = Null::kRefused) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return;
    out.present = true;
    const std::string where = at + "/" + key;
    if (it->is_null()) {
      if (null == Null::kRefused) fail(where, "expected " + expected<T>() + ", found null");
      return;
    }
    out.value = convert<T>(*it, where, null);
  }

  // read() of every field of a part's table, from `obj` at `at`.
  auto reader(const ojson& obj, std::string at) const {
    return [this, &obj, at = std::move(at)](const char* key, auto& field, Null null) {
      read(obj, at, key, field, null);
    };
  }

 private:
  template <typename T>
  static std::string expected() {
    if constexpr (std::is_same_v<T, std::string>) {
      return "a string";
    } else if constexpr (std::is_same_v<T, bool>) {
      return "true or false";
    } else if constexpr (std::is_same_v<T, double>) {
      return "a number";
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      return "an array of integers";
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      return "an array of strings";
    } else if constexpr (std::is_unsigned_v<T>) {
      return "a non-negative integer";
    } else {
      return "an integer";
    }
  }

  template <typename T>
  T convert(const ojson& v, const std::string& at, Null null) const {
    // "true or false" with null allowed reads "true, false or null".
    std::string what = "expected " + expected<T>();
    if (null == Null::kAllowed) {
      what = std::is_same_v<T, bool> ? "expected true, false or null" : what + " or null";
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) fail(at, what + ", found " + json_kind(v));
      return v.get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(at, what + ", found " + json_kind(v));
      return v.get<bool>();
    } else if constexpr (std::is_same_v<T, double>) {
      if (!v.is_number()) fail(at, what + ", found " + json_kind(v));
      const double d = v.get<double>();
      if (!std::isfinite(d)) fail(at, "expected a finite number, found " + v.dump());
      return d;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      if (!v.is_array()) fail(at, what + ", found " + json_kind(v));
      std::vector<std::string> out;
      for (std::size_t i = 0; i < v.size(); ++i) {
        out.push_back(convert<std::string>(v[i], at + "/" + std::to_string(i), Null::kRefused));
      }
      return out;
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!v.is_array()) fail(at, what + ", found " + json_kind(v));
      std::vector<int> out;
      for (std::size_t i = 0; i < v.size(); ++i) {
        out.push_back(convert<int>(v[i], at + "/" + std::to_string(i), Null::kRefused));
      }
      return out;
    } else {
      // nlohmann would turn 3.7 into 3 and -1 into 18446744073709551615 without complaint.
      if (!v.is_number_integer()) {
        fail(at, what + ", found " + (v.is_number() ? v.dump() : json_kind(v)));
      }
      bool fits = false;
      if (v.is_number_unsigned()) {
        fits = v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
      } else if (const auto s = v.get<std::int64_t>(); s >= 0) {
        fits = static_cast<std::uint64_t>(s) <=
               static_cast<std::uint64_t>(std::numeric_limits<T>::max());
      } else if constexpr (std::is_signed_v<T>) {
        fits = s >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
      }
      if (!fits) fail(at, what + ", found " + v.dump());
      return v.get<T>();
    }
  }

  const std::string& file_;
};

GpuContext gpu_from_json(const ContextReader& r, const ojson& v, const std::string& at) {
  GpuContext g;
  g.raw = r.object(v, at);
  context_fields::gpu(g, r.reader(v, at));
  if (const ojson* n = r.optional_object(v, at, "nvlink")) {
    GpuNvlinkContext nvlink;
    context_fields::nvlink(nvlink, r.reader(*n, at + "/nvlink"));
    g.nvlink = nvlink;
  }
  return g;
}

LinkContext link_from_json(const ContextReader& r, const ojson& v, const std::string& at) {
  LinkContext l;
  l.raw = r.object(v, at);
  context_fields::link(l, r.reader(v, at));
  return l;
}

}  // namespace

RunContext RunContext::from_json(const ojson& j, const std::string& file,
                                 const std::string& pointer) {
  const ContextReader r(file);
  const std::string& at = pointer;
  RunContext c;
  c.raw = r.object(j, at);
  context_fields::head(c, r.reader(j, at));
  if (const ojson* iommu = r.optional_object(j, at, "iommu")) {
    IommuContext i;
    i.raw = *iommu;
    context_fields::iommu(i, r.reader(*iommu, at + "/iommu"));
    c.iommu = std::move(i);
  }
  if (const ojson* gpus = r.array(j, at, "gpus")) {
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      c.gpus.push_back(gpu_from_json(r, (*gpus)[i], at + "/gpus/" + std::to_string(i)));
    }
  }
  if (const ojson* links = r.array(j, at, "links")) {
    for (std::size_t i = 0; i < links->size(); ++i) {
      c.links.push_back(link_from_json(r, (*links)[i], at + "/links/" + std::to_string(i)));
    }
  }
  context_fields::tail(c, r.reader(j, at));
  if (const auto it = j.find("environment"); it != j.end()) c.environment = *it;
  return c;
}

}  // namespace pathbench
