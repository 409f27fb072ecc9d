// The SYMMFLOW_* registry: every kind parses good values and defaults, names
// the variable and what it accepts on a bad value, and reports the source.
#include "symmflow/core/params.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <stdexcept>

#include "symmflow/core/error.h"
#include "symmflow/core/log.h"
#include "symmflow/core/params_testing.h"

namespace symmflow::params {
namespace {

using params::testing::EnvGuard;

// The Error's message for a bad value of `name`, read with `read`.
template <typename F>
std::string error_of(const char* name, const char* value, F read) {
  EnvGuard g(name, value);
  try {
    read(name);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const Entry& entry(const std::vector<Entry>& es, std::string_view name) {
  for (const auto& e : es)
    if (e.spec->name == name) return e;
  throw std::logic_error("no entry");
}

TEST(Params, IntegerKind) {
  {
    EnvGuard g("SYMMFLOW_BLAS_THREADS", nullptr);
    EXPECT_EQ(integer("SYMMFLOW_BLAS_THREADS"), 1);  // the default
    EXPECT_FALSE(is_set("SYMMFLOW_BLAS_THREADS"));
  }
  {
    EnvGuard g("SYMMFLOW_BLAS_THREADS", "4");
    EXPECT_EQ(integer("SYMMFLOW_BLAS_THREADS"), 4);
    EXPECT_TRUE(is_set("SYMMFLOW_BLAS_THREADS"));
  }
  auto read = [](const char* n) { integer(n); };
  EXPECT_EQ(error_of("SYMMFLOW_BLAS_THREADS", "four", read),
            "SYMMFLOW_BLAS_THREADS: expected an integer in [1, 1024], found 'four'");
  EXPECT_EQ(error_of("SYMMFLOW_BLAS_THREADS", "0", read),
            "SYMMFLOW_BLAS_THREADS: expected an integer in [1, 1024], found '0'");
  EXPECT_EQ(error_of("SYMMFLOW_RANKS_PER_NODE", "2x", read),
            "SYMMFLOW_RANKS_PER_NODE: expected an integer in [1, 128], found '2x'");
  EXPECT_EQ(error_of("SYMMFLOW_RANK", "-1", read),
            "SYMMFLOW_RANK: expected an integer in [0, 127], found '-1'");
}

TEST(Params, BytesKind) {
  {
    EnvGuard g("SYMMFLOW_NT_MIN_BYTES", nullptr);
    EXPECT_EQ(bytes("SYMMFLOW_NT_MIN_BYTES"), size_t(8) << 20);
    EXPECT_EQ(bytes("SYMMFLOW_ONE_SHOT_MAX_BYTES"), 2048u);
    EXPECT_EQ(bytes("SYMMFLOW_NET_ONE_SHOT_MAX_BYTES"), size_t(256) << 10);
  }
  for (auto [text, want] : {std::pair{"4096", size_t(4096)}, std::pair{"64K", size_t(64) << 10},
                            std::pair{"8m", size_t(8) << 20}, std::pair{"1GiB", size_t(1) << 30},
                            std::pair{"2GB", size_t(2) << 30}, std::pair{"1", size_t(1)}}) {
    EnvGuard g("SYMMFLOW_NT_MIN_BYTES", text);
    EXPECT_EQ(bytes("SYMMFLOW_NT_MIN_BYTES"), want) << text;
  }
  auto read = [](const char* n) { bytes(n); };
  for (const char* bad : {"lots", "12Q", "0", "-4K", "4KB2", "99999999999999999999"})
    EXPECT_EQ(error_of("SYMMFLOW_SYMM_HEAP_BYTES", bad, read),
              fmt::format("SYMMFLOW_SYMM_HEAP_BYTES: expected a size > 0 like 4096, 64K, 8M or 1G, "
                          "found '{}'", bad));
  {  // a size that may be 0 (off) says so when it is bad
    EnvGuard g("SYMMFLOW_ALLOC_CACHE", "0");
    EXPECT_EQ(bytes("SYMMFLOW_ALLOC_CACHE"), 0u);
  }
  EXPECT_EQ(error_of("SYMMFLOW_ALLOC_CACHE", "-1", read),
            "SYMMFLOW_ALLOC_CACHE: expected a size like 0, 4096, 64K, 8M or 1G, found '-1'");
  EXPECT_EQ(parse_bytes("64M", "x"), size_t(64) << 20);
  EXPECT_EQ(parse_bytes("4096", "x"), 4096u);
  EXPECT_EQ(parse_bytes("1GiB", "x"), size_t(1) << 30);
  EXPECT_THROW(parse_bytes("64X", "x"), Error);
  EXPECT_THROW(parse_bytes("lots", "x"), Error);
  // format_bytes is its inverse on whole K/M/G.
  for (int64_t b : {int64_t(4100), int64_t(1) << 10, int64_t(64) << 20, int64_t(3) << 30})
    EXPECT_EQ(parse_bytes(format_bytes(b), "x"), size_t(b)) << format_bytes(b);
  EXPECT_EQ(format_bytes(65536), "64K");
}

TEST(Params, SecondsKind) {
  {
    EnvGuard g("SYMMFLOW_TIMEOUT", nullptr);
    EXPECT_EQ(seconds("SYMMFLOW_TIMEOUT"), 300.0);
  }
  {
    EnvGuard g("SYMMFLOW_TIMEOUT", "0.5");
    EXPECT_EQ(seconds("SYMMFLOW_TIMEOUT"), 0.5);
  }
  auto read = [](const char* n) { seconds(n); };
  EXPECT_EQ(error_of("SYMMFLOW_TIMEOUT", "abc", read),
            "SYMMFLOW_TIMEOUT: expected seconds > 0 (e.g. 30, 0.5), found 'abc'");
  EXPECT_EQ(error_of("SYMMFLOW_TIMEOUT", "0", read),
            "SYMMFLOW_TIMEOUT: expected seconds > 0 (e.g. 30, 0.5), found '0'");
  EXPECT_EQ(error_of("SYMMFLOW_TIMEOUT", "inf", read),
            "SYMMFLOW_TIMEOUT: expected seconds > 0 (e.g. 30, 0.5), found 'inf'");
  EXPECT_EQ(error_of("SYMMFLOW_TIMEOUT", "30s", read),
            "SYMMFLOW_TIMEOUT: expected seconds > 0 (e.g. 30, 0.5), found '30s'");
}

TEST(Params, NumberKind) {
  {
    EnvGuard g("SYMMFLOW_SIM_LINK_LATENCY_US", nullptr);
    EXPECT_EQ(number("SYMMFLOW_SIM_LINK_LATENCY_US"), 0.0);
  }
  {
    EnvGuard g("SYMMFLOW_SIM_LINK_GBPS", "2.5");
    EXPECT_EQ(number("SYMMFLOW_SIM_LINK_GBPS"), 2.5);
  }
  auto read = [](const char* n) { number(n); };
  EXPECT_EQ(error_of("SYMMFLOW_SIM_LINK_GBPS", "-1", read),
            "SYMMFLOW_SIM_LINK_GBPS: expected a number >= 0 (e.g. 0, 2.5), found '-1'");
  EXPECT_EQ(error_of("SYMMFLOW_SIM_LINK_GBPS", "nan", read),
            "SYMMFLOW_SIM_LINK_GBPS: expected a number >= 0 (e.g. 0, 2.5), found 'nan'");
  EXPECT_EQ(error_of("SYMMFLOW_SIM_LINK_LATENCY_US", "20us", read),
            "SYMMFLOW_SIM_LINK_LATENCY_US: expected a number >= 0 (e.g. 0, 2.5), found '20us'");
}

TEST(Params, BoolKind) {
  {
    EnvGuard g("SYMMFLOW_CHECK_HEAP", nullptr);
    EXPECT_FALSE(flag("SYMMFLOW_CHECK_HEAP"));
  }
  {
    EnvGuard g("SYMMFLOW_CHECK_HEAP", "1");
    EXPECT_TRUE(flag("SYMMFLOW_CHECK_HEAP"));
  }
  {
    EnvGuard g("SYMMFLOW_CHECK_HEAP", "0");
    EXPECT_FALSE(flag("SYMMFLOW_CHECK_HEAP"));
  }
  auto read = [](const char* n) { flag(n); };
  EXPECT_EQ(error_of("SYMMFLOW_CHECK_HEAP", "yes", read),
            "SYMMFLOW_CHECK_HEAP: expected 0 or 1, found 'yes'");
  EXPECT_EQ(error_of("SYMMFLOW_OVERSUBSCRIBED", "2", read),
            "SYMMFLOW_OVERSUBSCRIBED: expected 0 or 1, found '2'");
}

TEST(Params, EnumKind) {
  {
    EnvGuard g("SYMMFLOW_BACKEND", "mpi");
    EXPECT_EQ(word("SYMMFLOW_BACKEND"), "mpi");
  }
  {
    EnvGuard g("SYMMFLOW_DEBUG", "info");  // case-insensitive; the declared spelling comes back
    EXPECT_EQ(word("SYMMFLOW_DEBUG"), "INFO");
  }
  auto read = [](const char* n) { word(n); };
  EXPECT_EQ(error_of("SYMMFLOW_BACKEND", "nccl", read),
            "SYMMFLOW_BACKEND: expected shm or mpi, found 'nccl'");
  EXPECT_EQ(error_of("SYMMFLOW_DEBUG", "TRACE", read),
            "SYMMFLOW_DEBUG: expected WARN or INFO, found 'TRACE'");
  // Unset without a default: asking for the value is an Error naming it.
  EnvGuard g("SYMMFLOW_BACKEND", nullptr);
  EXPECT_FALSE(is_set("SYMMFLOW_BACKEND"));
  try {
    word("SYMMFLOW_BACKEND");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SYMMFLOW_BACKEND is not set"), std::string::npos) << e.what();
  }
}

TEST(Params, StringAndPathKinds) {
  {
    EnvGuard g("SYMMFLOW_TUNE_FILE", "/tmp/t.json");
    EXPECT_EQ(text("SYMMFLOW_TUNE_FILE"), "/tmp/t.json");
  }
  {
    EnvGuard g("SYMMFLOW_TUNE_FILE", nullptr);
    EnvGuard h("HOME", "/home/someone");
    EXPECT_EQ(text("SYMMFLOW_TUNE_FILE"), "/home/someone/.cache/symmflow/tune.json");
  }
  {
    EnvGuard g("SYMMFLOW_TUNE_FILE", nullptr);
    EnvGuard h("HOME", nullptr);
    EXPECT_EQ(text("SYMMFLOW_TUNE_FILE"), "./.cache/symmflow/tune.json");
  }
  {
    EnvGuard g("SYMMFLOW_RENDEZVOUS", "/sf-x");
    EXPECT_EQ(text("SYMMFLOW_RENDEZVOUS"), "/sf-x");
  }
  // Strings accept any text; an empty value counts as unset.
  EnvGuard g("SYMMFLOW_RENDEZVOUS", "");
  EXPECT_FALSE(is_set("SYMMFLOW_RENDEZVOUS"));
}

TEST(Params, SourcesAndValuesOfAll) {
  EnvGuard a("SYMMFLOW_TIMEOUT", "12");
  EnvGuard b("SYMMFLOW_RANK", "1");
  EnvGuard c("SYMMFLOW_NT_MIN_BYTES", nullptr);
  EnvGuard d("SYMMFLOW_JOB_TOKEN", "0123456789abcdef0123456789abcdef");
  EnvGuard e("SYMMFLOW_BACKEND", nullptr);
  EnvGuard f("SYMMFLOW_CHECK_HEAP", "maybe");
  auto es = all();
  EXPECT_EQ(es.size(), specs().size());
  EXPECT_EQ(entry(es, "SYMMFLOW_TIMEOUT").source, Source::environment);
  EXPECT_EQ(entry(es, "SYMMFLOW_TIMEOUT").value, "12");
  EXPECT_EQ(entry(es, "SYMMFLOW_RANK").source, Source::launcher);
  EXPECT_EQ(entry(es, "SYMMFLOW_NT_MIN_BYTES").source, Source::unset);
  EXPECT_EQ(entry(es, "SYMMFLOW_NT_MIN_BYTES").value, "8M");
  EXPECT_EQ(entry(es, "SYMMFLOW_BACKEND").value, "(unset)");
  EXPECT_EQ(entry(es, "SYMMFLOW_JOB_TOKEN").value, "(set, hidden)");
  EXPECT_EQ(entry(es, "SYMMFLOW_CHECK_HEAP").error, "SYMMFLOW_CHECK_HEAP: expected 0 or 1, found 'maybe'");
  EXPECT_EQ(source_name(Source::unset), "default");
  EXPECT_EQ(source_name(Source::environment), "environment");
  EXPECT_EQ(source_name(Source::launcher), "launcher");
  try {
    validate_all();
    FAIL() << "validate_all accepted SYMMFLOW_CHECK_HEAP=maybe";
  } catch (const Error& err) {
    EXPECT_STREQ(err.what(), "SYMMFLOW_CHECK_HEAP: expected 0 or 1, found 'maybe'");
  }
}

TEST(Params, CachesUntilReload) {
  EnvGuard g("SYMMFLOW_PUSH_MAX_BYTES", "4K");
  EXPECT_EQ(bytes("SYMMFLOW_PUSH_MAX_BYTES"), 4096u);
  setenv("SYMMFLOW_PUSH_MAX_BYTES", "8K", 1);
  EXPECT_EQ(bytes("SYMMFLOW_PUSH_MAX_BYTES"), 4096u);  // read once
  reload();
  EXPECT_EQ(bytes("SYMMFLOW_PUSH_MAX_BYTES"), 8192u);
}

TEST(Params, MisuseIsAProgrammingError) {
  EXPECT_THROW(bytes("SYMMFLOW_NO_SUCH_THING"), std::logic_error);
  EXPECT_THROW(integer("SYMMFLOW_TIMEOUT"), std::logic_error);  // declared as seconds
  EXPECT_THROW(system_env("SYMMFLOW_TIMEOUT"), std::logic_error);
  EXPECT_FALSE(system_env("SF_SURELY_NOT_SET_ANYWHERE").has_value());
}

TEST(Params, EveryDeclarationIsComplete) {
  std::set<std::string> names;
  for (const auto& s : specs()) {
    SCOPED_TRACE(s.name);
    EXPECT_TRUE(names.insert(s.name).second) << "declared twice";
    EXPECT_EQ(std::string_view(s.name).rfind("SYMMFLOW_", 0), 0u);
    EXPECT_GT(std::string_view(s.doc).size(), 10u);
    EXPECT_EQ(std::string_view(s.doc).find('|'), std::string_view::npos) << "breaks the docs table";
    EXPECT_EQ(s.kind == Kind::choice, *s.words != '\0');
  }
}

TEST(Log, DebugLevelAndLineFormat) {
  {
    EnvGuard g("SYMMFLOW_DEBUG", nullptr);
    logging::reload();
    EXPECT_FALSE(logging::info_enabled());
    EXPECT_FALSE(logging::warn_enabled());
  }
  {
    EnvGuard g("SYMMFLOW_DEBUG", "WARN");
    logging::reload();
    EXPECT_TRUE(logging::warn_enabled());
    EXPECT_FALSE(logging::info_enabled());
  }
  {
    EnvGuard g("SYMMFLOW_DEBUG", "INFO");
    logging::reload();
    EXPECT_TRUE(logging::info_enabled());
    logging::set_rank(3);
    EXPECT_EQ(logging::format_line(logging::Level::info, "hello"), "[symmflow rank 3] INFO hello");
    logging::set_rank(-1);
  }
  {
    EnvGuard g("SYMMFLOW_DEBUG", "LOUD");
    logging::reload();
    EXPECT_THROW(logging::info_enabled(), Error);
  }
  logging::reload();
}

}  // namespace
}  // namespace symmflow::params
