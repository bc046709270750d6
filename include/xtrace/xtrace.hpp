#ifndef XTRACE_XTRACE_HPP
#define XTRACE_XTRACE_HPP

/// xtrace: tf.function for C++ tensor code. Include this one header.

#include "autodiff/gradients.hpp"
#include "config.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/shape.hpp"
#include "core/spec.hpp"
#include "function/options.hpp"
#include "function/run_eagerly.hpp"
#include "function/traced_function.hpp"
#include "inspect/inspect.hpp"
#include "ops/composite.hpp"
#include "ops/cond.hpp"
#include "ops/elementwise.hpp"
#include "ops/erase.hpp"
#include "ops/host_function.hpp"
#include "ops/matmul.hpp"
#include "ops/print.hpp"
#include "ops/reduce.hpp"
#include "ops/scan.hpp"
#include "ops/shape.hpp"
#include "ops/switch_case.hpp"
#include "ops/variable.hpp"
#include "ops/while_loop.hpp"

#endif
