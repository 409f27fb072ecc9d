// The SYMMFLOW_* environment variables: one registry (in the spirit of
// NCCL_PARAM). Each variable is declared ONCE, in the table of params.cc, with
// its kind, default, accepted values, who sets it (the user or the launcher)
// and one line of documentation; `symmflow env` lists them and
// docs/runtime.md's table is checked against them (tests/env_cli_test.cc).
//
//   size_t max = params::bytes("SYMMFLOW_ONE_SHOT_MAX_BYTES");   // 2048 unless set
//   if (params::is_set("SYMMFLOW_BACKEND")) b = params::word("SYMMFLOW_BACKEND");
//
// A variable is read from the environment at its first use and cached
// (thread-safe; afterwards an accessor is a hash lookup and an atomic load).
// An empty value counts as unset. A bad value is an Error naming the variable
// and what it accepts: `SYMMFLOW_TIMEOUT: expected seconds > 0 (e.g. 30, 0.5),
// found 'abc'` (thrown at every use, so it is never silently ignored).
// Asking for a name that is not declared is a programming error
// (std::logic_error). This file is the only place in src/ that calls getenv:
// other variables (HOME, MPI launchers' variables) go through system_env().
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace symmflow::params {

enum class Kind {
  integer,  // decimal integer in [lo, hi]
  bytes,    // 4096, 64K, 8M, 1G (also 1GiB, 1GB: powers of 1024), in [lo, hi]
  seconds,  // a positive decimal number of seconds: 30, 0.5
  number,   // a decimal number >= 0: 0, 2.5, 100 (the unit is in the name: _US, _GBPS)
  boolean,  // 0 or 1
  choice,   // one of the listed words (compared case-insensitively)
  string,   // any text
  path,     // a file name
};
enum class SetBy { user, launcher };
enum class Source { unset, environment, launcher };  // unset: the default applies

// Ranks a job may have (runtime::kMaxRanks; shm_backend.cc asserts they agree).
inline constexpr int kMaxRanks = 128;

// One declared variable, as the table in params.cc states it.
struct Spec {
  const char* name;
  Kind kind;
  const char* dflt;     // the default as text, or "none" (what happens then: see doc)
  int64_t lo = 0;       // integer, bytes: inclusive range
  int64_t hi = 0;
  const char* words = "";  // choice: the accepted words, "|"-separated
  SetBy set_by = SetBy::user;
  const char* doc = "";
  bool secret = false;  // shown as "(set, hidden)" by `symmflow env`
};

// Every declared variable, in table order.
const std::vector<Spec>& specs();
// The declaration of `name`; std::logic_error when it is not declared.
const Spec& spec(std::string_view name);
// What the variable accepts, as error messages and `symmflow env` say it:
// "an integer in [1, 128]", "a size > 0 like 4096, 64K, 8M or 1G",
// "seconds > 0 (e.g. 30, 0.5)", "a number >= 0 (e.g. 0, 2.5)", "0 or 1", "shm or mpi", "one of WARN, INFO".
std::string accepts(const Spec& s);
std::string_view kind_name(Kind k);

// Set in the environment (non-empty)?
bool is_set(std::string_view name);
// The value when set, else the default. Unset with default "none": an Error
// ("SYMMFLOW_X is not set") — check is_set() first for such variables.
int64_t integer(std::string_view name);
size_t bytes(std::string_view name);
double seconds(std::string_view name);
double number(std::string_view name);
bool flag(std::string_view name);
std::string word(std::string_view name);  // choice: the declared spelling
std::string text(std::string_view name);  // string/path: the value as given; path
                                          // defaults expand a leading $HOME
// Raw text of the variable as set ("" when unset), whatever its kind.
std::string raw(std::string_view name);

// Every variable's state, for `symmflow env` and the docs check. Never throws:
// a bad value is reported in `error`.
struct Entry {
  const Spec* spec;
  std::string value;   // the effective value as text (the default when unset)
  Source source;
  std::string error;   // non-empty: the value set is invalid (the Error's message)
};
std::vector<Entry> all();
std::string_view source_name(Source s);  // "default", "environment", "launcher"
// Throws the first bad value's Error (every set variable is checked).
void validate_all();
// SYMMFLOW_* names set in the environment but not declared (typos).
std::vector<std::string> undeclared_in_environment();

// Forget every cached value: the next use reads the environment again.
// dist::init() calls it (each attach sees the environment of that moment, as
// setenv before init in tests expects); tests that setenv call it too. Values
// already handed out stay valid.
void reload();

// A variable that is not ours (HOME, OMPI_COMM_WORLD_LOCAL_SIZE, PMI_RANK...),
// nullopt when unset. Not for SYMMFLOW_* names (std::logic_error): those are declared.
std::optional<std::string> system_env(std::string_view name);

// Bytes of a size like "64M", "1G", "4096" (K/M/G are powers of 1024; an
// optional B or iB after the suffix). `what` names the setting in the error.
size_t parse_bytes(const std::string& text, std::string_view what);
// The inverse for sizes that are whole K/M/G: 65536 -> "64K", 3 << 30 -> "3G",
// 4100 -> "4100". One spelling for every table, log line and help text.
std::string format_bytes(int64_t bytes);

}  // namespace symmflow::params
