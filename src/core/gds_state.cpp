#include "core/gds_state.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace pathbench {

namespace {

// The text with its // and /* */ comments blanked (outside strings), so a key quoted in a comment
// is not taken for the setting.
std::string without_comments(const std::string& in) {
  std::string out = in;
  bool in_string = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      const auto end = out.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? out.size() : end + 2;
      for (; i < stop; ++i) {
        if (out[i] != '\n') out[i] = ' ';
      }
      --i;
    }
  }
  return out;
}

}  // namespace

std::string compat_mode_in_cufile_json(const std::string& text) {
  const std::string t = without_comments(text);
  const auto key = t.find("\"allow_compat_mode\"");
  if (key == std::string::npos) return "";
  const auto colon = t.find(':', key);
  if (colon == std::string::npos) return "";
  const auto value = t.find_first_not_of(" \t\r\n", colon + 1);
  if (value == std::string::npos) return "";
  if (t.compare(value, 4, "true") == 0) return "allowed";
  if (t.compare(value, 5, "false") == 0) return "not allowed";
  return "";
}

GdsState read_gds_node_state(const std::filesystem::path& root) {
  GdsState s;
  for (const char* where : {"/proc/driver/nvidia-fs", "/sys/module/nvidia_fs"}) {
    std::error_code ec;
    if (std::filesystem::exists(root / (where + 1), ec)) {  // below root, not at /
      s.nvidia_fs = true;
      s.nvidia_fs_where = where;
      break;
    }
  }
  if (const char* env = std::getenv("CUFILE_ALLOW_COMPAT_MODE")) {
    const std::string v = env;
    s.compat_mode = v == "true" || v == "1" ? "allowed" : "not allowed";
    s.compat_source = "CUFILE_ALLOW_COMPAT_MODE";
    return s;
  }
  const char* env_path = std::getenv("CUFILE_ENV_PATH_JSON");
  const std::filesystem::path path =
      env_path ? std::filesystem::path(env_path) : root / "etc/cufile.json";
  std::ifstream in(path);
  if (!in) return s;
  std::ostringstream text;
  text << in.rdbuf();
  s.compat_mode = compat_mode_in_cufile_json(text.str());
  if (!s.compat_mode.empty()) s.compat_source = env_path ? path.string() : "/etc/cufile.json";
  return s;
}

void* load_cufile_library(GdsState& s) {
  void* lib = dlopen("libcufile.so.0", RTLD_NOW | RTLD_LOCAL);
  s.library_found = lib != nullptr;
  if (lib != nullptr) {
    s.library = "libcufile.so.0";
  } else {
    const char* why = dlerror();
    s.library = why ? why : "dlopen failed";
  }
  return lib;
}

GdsState read_gds_state() {
  GdsState s = read_gds_node_state();
  load_cufile_library(s);
  return s;
}

std::string describe_gds_state(const GdsState& s) {
  std::string text = s.library_found ? "libcufile found (" + s.library + ")"
                                     : "libcufile.so.0 not found (" + s.library + ")";
  text += s.nvidia_fs ? "; nvidia-fs module loaded (" + s.nvidia_fs_where + ")"
                      : "; nvidia-fs module not loaded (no /proc/driver/nvidia-fs or "
                        "/sys/module/nvidia_fs)";
  if (!s.compat_mode.empty())
    text += "; compatibility mode " + s.compat_mode + " (" + s.compat_source + ")";
  return text;
}

}  // namespace pathbench
