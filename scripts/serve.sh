#!/usr/bin/env bash
# Installs whatever is missing, then builds and serves Tunelab on http://127.0.0.1:8080/ .
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
PORT="${PORT:-8080}"
echo "Tunelab: building, then serving at http://127.0.0.1:$PORT/ (Ctrl-C to stop)"
exec trunk serve --release --offline --address 127.0.0.1 --port "$PORT"
