#!/usr/bin/env bash
# Installs what building flatrt needs on Debian 12 (as root, or with sudo): the compiler, CMake,
# OpenBLAS, oneDNN (libdnnl-dev: the optional oneDNN provider, docs/dependencies.md) and the Python
# binding's headers (python3-dev, python3-numpy); with --test also what the test suite needs
# (Debian's onnx, torch, torchvision, sklearn for exporting the model zoo, pytest for the binding,
# pkg-config for the install test); with --fuzz clang and its runtimes for the libFuzzer targets;
# with --valgrind valgrind (scripts/valgrind.sh). Safe to run again: it installs only what is missing.
set -euo pipefail
pkgs=(build-essential cmake libopenblas-dev libdnnl-dev python3-dev python3-numpy)
for arg in "$@"; do
  case "$arg" in
    --test) pkgs+=(python3 python3-numpy python3-onnx python3-torch python3-torchvision
                   python3-sklearn python3-pytest pkg-config) ;;
    --fuzz) pkgs+=(clang libclang-rt-14-dev) ;;
    --valgrind) pkgs+=(valgrind) ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
