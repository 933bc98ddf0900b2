#!/bin/sh
# Trunk post-build hook: writes this build's file list and version into the service worker, so
# a new build is a new service worker that replaces the old one's cache (see www/sw.js).
set -eu
dir="${TRUNK_STAGING_DIR:?run by trunk as a post_build hook}"
cd "$dir"
# Kernel Tuner caches (megabytes) are not precached: the worker keeps each one the first time
# the page fetches it, so a replayed cache works offline from then on.
files=$(find . -type f ! -name sw.js ! -name '*.map' ! -path './kernel-tuner/*' | sed 's|^\./||' | LC_ALL=C sort)
# The version covers every file, those caches included (a new cache file is a new worker).
all=$(find . -type f ! -name sw.js ! -name '*.map' | sed 's|^\./||' | LC_ALL=C sort)
version=$(for f in $all; do printf '%s\n' "$f"; cksum "$f"; done | cksum | cut -d' ' -f1)
list=$(printf '%s\n' $files | sed 's|.*|"./&"|' | paste -sd, -)
sed -e "s|__TUNELAB_VERSION__|$version|" -e "s|__TUNELAB_FILES__|[$list]|" sw.js > sw.js.tmp
mv sw.js.tmp sw.js
