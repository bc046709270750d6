#!/usr/bin/env bash
# Installs what is missing, builds examples/quickstart and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
xtrace_install_missing

cmake -S . -B build/demo -G Ninja -DCMAKE_BUILD_TYPE=Release -DXTRACE_BUILD_TESTS=OFF >/dev/null
cmake --build build/demo --target quickstart
./build/demo/examples/quickstart
