// Every autograd op in one include.
#pragma once
#include "autograd/attention.hpp"
#include "autograd/elementwise.hpp"
#include "autograd/linear.hpp"
#include "autograd/matmul.hpp"
#include "autograd/nn_ops.hpp"
#include "autograd/reduce.hpp"
#include "autograd/shape_ops.hpp"
#include "autograd/tape.hpp"
#include "autograd/var.hpp"
