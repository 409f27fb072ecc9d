// Library: how op authors register operators, as TORCH_LIBRARY does in PyTorch.
//
//   SYMMFLOW_LIBRARY(myops, m) {
//     m.def("scale_(Tensor(a!) x, float factor) -> Tensor(a!)", scale_cpu);
//     m.register_symm_mem_args("scale_", {"x"});
//   }
//   SYMMFLOW_LIBRARY_IMPL(myops, Meta, m) { m.impl("scale_", scale_meta); }
//
// A DEF library owns its namespace (one per namespace); FRAGMENTs add ops to a
// namespace and may appear any number of times; an IMPL library adds kernels for
// one dispatch key. A Library removes everything it registered when destroyed;
// the macros' libraries live for the process.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symmflow/library/dispatcher.h"
#include "symmflow/library/registration_handle.h"
#include "symmflow/library/symm_mem_args.h"

namespace symmflow {

class Library {
 public:
  enum class Kind { DEF, FRAGMENT, IMPL };

  // `key` is required for IMPL and not allowed otherwise. `file`/`line` say where
  // the library is, for error messages.
  Library(Kind kind, std::string ns, std::optional<DispatchKey> key = std::nullopt,
          const char* file = nullptr, int line = 0);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // Defines an op. A schema without `ns::` goes into this library's namespace; one
  // with another namespace is an Error, as is defining an op twice.
  Library& def(std::string_view schema);
  // Defines an op and registers `cpu` as its CPU kernel.
  Library& def(std::string_view schema, Kernel cpu);
  // Registers a kernel. `name` is "op", "op.overload", or the same with "ns::".
  // Without a key: the IMPL library's key, or CPU for DEF/FRAGMENT.
  Library& impl(std::string_view name, Kernel kernel);
  Library& impl(std::string_view name, Kernel kernel, DispatchKey key);
  Library& set_mutation_resolver(std::string_view name, MutationResolver fn);
  // See symm_mem_args.h for the rules.
  Library& register_symm_mem_args(std::string_view name, std::vector<std::string> args);

  Kind kind() const { return kind_; }
  const std::string& ns() const { return ns_; }
  const std::string& where() const { return where_; }

 private:
  // "op.overload" -> "ns::op.overload"; a different namespace is an Error.
  std::string qualify(std::string_view name, std::string_view what) const;

  Kind kind_;
  std::string ns_;
  std::optional<DispatchKey> key_;
  std::string where_;  // "SYMMFLOW_LIBRARY(myops) at ops.cc:12"
  std::vector<RegistrationHandle> handles_;
};

namespace detail {
// Runs a SYMMFLOW_LIBRARY body at static-initialization time into a Library that
// lives for the process. An error in the body inside load_library() is reported by
// load_library; at program start it is printed and the program aborts.
struct StaticLibraryInit {
  StaticLibraryInit(Library::Kind kind, const char* ns, std::optional<DispatchKey> key,
                    void (*body)(Library&), const char* file, int line);
  // Never deleted: the registrations last for the process (held here so leak
  // checkers see it as reachable).
  Library* library = nullptr;
};
// Collects static-registration errors while a plugin loads (see plugin.cc).
void set_static_init_error_sink(std::vector<std::string>* sink);
}  // namespace detail

}  // namespace symmflow

#define SF_LIBRARY_CONCAT_(a, b) a##b
#define SF_LIBRARY_CONCAT(a, b) SF_LIBRARY_CONCAT_(a, b)
#define SF_LIBRARY_STATIC_(kind, ns, key, m, uid)                                         \
  static void SF_LIBRARY_CONCAT(uid, _body)(::symmflow::Library&);                        \
  static const ::symmflow::detail::StaticLibraryInit SF_LIBRARY_CONCAT(uid, _init)(       \
      ::symmflow::Library::Kind::kind, #ns, key, &SF_LIBRARY_CONCAT(uid, _body), __FILE__, \
      __LINE__);                                                                          \
  static void SF_LIBRARY_CONCAT(uid, _body)(::symmflow::Library & m)

// SYMMFLOW_LIBRARY(ns, m) { m.def(...); }  — defines the namespace (once per process).
#define SYMMFLOW_LIBRARY(ns, m) \
  SF_LIBRARY_STATIC_(DEF, ns, std::nullopt, m, SF_LIBRARY_CONCAT(sf_library_, __COUNTER__))
// SYMMFLOW_LIBRARY_FRAGMENT(ns, m) { m.def(...); }  — adds ops; any number of times.
#define SYMMFLOW_LIBRARY_FRAGMENT(ns, m) \
  SF_LIBRARY_STATIC_(FRAGMENT, ns, std::nullopt, m, SF_LIBRARY_CONCAT(sf_library_, __COUNTER__))
// SYMMFLOW_LIBRARY_IMPL(ns, CPU|Meta, m) { m.impl("op", kernel); }
#define SYMMFLOW_LIBRARY_IMPL(ns, key, m)                         \
  SF_LIBRARY_STATIC_(IMPL, ns, ::symmflow::DispatchKey::key, m, \
                     SF_LIBRARY_CONCAT(sf_library_, __COUNTER__))
