#!/usr/bin/env bash
# Install what building and checking Palisade needs on a fresh Debian 12 machine. Idempotent.
#
# The host crate needs cargo and a C compiler (wasmtime builds a little C). The guest (guest-js/, QuickJS compiled to wasm32-wasip2)
# also needs Debian's clang-22 and wasi-libc headers (rquickjs-sys builds QuickJS with them, see
# .cargo/config.toml), libclang for javy's bindgen, Binaryen's wasm-opt (xtask optimizes the
# guest with it), and the wasm32-wasip2 Rust target.
set -euo pipefail

packages=(make time gcc libc6-dev clang-22 llvm-22 wasi-libc libclang-22-dev binaryen)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! rustup target list --installed | grep -qx wasm32-wasip2; then
  echo "setup: adding the wasm32-wasip2 Rust target"
  rustup target add wasm32-wasip2
fi
for component in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$component"; then
    echo "setup: adding $component"
    rustup component add "$component"
  fi
done
echo "setup: ready"
