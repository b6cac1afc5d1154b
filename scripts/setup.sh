#!/usr/bin/env bash
# Install what building and checking Palisade needs on a fresh Debian 12 machine. Idempotent.
#
# The host crate needs cargo and a C compiler (wasmtime builds a little C); the fuzz crate,
# which `make lint` checks, builds libFuzzer, which is C++. The guest (guest-js/, QuickJS compiled to wasm32-wasip2)
# also needs Debian's clang-22 and wasi-libc headers (rquickjs-sys builds QuickJS with them, see
# .cargo/config.toml), Debian's libc++ for wasm32 (the guest's URL parser, ada, is C++; see
# guest-js/wasi-sdk), libclang for javy's bindgen, Binaryen's wasm-opt (xtask optimizes the
# guest with it), and the wasm32-wasip2 Rust target. The replica tests start Debian's
# redis-server (tests/tests/integration/replicas.rs) on a loopback port of their own. The
# page's browser test (`make page`) drives Debian's chromium, headless.
set -euo pipefail
cd "$(dirname "$0")/.."

# Root installs as itself; anyone else through sudo.
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

packages=(make time gcc g++ libc6-dev clang-22 llvm-22 wasi-libc libc++-22-dev-wasm32 libc++abi-22-dev-wasm32 libclang-22-dev binaryen iproute2 python3 python3-venv redis-server chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
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

# The stock wasmtime CLI, which the standalone tests run (tests/tests/integration/standalone.rs):
# a component built by `palisade build` must run under it with no Palisade on the machine. Only
# the features those tests use; about 13 minutes of building on a busy 2-core machine, once
# (cargo installs it into ~/.cargo/bin).
WASMTIME_VERSION=48.0.8
if ! wasmtime --version 2>/dev/null | grep -qx "wasmtime $WASMTIME_VERSION"; then
  echo "setup: installing wasmtime-cli $WASMTIME_VERSION (the stock CLI)"
  cargo install --locked "wasmtime-cli@$WASMTIME_VERSION" --no-default-features \
    --features run,serve,cranelift,component-model,component-model-async,wasi-http,wasi-config,wasi-keyvalue,parallel-compilation,pooling-allocator
fi
# The bindings (bindings/node, bindings/python) and the page: Node.js 24 (the LTS line the
# bindings are tested and measured on) or later, with npm. Where there is none, or an older one
# (Debian 12's nodejs is 18), Node.js 24 and npm come from the npm registry, checked by npm
# against the registry's checksums (the node-linux-<arch> package holds the official build), and
# link into /usr/local/bin, ahead of /usr/bin on Debian's PATH; an npm fetches them (Debian's,
# where there is none). npm comes too: an npm linked to an older node cannot run under another
# one (its modules are found through its own node's paths).
NODE_MAJOR=24
NODE_VERSION=24.22.3
NPM_VERSION=11.19.1
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(node_major)" -lt "$NODE_MAJOR" ]; then
  if ! command -v npm >/dev/null; then
    echo "setup: installing nodejs and npm"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null
  fi
  case "$(uname -m)" in
    x86_64) node_arch=x64 ;;
    aarch64) node_arch=arm64 ;;
    *) echo "setup: no Node.js $NODE_VERSION package for $(uname -m)" >&2; exit 1 ;;
  esac
  # Only a node that npm put there itself is replaced.
  prefix=/usr/local
  ours="$prefix/lib/node_modules/node-linux-$node_arch/bin/node"
  if [ -e "$prefix/bin/node" ] && [ "$(readlink -f "$prefix/bin/node")" != "$ours" ]; then
    echo "setup: $prefix/bin/node is Node.js $("$prefix/bin/node" --version 2>/dev/null), older than $NODE_MAJOR and not" \
      "npm's; install Node.js $NODE_MAJOR or later there (or remove it), then run this again" >&2
    exit 1
  fi
  echo "setup: installing Node.js $NODE_VERSION and npm $NPM_VERSION from the npm registry into $prefix"
  $sudo npm install -g --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "node-linux-$node_arch@$NODE_VERSION" "npm@$NPM_VERSION"
  hash -r
fi
if [ "$(node_major)" -lt "$NODE_MAJOR" ] || ! npm --version >/dev/null 2>&1; then
  echo "setup: bindings/node needs Node.js $NODE_MAJOR or later and its npm; found node" \
    "$(node --version 2>/dev/null || echo none) at $(command -v node || echo nowhere)" \
    "(is /usr/local/bin ahead of /usr/bin on PATH?)" >&2
  exit 1
fi
# The addon's check tools (typescript, @types/node), pinned by its package-lock.json.
node_lock=bindings/node/package-lock.json
if ! cmp -s "$node_lock" bindings/node/node_modules/.installed-lock.json 2>/dev/null; then
  echo "setup: installing bindings/node's development packages"
  (cd bindings/node && npm ci --no-audit --no-fund --loglevel=error)
  cp "$node_lock" bindings/node/node_modules/.installed-lock.json
fi
# The page's build and browser test (web/: CodeMirror, esbuild, puppeteer-core), pinned by its
# package-lock.json; puppeteer-core downloads no browser (the test names Debian's chromium).
web_lock=web/package-lock.json
if ! cmp -s "$web_lock" web/node_modules/.installed-lock.json 2>/dev/null; then
  echo "setup: installing web's npm packages"
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
  cp "$web_lock" web/node_modules/.installed-lock.json
fi
# maturin, pytest and mypy for the Python module, in a virtual environment under target/.
venv=target/python-venv
requirements=bindings/python/requirements-dev.txt
if ! cmp -s "$requirements" "$venv/requirements-dev.txt" 2>/dev/null; then
  echo "setup: installing $requirements into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$requirements"
  cp "$requirements" "$venv/requirements-dev.txt"
fi
# The MCP client of tests/tests/integration/mcp.rs (the official Python SDK), pinned by
# tests/mcp/requirements.txt, in the same virtual environment.
mcp_requirements=tests/mcp/requirements.txt
if ! cmp -s "$mcp_requirements" "$venv/mcp-requirements.txt" 2>/dev/null; then
  echo "setup: installing $mcp_requirements into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$mcp_requirements"
  cp "$mcp_requirements" "$venv/mcp-requirements.txt"
fi
# The OpenAPI checks (tests/tests/integration/serve_openapi.rs): a validator from PyPI (in the
# same virtual environment), and a generator and TypeScript from npm, pinned by
# tests/openapi/package-lock.json.
openapi_validator=0.9.0
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('openapi-spec-validator') != '$openapi_validator')" 2>/dev/null; then
  echo "setup: installing openapi-spec-validator $openapi_validator into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "openapi-spec-validator==$openapi_validator"
fi
if [ ! -x tests/openapi/node_modules/.bin/openapi-typescript ] || [ tests/openapi/package-lock.json -nt tests/openapi/node_modules ]; then
  echo "setup: installing tests/openapi's npm packages"
  npm ci --prefix tests/openapi --no-audit --no-fund --silent
fi
echo "setup: ready"
