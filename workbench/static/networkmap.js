/* The storm-sewer map (/network/map), drawn with the vendored Leaflet 1.9.4 (static/vendor/leaflet).
   The page carries what changes per request (script#netmap-data: outfall status, a case's trace,
   stations and sites, the bounds); the network comes from data.network (parallel arrays in
   WGS 84, workbench/networkmap.py), fetched once per import and revalidated by its ETag.

   The whole network is drawn by one canvas renderer in a few batched paths (all ordinary pipes
   in one stroke, structures one fill per colour), not one Leaflet layer per feature: 10,000
   circle markers and polylines cost about a second to build on a phone. NetCanvas is Leaflet's
   own L.Canvas (so panning, pinch and zoom animation are Leaflet's) with its _draw extended:
   it relies on that internal method of the vendored 1.9.4. A tap is found by distance, topmost
   first, and opens one popup. No tile server unless the settings name one (data-tiles). */
(function () {
  "use strict";
  var el = document.getElementById("netmap");
  var src = document.getElementById("netmap-data");
  if (!el || !src || typeof L === "undefined") { return; }
  var page = JSON.parse(src.textContent);
  var base = el.dataset.base || "";
  var COLOURS = {
    pipe: "#5f6b76", suspect: "#b3261e", present: "#b3261e", absent: "#0b5394", next: "#c25e00",
    outfall: "#1b1f24", monitored: "#1a7f37", "case": "#b3261e", structure: "#7a8793", site: "#8a5a00",
    reporting: "#1a7f37", alerting: "#b3261e", stale: "#6e4aa8", "not-evaluable": "#9a6700",
    "calibration-overdue": "#c25e00", active: "#8a5a00", inactive: "#b9a27a"
  };
  var TOLERANCE = 6;     // px around a feature that a tap still takes
  var map = L.map(el, { preferCanvas: true, zoomSnap: 0.5, maxZoom: 22 });
  el.leafletMap = map;      // for the browser tests (a tap where a feature is)
  if (el.dataset.tiles) {
    L.tileLayer(el.dataset.tiles, { maxZoom: 22, maxNativeZoom: 19, attribution: el.dataset.attribution || "" }).addTo(map);
  } else {
    el.classList.add("no-tiles");
  }
  if (page.bounds) {
    var b = page.bounds;
    map.fitBounds([[b[0], b[1]], [b[2], b[3]]], { padding: [24, 24], maxZoom: 19 });
  } else {
    map.setView([42.8, -73.9], 11);
  }
  L.control.scale({ imperial: true, metric: true }).addTo(map);

  function esc(s) {
    return String(s === null || s === undefined ? "" : s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // -- the features, in drawing order: each group is drawn over the one before ---------------------
  // a point: {x, y (projected at zoom 0), r, fill, line, weight, info}; a pipe: {xy (flat, zoom 0), info}
  var pipes = [], suspectPipes = [], points = [[], [], [], []];   // structures, outfalls, marked, places
  var counts = { pipe: 0, suspect: 0, structure: 0, station: 0, site: 0 };
  // Leaflet's EPSG:3857 at zoom 0 (L.CRS.EPSG3857.latLngToPoint(latlng, 0), checked below), without
  // its objects per point: x = 256 (1/2 + lon/360), y = 256 (1/2 - ln tan(pi/4 + lat/2) / 2 pi)
  var MAX_LAT = L.Projection.SphericalMercator.MAX_LATITUDE, RAD = Math.PI / 180;
  function zoom0(lat, lon) {
    lat = Math.max(Math.min(MAX_LAT, lat), -MAX_LAT);
    return [256 * (0.5 + lon / 360), 256 * (0.5 - Math.log(Math.tan(Math.PI / 4 + lat * RAD / 2)) / (2 * Math.PI))];
  }

  function addNetwork(net) {
    var st = net.structures, pp = net.pipes, i, k;
    var suspect = {}, visits = page.trace.visits, next = page.trace.next;
    page.trace.suspect.forEach(function (id) { suspect[id] = true; });
    var monitored = {}, withCase = {};
    page.outfalls.monitored.forEach(function (id) { monitored[id] = true; });
    page.outfalls["case"].forEach(function (id) { withCase[id] = true; });
    for (i = 0; i < pp.id.length; i++) {
      var c = pp.coords[i], xy = new Array(c.length);
      for (k = 0; k < c.length; k += 2) { var q = zoom0(c[k + 1], c[k]); xy[k] = q[0]; xy[k + 1] = q[1]; }
      var pipe = { xy: xy, i: i, suspect: !!suspect[pp.id[i]] };
      (pipe.suspect ? suspectPipes : pipes).push(pipe);
      counts.pipe += 1;
      if (pipe.suspect) { counts.suspect += 1; }
    }
    for (i = 0; i < st.id.length; i++) {
      var id = st.id[i], kind = st.kinds[st.kind[i]], status = kind, group = 0;
      var p = zoom0(st.lat[i], st.lon[i]);
      var pt = { x: p[0], y: p[1], r: 4, fill: null, line: "#fff", weight: 1, i: i, layer: "structure" };
      if (kind === "outfall") {
        status = withCase[id] ? "case" : monitored[id] ? "monitored" : "outfall";
        pt.r = 8;
        group = 1;
      }
      pt.status = status;
      pt.fill = COLOURS[status] || COLOURS.structure;
      if (visits[id]) { pt.fill = COLOURS[visits[id]]; pt.r = 7; pt.visit = visits[id]; group = 2; }
      if (id === next) { pt.line = COLOURS.next; pt.weight = 4; pt.r = 9; pt.next = true; group = 2; }
      points[group].push(pt);
      counts.structure += 1;
    }
  }
  page.places.forEach(function (p) {
    var q = zoom0(p.lat, p.lon), station = p.layer === "station";
    points[3].push({ x: q[0], y: q[1], r: 7, line: station ? "#1b1f24" : "#fff", weight: 1, place: p, layer: p.layer,
                     fill: COLOURS[p.status] || (station ? COLOURS.reporting : COLOURS.site) });
    counts[p.layer] += 1;
  });

  // -- drawing ---------------------------------------------------------------------------------------
  function strokePipes(ctx, list, scale, o, colour, weight, alpha) {
    if (!list.length) { return; }
    ctx.beginPath();
    for (var j = 0; j < list.length; j++) {
      var xy = list[j].xy;
      ctx.moveTo(xy[0] * scale - o.x, xy[1] * scale - o.y);
      for (var k = 2; k < xy.length; k += 2) { ctx.lineTo(xy[k] * scale - o.x, xy[k + 1] * scale - o.y); }
    }
    ctx.globalAlpha = alpha; ctx.strokeStyle = colour; ctx.lineWidth = weight;
    ctx.lineCap = "round"; ctx.lineJoin = "round";
    ctx.stroke();
    ctx.globalAlpha = 1;
  }
  // a circle of each style drawn once, at the screen's resolution, then stamped: Skia rasterises
  // thousands of small images far faster than one path of thousands of arcs (10,000 points:
  // about 10 ms against 500 ms in Chromium)
  var sprites = {}, DPR = window.devicePixelRatio || 1;
  function sprite(p) {
    var key = p.fill + p.line + p.weight + "/" + p.r, s = sprites[key];
    if (!s) {
      var half = p.r + p.weight, c = document.createElement("canvas"), x = c.getContext("2d");
      c.width = c.height = Math.ceil(2 * half * DPR);
      x.scale(DPR, DPR);
      x.beginPath(); x.arc(half, half, p.r, 0, 2 * Math.PI);
      x.globalAlpha = 0.95; x.fillStyle = p.fill; x.fill();
      x.globalAlpha = 1; x.strokeStyle = p.line; x.lineWidth = p.weight; x.stroke();
      s = sprites[key] = { canvas: c, half: half };
    }
    return s;
  }
  // Manholes, catch basins and inlets are drawn once at most PLAIN_MAX of them are on the screen:
  // a whole town's at a phone's width is a blot that hides its pipes and costs a tenth of a second
  // to stamp. Outfalls, the structures of a trace, stations and sites are always drawn.
  var PLAIN_MAX = 2000, plainShown = true;
  function inView(list, scale, o, view) {
    var n = 0;
    for (var j = 0; j < list.length; j++) {
      var x = list[j].x * scale - o.x, y = list[j].y * scale - o.y;
      if (x >= view.min.x && x <= view.max.x && y >= view.min.y && y <= view.max.y) { n += 1; }
    }
    return n;
  }
  function fillPoints(ctx, list, scale, o, view) {
    for (var j = 0; j < list.length; j++) {          // off-screen points left out
      var p = list[j], x = p.x * scale - o.x, y = p.y * scale - o.y, s = sprite(p), h = s.half;
      if (x < view.min.x - h || x > view.max.x + h || y < view.min.y - h || y > view.max.y + h) { continue; }
      ctx.drawImage(s.canvas, x - h, y - h, 2 * h, 2 * h);
    }
  }
  var NetCanvas = L.Canvas.extend({
    _draw: function () {
      var ctx = this._ctx, m = this._map, rb = this._redrawBounds;
      if (m) {
        var scale = m.getZoomScale(m.getZoom(), 0), o = m.getPixelOrigin(), view = rb || this._bounds;
        ctx.save();
        if (rb) { var sz = rb.getSize(); ctx.beginPath(); ctx.rect(rb.min.x, rb.min.y, sz.x, sz.y); ctx.clip(); }
                strokePipes(ctx, pipes, scale, o, COLOURS.pipe, 2, 0.8);
        strokePipes(ctx, suspectPipes, scale, o, COLOURS.suspect, 6, 0.9);
        plainShown = inView(points[0], scale, o, view) <= PLAIN_MAX;
        points.forEach(function (group, g) { if (g > 0 || plainShown) { fillPoints(ctx, group, scale, o, view); } });
        ctx.restore();
      }
      L.Canvas.prototype._draw.call(this);
    }
  });
  var renderer = new NetCanvas({ padding: 0.5 });
  map.on("zoomend moveend", function () { el.dataset.plainShown = plainShown ? "1" : "0"; });
  map.addLayer(renderer);

  // -- a tap: the topmost feature within reach ---------------------------------------------------------
  function popupOf(f) {
    var lines, net = f.net;
    if (f.pipe) {
      var pp = net.pipes, i = f.pipe.i, d = pp.diameter_in[i], len = pp.length_ft[i];
      lines = ["<b>" + esc(pp.id[i]) + "</b>",
               esc(pp.kinds[pp.kind[i]]) + (d ? ", " + esc(Math.round(d)) + " in" : "") +
               (len ? ", " + esc(Math.round(len)) + " ft" : ""),
               esc(pp.from[i]) + " \u2192 " + esc(pp.to[i])];
      if (f.pipe.suspect) { lines.push("<b>suspect</b>"); }
      return lines.join("<br>");
    }
    var p = f.point;
    if (p.place) {
      lines = ["<b>" + esc(p.place.id) + "</b>", esc(p.place.name) + " (" + esc(p.place.status.replace("-", " ")) + ")"];
      if (p.place.note) { lines.push(esc(p.place.note)); }
      lines.push('<a href="' + base + esc(p.place.href) + '">open</a>');
      return lines.join("<br>");
    }
    var st = net.structures, id = st.id[p.i], water = st.receiving_water[id];
    lines = ["<b>" + esc(id) + "</b>", esc(p.status.replace("_", " ")) + (water ? " \u2192 " + esc(water) : "")];
    if (p.visit) { lines.push("visited: flow " + esc(p.visit)); }
    if (p.next) { lines.push("<b>next to open</b>"); }
    lines.push('<a href="' + base + "/network/trace/" + encodeURIComponent(id) + '">trace upstream</a>');
    return lines.join("<br>");
  }
  var network = null;
  function hit(e) {
    var scale = map.getZoomScale(map.getZoom(), 0), o = map.getPixelOrigin(), at = e.layerPoint;
    for (var g = points.length - 1; g >= (plainShown ? 0 : 1); g--) {
      for (var j = points[g].length - 1; j >= 0; j--) {
        var p = points[g][j], dx = p.x * scale - o.x - at.x, dy = p.y * scale - o.y - at.y, reach = p.r + TOLERANCE;
        if (dx * dx + dy * dy <= reach * reach) { return { point: p, net: network }; }
      }
    }
    var best = null, bestD = Infinity;
    [suspectPipes, pipes].forEach(function (list, n) {
      var reach = (n === 0 ? 3 : 1) + TOLERANCE;
      for (var j = 0; j < list.length; j++) {
        var xy = list[j].xy;
        for (var k = 2; k < xy.length; k += 2) {
          var d = L.LineUtil.pointToSegmentDistance(at,
            L.point(xy[k - 2] * scale - o.x, xy[k - 1] * scale - o.y), L.point(xy[k] * scale - o.x, xy[k + 1] * scale - o.y));
          if (d <= reach && d < bestD) { best = list[j]; bestD = d; }
        }
      }
    });
    return best ? { pipe: best, net: network } : null;
  }
  map.on("click", function (e) {
    var f = hit(e);
    if (f) { L.popup().setLatLng(e.latlng).setContent(popupOf(f)).openOn(map); }
  });

  function ready() {
    renderer._redraw();
    el.dataset.pipes = counts.pipe;
    el.dataset.suspect = counts.suspect;
    el.dataset.structures = counts.structure;
    el.dataset.stations = counts.station;
    el.dataset.sites = counts.site;
    el.dataset.plainShown = plainShown ? "1" : "0";
    performance.mark("netmap-layers");
    requestAnimationFrame(function () { performance.mark("netmap-frame"); });
    el.dataset.ready = "1";
  }
  if (!page.network) { ready(); return; }
  fetch(base + page.network, { credentials: "same-origin" }).then(function (r) {
    if (!r.ok) { throw new Error("the network: HTTP " + r.status); }
    return r.json();
  }).then(function (net) {
    performance.mark("netmap-parsed");
    network = net;
    addNetwork(net);
    ready();
  }).catch(function (err) {
    el.dataset.error = String(err);
    ready();
    throw err;
  });
}());
