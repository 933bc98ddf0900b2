#!/usr/bin/env bash
# Installs whatever Tunelab's build and tests need and is missing; seconds when all is present.
# Everything comes from the package registries (crates.io, npm, Debian) or rustup.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# Tools cargo installs land here; look for them there even if the shell's PATH lacks it.
export PATH="$HOME/.cargo/bin:$PATH"

TRUNK_VERSION=0.21.14
BINARYEN_VERSION=132
note() { echo "setup: $*" >&2; }

# 1. The wasm target.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  note "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# 2. Trunk at the pinned version.
if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
  note "installing trunk $TRUNK_VERSION (once; about 15 minutes on 2 cores)"
  cargo install --locked "trunk@$TRUNK_VERSION"
fi

# 3. wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock.
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$WB_VERSION" ]; then
  echo "setup: cannot find wasm-bindgen in Cargo.lock" >&2
  exit 1
fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WB_VERSION" ] \
  || [ "$(wasm-bindgen-test-runner --version 2>/dev/null || true)" != "wasm-bindgen-test-runner $WB_VERSION" ]; then
  note "installing wasm-bindgen-cli $WB_VERSION (once; a few minutes)"
  # No --locked: one locked dependency of the CLI is missing from the registry.
  cargo install wasm-bindgen-cli --version "$WB_VERSION" --force
fi

# 4. Chromium and its driver from Debian (headless browser tests).
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  note "installing chromium and chromium-driver from Debian"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium chromium-driver
fi

# 5. Node packages: binaryen's wasm-opt (never Debian's old one) and playwright-core (no browser
#    download; it drives /usr/bin/chromium).
if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] \
  || ! grep -q "\"version\": \"$BINARYEN_VERSION" node_modules/binaryen/package.json 2>/dev/null; then
  note "installing node packages (binaryen $BINARYEN_VERSION, playwright-core)"
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi
fi
