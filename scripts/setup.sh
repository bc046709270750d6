#!/usr/bin/env bash
# Installs what xtrace's build needs on a Debian 12 machine, only what is missing.
# Sourced by demo.sh and test.sh.
set -euo pipefail

xtrace_packages=(cmake ninja-build g++ xtensor-dev libxsimd-dev libboost-dev catch2)

xtrace_install_missing() {
    local missing=()
    for p in "${xtrace_packages[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}
