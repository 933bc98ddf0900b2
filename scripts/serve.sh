#!/usr/bin/env bash
# Installs whatever is missing, builds the release page once (trunk build --release --offline),
# then serves dist/ with a plain static server bound to 127.0.0.1 and prints the address.
#
# Serving does not depend on a file watcher: on a fresh clone `trunk serve`'s watcher could
# panic after the build and exit without serving (issue 13 #12). For development with
# rebuild-on-save, run `trunk serve --release --offline --address 127.0.0.1` yourself.
#
#   PORT=9000 ./scripts/serve.sh            another port (default 8080)
#   TUNELAB_SKIP_BUILD=1 ./scripts/serve.sh serve the dist/ already built (e.g. by test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8080}"
DIST="${TUNELAB_DIST:-dist}"
if [ "${TUNELAB_SKIP_BUILD:-0}" != 1 ]; then
  ./scripts/setup.sh
  export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
  echo "Tunelab: building the release page (trunk build --release --offline)"
  trunk build --release --offline
fi
if [ ! -f "$DIST/index.html" ]; then
  echo "error: $DIST/index.html not found: build the page first (run without TUNELAB_SKIP_BUILD)" >&2
  exit 2
fi
echo "Tunelab: serving $DIST at http://127.0.0.1:$PORT/ (Ctrl-C to stop)"
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$DIST"
