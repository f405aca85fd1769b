// The check lists of the fused kernels, shared by the test suite and `liegrad gradcheck`:
//   kernel_op_checks         each fused op's derivative against central differences
//                            (check_vjp, double), at sizes that exercise its chunking;
//   kernel_reference_checks  each fused op against its unfused reference
//                            (kernels/reference.hpp), forward and backward, in double,
//                            on several groups including U(d) and products.
#pragma once
#include <vector>

#include "autograd/gradcheck.hpp"

namespace liegrad::kernels {

std::vector<ag::OpCheck> kernel_op_checks();
std::vector<ag::EquivalenceCheck> kernel_reference_checks();

}  // namespace liegrad::kernels
