// The op this thread is running, and where it comes from: set by the one
// place that dispatches an op of a program (exec::run_node, used by the
// interpreter and the compiled program), read by what needs to say where a
// failure happened — the error wrapper there and the runtime's deadlock report
// ("rank 1 blocked in irecv ... at prog.sf:3:8 (c10d::wait_tensor)"), which
// lives below the IR and cannot see the node.
//
//   OpSite site{"aten::div", "prog.sf", 3, 8};
//   OpSiteScope scope(site);      // current_op_site() == &site until it ends
#pragma once
#include <string>
#include <string_view>

namespace symmflow {

struct OpSite {
  std::string_view op;    // qualified name: "aten::div"
  std::string_view file;  // "prog.sf"; empty when the program has no file
  int line = 0;           // 0: unknown (a traced program)
  int col = 0;
  // "prog.sf:3:8", "prog.sf:3", or "" when the line is unknown.
  std::string where() const;
  // "aten::div at prog.sf:3:8", or "aten::div" when the line is unknown.
  std::string str() const;
};

// Inside a catch block: rethrows the exception being handled with the site in
// front of its message ("aten::div at prog.sf:3:8: ..."), keeping its type
// (TimeoutError and PeerFailure stay what they are; anything else not an
// Error becomes one). A DeadlockError passes unchanged: its report already
// names every rank's op and location, and every rank throws the same one.
// The rank is said by whoever prints the error (the launcher: "rank 1: ...").
[[noreturn]] void rethrow_at(const OpSite& site);

// The innermost site in scope on this thread, nullptr outside any op.
const OpSite* current_op_site();

class OpSiteScope {
 public:
  explicit OpSiteScope(const OpSite& site);
  ~OpSiteScope();
  OpSiteScope(const OpSiteScope&) = delete;
  OpSiteScope& operator=(const OpSiteScope&) = delete;
  // Whether an op was already running when this one started (an op that
  // dispatches ops: only the outermost adds its context to an error).
  bool nested() const { return prev_ != nullptr; }

 private:
  const OpSite* prev_;
};

}  // namespace symmflow
