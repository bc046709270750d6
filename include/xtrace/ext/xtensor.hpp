#ifndef XTRACE_EXT_XTENSOR_HPP
#define XTRACE_EXT_XTENSOR_HPP

// The one place that knows where xtensor keeps its headers: flat in 0.24/0.25, in role folders
// from 0.26 on.

#if __has_include(<xtensor/containers/xarray.hpp>)
#include <xtensor/containers/xadapt.hpp>
#include <xtensor/containers/xarray.hpp>
#include <xtensor/core/xmath.hpp>
#include <xtensor/core/xoperation.hpp>
#include <xtensor/core/xvectorize.hpp>
#include <xtensor/io/xio.hpp>
#include <xtensor/views/xstrided_view.hpp>
#else
#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xvectorize.hpp>
#endif

#endif
