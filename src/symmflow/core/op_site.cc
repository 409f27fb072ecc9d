#include "symmflow/core/op_site.h"

#include <fmt/format.h>

#include <exception>

#include "symmflow/core/error.h"

namespace symmflow {

namespace {
thread_local const OpSite* t_current = nullptr;
}  // namespace

std::string OpSite::where() const {
  if (line <= 0) return "";
  std::string_view f = file.empty() ? std::string_view("<program>") : file;
  return col > 0 ? fmt::format("{}:{}:{}", f, line, col) : fmt::format("{}:{}", f, line);
}

std::string OpSite::str() const {
  std::string w = where();
  return w.empty() ? std::string(op) : fmt::format("{} at {}", op, w);
}

void rethrow_at(const OpSite& site) {
  const std::string head = site.str() + ": ";
  try {
    throw;
  } catch (const DeadlockError&) {
    throw;
  } catch (const TimeoutError& e) {
    throw TimeoutError(head + e.what());
  } catch (const PeerFailure& e) {
    throw PeerFailure(head + e.what());
  } catch (const std::exception& e) {
    throw Error(head + e.what());
  }
}

const OpSite* current_op_site() { return t_current; }

OpSiteScope::OpSiteScope(const OpSite& site) : prev_(t_current) { t_current = &site; }
OpSiteScope::~OpSiteScope() { t_current = prev_; }

}  // namespace symmflow
