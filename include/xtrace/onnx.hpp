#ifndef XTRACE_ONNX_HPP
#define XTRACE_ONNX_HPP

// The optional ONNX component: export traced graphs as ONNX models, load ONNX models to run on
// xtrace's planner and interpreter. Link xtrace::onnx (find_package(xtrace COMPONENTS onnx)).

#include "onnx/export.hpp"
#include "onnx/model.hpp"

#endif
