#!/usr/bin/env bash
# Installs what is missing, builds every test and example, and runs them with ctest.
# Idempotent: re-uses build/ci when it exists.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
xtrace_install_missing

cmake --preset ci >/dev/null
cmake --build --preset ci -j "$(nproc)"
ctest --preset ci -j "$(nproc)"
