#ifndef XTRACE_TESTS_SUPPORT_CATCH_HPP
#define XTRACE_TESTS_SUPPORT_CATCH_HPP

// Catch2 2.x (Debian 12) and 3.x keep their macros in different headers.
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#else
#include <catch2/catch.hpp>
#endif

#endif
