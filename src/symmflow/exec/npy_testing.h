// Helpers shared by the .npy tests: a temporary folder per test, hand-made .npy
// files (to test headers numpy itself would never write), and checks that an Error
// is thrown and its message names the parts that matter.
//
//   NpyTempDir dir;
//   write_raw_npy(dir.path("a.npy"), 1, "{'descr': '>f4', ...}", data);
//   expect_error([&] { read_npy(dir.path("a.npy")); }, {"a.npy", "big-endian"});
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

#include "symmflow/core/error.h"
#include "symmflow/exec/npy_header.h"

namespace symmflow::exec::testing {

class NpyTempDir {
 public:
  NpyTempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sf_npy_XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    if (p == nullptr) throw Error("mkdtemp failed for " + tmpl);
    dir_ = p;
  }
  ~NpyTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(std::string_view name) const { return (dir_ / name).string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A .npy file with this exact header text (no padding added) and data.
inline void write_raw_npy(const std::string& path, int major, std::string_view dict,
                          std::string_view data) {
  std::string out(kNpyMagic);
  out.push_back(char(major));
  out.push_back(0);
  const size_t len_bytes = major == 1 ? 2 : 4;
  for (size_t b = 0; b < len_bytes; ++b) out.push_back(char((dict.size() >> (8 * b)) & 0xff));
  out += dict;
  out += data;
  write_bytes(path, out);
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a symmflow::Error, none was thrown";
  return "";
}

// f throws an Error whose message contains every one of `parts`.
template <typename F>
void expect_error(F&& f, std::initializer_list<std::string_view> parts) {
  const std::string msg = error_of(std::forward<F>(f));
  for (std::string_view p : parts)
    EXPECT_NE(msg.find(p), std::string::npos) << "message lacks \"" << p << "\": " << msg;
}

}  // namespace symmflow::exec::testing
