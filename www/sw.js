// Tunelab's service worker: the app works offline and can be installed.
//
// Versioned: at build time www/sw-stamp.sh replaces the two placeholders below with the build's
// file list and a hash of it, so each build is a new service worker. The new one precaches its
// files, takes over, and deletes the caches of older builds ("a new build replaces the old").
const VERSION = '__TUNELAB_VERSION__';
const FILES = __TUNELAB_FILES__;
const CACHE = 'tunelab-' + VERSION;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches.open(CACHE)
      .then((c) => c.addAll(['./', ...FILES]))
      .then(() => self.skipWaiting())
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('tunelab-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim())
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== self.location.origin) return;
  if (req.mode === 'navigate') {
    // The page: fresh from the network when there is one, else this build's cached copy.
    event.respondWith(
      fetch(req)
        .then((resp) => {
          const copy = resp.clone();
          caches.open(CACHE).then((c) => c.put('./', copy));
          return resp;
        })
        .catch(() => caches.match('./', { cacheName: CACHE }).then((r) => r || caches.match(req)))
    );
    return;
  }
  // Build files (hashed names) and assets fetched on demand (Kernel Tuner caches): the cache
  // first, then the network, keeping what came back.
  event.respondWith(
    caches.match(req, { ignoreSearch: true }).then((hit) => hit || fetch(req).then((resp) => {
      if (resp.ok) {
        const copy = resp.clone();
        caches.open(CACHE).then((c) => c.put(req, copy));
      }
      return resp;
    }))
  );
});
