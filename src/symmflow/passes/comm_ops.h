// The passes' names for ir/comm_ops.h (the op classes every layer shares).
#pragma once
#include "symmflow/ir/comm_ops.h"

namespace symmflow::passes {

using ir::async_pairs;
using ir::AsyncPairs;
using ir::comm_kind;
using ir::CommKind;
using ir::group_of;
using ir::is_builtin_op;
using ir::is_pure_view;
using ir::issues_comm;

}  // namespace symmflow::passes
