// Compiles the precompiled header the tests reuse (tests/CMakeLists.txt, XTRACE_TESTS_PCH).
