// The field form's service worker (served as /field/sw.js, scope /field/; in a coalition
// /t/<town>/field/). It keeps a copy of the form's page, its script and style, and the
// server's list of what the form asks (/api/v1/field/form), and answers them from that copy
// when the network does not answer (no signal, or none within a few seconds). Each is asked
// of the network first, so a phone with signal always gets the server's newest. Records are
// never sent through here: the page queues them in IndexedDB and sends them itself.
"use strict";
var CACHE = "ms4watch-field-v1";
var SCOPE = self.registration.scope;                         // http://host[/t/town]/field/
var BASE = new URL(SCOPE).pathname.replace(/\/field\/$/, "");
var PAGE = new URL(SCOPE).pathname;
var KEPT = [PAGE, BASE + "/api/v1/field/form", PAGE + "manifest.webmanifest", "/static/app.css", "/static/app.js",
            "/static/field.css", "/static/field.js", "/static/icon.svg", "/static/field-icon-192.png"];
var PATIENCE_MS = 4000;

self.addEventListener("install", function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    return Promise.all(KEPT.map(function (path) {
      return fetch(path, {credentials: "same-origin", cache: "no-store"}).then(function (res) {
        if (!res.ok || res.redirected) throw new Error(path + ": HTTP " + res.status);
        return cache.put(path, res);
      });
    }));
  }).then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k.indexOf("ms4watch-field-") === 0 && k !== CACHE; })
      .map(function (k) { return caches.delete(k); }));
  }).then(function () { return self.clients.claim(); }));
});

function kept(request) {
  if (request.method !== "GET") return null;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return null;
  if (request.mode === "navigate" && url.pathname === PAGE) return PAGE;
  return KEPT.indexOf(url.pathname) >= 0 && url.pathname !== PAGE ? url.pathname : null;
}

function networkFirst(request, path) {
  return caches.open(CACHE).then(function (cache) {
    var fromNetwork = fetch(request).then(function (res) {
      if (res.ok && !res.redirected && res.type === "basic") cache.put(path, res.clone());
      return res;
    });
    var late = new Promise(function (resolve) { setTimeout(resolve, PATIENCE_MS, null); });
    return Promise.race([fromNetwork.catch(function () { return null; }), late]).then(function (res) {
      if (res) return res;
      return cache.match(path).then(function (copy) { return copy || fromNetwork; });
    });
  });
}

self.addEventListener("fetch", function (event) {
  var path = kept(event.request);
  if (path) event.respondWith(networkFirst(event.request, path));
});
