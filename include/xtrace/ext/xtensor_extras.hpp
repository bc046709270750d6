#ifndef XTRACE_EXT_XTENSOR_EXTRAS_HPP
#define XTRACE_EXT_XTENSOR_EXTRAS_HPP

// xtensor's views, builders, fixed-size containers, reducers, sorting and noalias, wherever the
// installed release keeps them (flat in 0.24/0.25, role folders from 0.26 on). xtrace needs none
// of these; the examples, tests and benchmarks include them from here, and so may programs that
// should build against either layout.

#include "xtensor.hpp"

#if __has_include(<xtensor/containers/xarray.hpp>)
#include <xtensor/containers/xfixed.hpp>
#include <xtensor/containers/xtensor.hpp>
#include <xtensor/core/xnoalias.hpp>
#include <xtensor/generators/xbuilder.hpp>
#include <xtensor/misc/xmanipulation.hpp>
#include <xtensor/misc/xsort.hpp>
#include <xtensor/reducers/xreducer.hpp>
#include <xtensor/views/xview.hpp>
#else
#include <xtensor/xbuilder.hpp>
#include <xtensor/xfixed.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>
#endif

#endif
