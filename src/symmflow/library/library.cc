#include "symmflow/library/library.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "symmflow/core/error.h"
#include "symmflow/library/symm_mem_args.h"
#include "symmflow/schema/parser.h"

namespace symmflow {

namespace {
std::string_view macro_name(Library::Kind k) {
  switch (k) {
    case Library::Kind::DEF: return "SYMMFLOW_LIBRARY";
    case Library::Kind::FRAGMENT: return "SYMMFLOW_LIBRARY_FRAGMENT";
    case Library::Kind::IMPL: return "SYMMFLOW_LIBRARY_IMPL";
  }
  return "?";
}
}  // namespace

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> key, const char* file,
                 int line)
    : kind_(kind), ns_(std::move(ns)), key_(key) {
  where_ = fmt::format("{}({}{})", macro_name(kind_), ns_,
                       key_ ? fmt::format(", {}", dispatch_key_name(*key_)) : "");
  if (file != nullptr) where_ += fmt::format(" at {}:{}", file, line);
  SF_CHECK(!ns_.empty() && ns_.find(':') == std::string::npos,
           "{}: expected a namespace name like 'myops', got '{}'", where_, ns_);
  SF_CHECK(key_.has_value() == (kind_ == Kind::IMPL),
           "{}: a dispatch key is required for IMPL libraries and only for them", where_);
  if (kind_ == Kind::DEF) handles_.push_back(Dispatcher::instance().claim_namespace(ns_, where_));
}

Library::~Library() {
  // Undo in reverse order: kernels and declarations before the defs they refer to.
  while (!handles_.empty()) handles_.pop_back();
}

std::string Library::qualify(std::string_view name, std::string_view what) const {
  size_t sep = name.find("::");
  if (sep == std::string_view::npos) return ns_ + "::" + std::string(name);
  SF_CHECK(name.substr(0, sep) == ns_,
           "{}: {}('{}') names namespace '{}', but this library is for namespace '{}'", where_,
           what, name, name.substr(0, sep), ns_);
  return std::string(name);
}

Library& Library::def(std::string_view schema) {
  SF_CHECK(kind_ != Kind::IMPL,
           "{}: def('{}') is not allowed in an IMPL library; define ops in SYMMFLOW_LIBRARY "
           "or SYMMFLOW_LIBRARY_FRAGMENT",
           where_, schema);
  FunctionSchema s = parse_schema(schema, ns_);
  SF_CHECK(s.ns == ns_, "{}: def('{}') names namespace '{}', but this library is for namespace '{}'",
           where_, schema, s.ns, ns_);
  // `SymmMemTensor x` declares x symmetric as register_symm_mem_args would.
  std::vector<std::string> symmetric;
  for (const auto& a : s.arguments) {
    const SchemaType* t = &a.type;
    while (t->is_list() || t->is_optional()) t = &t->elem();
    if (t->kind() == SchemaType::Kind::SymmMemTensor) symmetric.push_back(a.name);
  }
  std::string full = s.full_name();
  handles_.push_back(Dispatcher::instance().def(std::move(s), where_));
  if (!symmetric.empty())
    handles_.push_back(Dispatcher::instance().register_symm_mem_args(full, std::move(symmetric)));
  return *this;
}

Library& Library::def(std::string_view schema, Kernel cpu) {
  def(schema);
  std::string full = parse_schema(schema, ns_).full_name();
  handles_.push_back(Dispatcher::instance().impl(full, DispatchKey::CPU, std::move(cpu), where_));
  return *this;
}

Library& Library::impl(std::string_view name, Kernel kernel) {
  return impl(name, std::move(kernel), key_.value_or(DispatchKey::CPU));
}

Library& Library::impl(std::string_view name, Kernel kernel, DispatchKey key) {
  SF_CHECK(!key_ || *key_ == key, "{}: impl('{}') for dispatch key {} in a library for key {}",
           where_, name, dispatch_key_name(key), dispatch_key_name(*key_));
  std::string full = qualify(name, "impl");
  handles_.push_back(Dispatcher::instance().impl(full, key, std::move(kernel), where_));
  return *this;
}

Library& Library::set_mutation_resolver(std::string_view name, MutationResolver fn) {
  std::string full = qualify(name, "set_mutation_resolver");
  handles_.push_back(Dispatcher::instance().set_mutation_resolver(full, std::move(fn)));
  return *this;
}

Library& Library::register_symm_mem_args(std::string_view name, std::vector<std::string> args) {
  std::string full = qualify(name, "register_symm_mem_args");
  handles_.push_back(Dispatcher::instance().register_symm_mem_args(full, std::move(args)));
  return *this;
}

namespace detail {

namespace {
thread_local std::vector<std::string>* g_error_sink = nullptr;
}

void set_static_init_error_sink(std::vector<std::string>* sink) { g_error_sink = sink; }

StaticLibraryInit::StaticLibraryInit(Library::Kind kind, const char* ns,
                                     std::optional<DispatchKey> key, void (*body)(Library&),
                                     const char* file, int line) {
  std::string where = fmt::format("{}({}) at {}:{}", macro_name(kind), ns, file, line);
  try {
    library = new Library(kind, ns, key, file, line);
    body(*library);
  } catch (const std::exception& e) {
    if (g_error_sink != nullptr) {
      g_error_sink->push_back(fmt::format("in {}: {}", where, e.what()));
      return;
    }
    // At program start there is no caller to throw to: say what failed and stop.
    std::fprintf(stderr, "symmflow: error in %s:\n%s\n", where.c_str(), e.what());
    std::abort();
  }
}

}  // namespace detail
}  // namespace symmflow
