// load_library: the failure path here; a plugin with SYMMFLOW_LIBRARY blocks needs
// a separate .so target, which the end-to-end tests build.
#include "symmflow/library/plugin.h"

#include <gtest/gtest.h>

#include "symmflow/library/test_util.h"

namespace symmflow {
namespace {

TEST(Plugin, MissingLibraryQuotesDlerror) {
  expect_error([] { load_library("/nonexistent/libnope.so"); },
               "load_library('/nonexistent/libnope.so'): dlopen failed: /nonexistent/libnope.so: "
               "cannot open shared object file: No such file or directory");
}

TEST(Plugin, NotASharedObject) {
  expect_error([] { load_library("/etc/hostname"); }, "dlopen failed: ");
}

TEST(Plugin, LoadsALibraryWithoutRegistrations) {
  EXPECT_NO_THROW(load_library("libm.so.6"));
}

}  // namespace
}  // namespace symmflow
