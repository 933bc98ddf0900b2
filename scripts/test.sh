#!/usr/bin/env bash
# Installs whatever is missing, then runs every test: native workspace tests, the wasm tests
# (golden trace under Node, components in headless Chromium), a release build of the page, its
# size, and the end-to-end tests in headless Chromium. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bash ./scripts/setup.sh
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_TARGET_DIR="$TARGET"
# A clean clone (CI) gains nothing from incremental caches and they double target/debug on disk.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
step() { echo; echo "=== $* ==="; }

step "native tests (cargo test --workspace; the fuzz smoke test runs in the next step)"
cargo test --workspace --no-fail-fast -- --skip fuzz_smoke_

step "fuzz smoke: the fuzz/ targets on seeds + deterministic mutations (stable; long run: fuzz/README.md)"
cargo test -p tunelab-scenario --test fuzz_smoke -- --nocapture

step "wasm tests: golden trace under Node, components in headless Chromium"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner CHROMEDRIVER=/usr/bin/chromedriver \
  cargo test --no-fail-fast --target wasm32-unknown-unknown -p tunelab --test golden_trace --test components

step "device-model speed: native vs wasm under Node (figures to read, never a pass/fail threshold)"
cargo test -p tunelab --test wasm_bench -- --nocapture
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown -p tunelab --test wasm_bench -- --nocapture

step "release build of the page (trunk build --release --offline)"
trunk build --release --offline

step "size of the page (gzip -9 of .wasm + .js; budgets: first load 1 MiB, total 2.5 MiB)"
node tests/e2e/size.mjs dist

step "release CLI for the end-to-end comparison (tunelab run --json)"
cargo build --release -p tunelab-cli
export TUNELAB_CLI="$TARGET/release/tunelab"

step "serve dist/ for the browser checks"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory dist >/tmp/tunelab-e2e-http.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.1; done
step "first load, total and first render (cold cache, this server)"
node tests/e2e/size.mjs dist "http://127.0.0.1:$PORT/"
step "end-to-end tests (node --test tests/e2e/)"
TUNELAB_URL="http://127.0.0.1:$PORT/" node --test --test-concurrency=1 tests/e2e/
