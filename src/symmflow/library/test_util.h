// Test helpers for library/ tests (header-only, used by *_test.cc only).
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "symmflow/core/error.h"
#include "symmflow/schema/parser.h"

namespace symmflow {

// Runs fn and expects a symmflow::Error whose message contains `needle`.
template <class F>
void expect_error(F&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an Error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << needle;
  }
}

}  // namespace symmflow
