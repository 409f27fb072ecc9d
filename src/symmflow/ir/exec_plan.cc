#include "symmflow/ir/exec_plan.h"

namespace symmflow::ir {

std::string_view origin_name(CopyOrigin o) {
  switch (o) {
    case CopyOrigin::input_to_symmetric: return "inputs_to_symmetric";
    case CopyOrigin::output_from_symmetric: return "outputs_from_symmetric";
    case CopyOrigin::staged: return "staged";
    case CopyOrigin::reinplace: return "reinplace";
  }
  return "?";
}

}  // namespace symmflow::ir
