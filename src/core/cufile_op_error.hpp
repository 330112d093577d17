#pragma once

#include <string>
#include <string_view>

namespace pathbench {

// The CUfileOpError enumerator's name and the meaning cufile.h gives it ("" when the code is not
// one cufile.h defines). pathbench loads libcufile with dlopen and has no cufile.h to ask, yet a
// bare "5027" in a skip reason sends every user to the header.
struct CufileOpErrorName {
  std::string_view name;
  std::string_view meaning;
};
CufileOpErrorName cufile_op_error_name(int err);

// "CUfileOpError 5027 CU_FILE_HANDLE_NOT_REGISTERED (file descriptor is not registered)", with
// " (CUresult N)" appended when the error is a CUDA driver error.
std::string describe_cufile_op_error(int err, int cu_err);

}  // namespace pathbench
