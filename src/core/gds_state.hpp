#pragma once

#include <filesystem>
#include <string>

namespace pathbench {

// What this node offers GPUDirect Storage before any cuFile call: the library, the nvidia-fs
// kernel module and the configured compatibility mode. The run's context records it, so a
// result whose cufile cases skipped (or ran in compatibility mode) says why without rerunning.
struct GdsState {
  bool library_found = false;
  std::string library;          // "libcufile.so.0" when dlopen found it, else dlerror()'s text
  bool nvidia_fs = false;       // the nvidia-fs kernel module is loaded
  std::string nvidia_fs_where;  // the path that showed it
  std::string compat_mode;      // "allowed" | "not allowed" | "" (not configured)
  std::string compat_source;    // CUFILE_ALLOW_COMPAT_MODE, or the cufile.json it came from
};

// The nvidia-fs module (<root>/proc/driver/nvidia-fs or <root>/sys/module/nvidia_fs) and the
// compatibility mode: CUFILE_ALLOW_COMPAT_MODE, else "allow_compat_mode" in the file
// CUFILE_ENV_PATH_JSON names, else in <root>/etc/cufile.json. Loads nothing; never throws.
GdsState read_gds_node_state(const std::filesystem::path& root = "/");

// "allowed" / "not allowed" / "" for the text of a cufile.json: JSON with // and /* */ comments,
// so the key is searched for outside comments rather than parsed.
std::string compat_mode_in_cufile_json(const std::string& text);

// dlopen("libcufile.so.0"): sets `library` and `library_found`, returns the handle or nullptr. A
// library that loads stays loaded for the process (libcufile keeps threads and state that must
// outlive every handle, so it is never unloaded); dlopen counts references, so every caller
// shares one load.
void* load_cufile_library(GdsState& s);

// read_gds_node_state() plus load_cufile_library().
GdsState read_gds_state();

// "libcufile found (libcufile.so.0); nvidia-fs module not loaded (...); compatibility mode
// allowed (/etc/cufile.json)".
std::string describe_gds_state(const GdsState& s);

}  // namespace pathbench
