#include <gtest/gtest.h>

#include "core/cufile_op_error.hpp"

namespace pathbench::test_cufile_op_error {
namespace {

TEST(CufileOpError, TheHandleRegisterRefusalOfTheH200MachineIsNamed) {
  EXPECT_EQ(describe_cufile_op_error(5027, 0),
            "CUfileOpError 5027 CU_FILE_HANDLE_NOT_REGISTERED (file descriptor is not registered)");
}

TEST(CufileOpError, ACudaDriverErrorCarriesItsCuresult) {
  EXPECT_EQ(describe_cufile_op_error(5011, 2),
            "CUfileOpError 5011 CU_FILE_CUDA_DRIVER_ERROR (CUDA Driver API error) (CUresult 2)");
}

TEST(CufileOpError, EveryCodeOfTheHeaderHasANameAndTheGapsAndOthersDoNot) {
  for (int code = 5001; code <= 5038; ++code) {
    const CufileOpErrorName n = cufile_op_error_name(code);
    if (code == 5021 || code == 5032) {
      EXPECT_TRUE(n.name.empty()) << code;
      continue;
    }
    EXPECT_TRUE(n.name.starts_with("CU_FILE_")) << code;
    EXPECT_FALSE(n.meaning.empty()) << code;
  }
  EXPECT_EQ(cufile_op_error_name(0).name, "CU_FILE_SUCCESS");
  EXPECT_TRUE(cufile_op_error_name(5000).name.empty());
  EXPECT_TRUE(cufile_op_error_name(-1).name.empty());
  // A code a newer libcufile adds stays a number rather than a guess.
  EXPECT_EQ(describe_cufile_op_error(5099, 0), "CUfileOpError 5099");
}

TEST(CufileOpError, NamesAreDistinct) {
  for (int a = 5001; a <= 5038; ++a) {
    for (int b = a + 1; b <= 5038; ++b) {
      const auto na = cufile_op_error_name(a).name;
      if (na.empty()) continue;
      EXPECT_NE(na, cufile_op_error_name(b).name) << a << " " << b;
    }
  }
}

}  // namespace
}  // namespace pathbench::test_cufile_op_error
