// symmflow: distributed tensor programs with in-place collectives, point-to-point
// and symmetric memory as first-class citizens. One include for users:
//
//   #include <symmflow/symmflow.h>
//   namespace sf = symmflow;
//
//   int main() {
//     sf::dist::init();                                  // from `symmflow launch`'s environment
//     auto x = sf::symm::empty({1 << 20}, sf::DType::f32); // symmetric: same offset on every rank
//     sf::kernels::fill_(x, sf::dist::world().rank() + 1);
//     sf::dist::all_reduce_(x);                          // sum over ranks, in place, zero copy
//   }
//
//   $ symmflow launch --nproc 2 -- ./my_program
//
// A function written once runs eagerly or compiled (traced on first call,
// replayed after), bitwise equal:
//
//   sf::Tensor step(sf::Tensor x, sf::Tensor y) { return x * 2 + y; }
//   auto fast = sf::compile(step);
//   auto a = step(x, y), b = fast(x, y);
#pragma once

#include "symmflow/core/ivalue.h"
#include "symmflow/core/scalar.h"
#include "symmflow/core/tensor.h"
#include "symmflow/frontend/compile.h"
#include "symmflow/frontend/dist_api.h"
#include "symmflow/frontend/tensor_api.h"
#include "symmflow/kernels/copy.h"
#include "symmflow/kernels/factories.h"
#include "symmflow/kernels/matmul.h"
#include "symmflow/kernels/pointwise.h"
#include "symmflow/kernels/reduce.h"
#include "symmflow/kernels/views.h"
#include "symmflow/runtime/collectives/collectives.h"
#include "symmflow/runtime/copy_stats.h"
#include "symmflow/runtime/p2p/p2p.h"
#include "symmflow/runtime/symm.h"
#include "symmflow/runtime/world.h"
