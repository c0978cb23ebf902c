/* The storm-sewer map (/network/map), drawn with the vendored Leaflet (static/vendor/leaflet).
   The features come with the page (script#netmap-data: GeoJSON in WGS 84, built on the server
   by workbench/networkmap.py). No tile server unless the settings name one (data-tiles). */
(function () {
  "use strict";
  var el = document.getElementById("netmap");
  var src = document.getElementById("netmap-data");
  if (!el || !src || typeof L === "undefined") { return; }
  var data = JSON.parse(src.textContent);
  performance.mark("netmap-parsed");
  var base = el.dataset.base || "";
  var COLOURS = {
    pipe: "#5f6b76", suspect: "#b3261e", present: "#b3261e", absent: "#0b5394", next: "#c25e00",
    outfall: "#1b1f24", monitored: "#1a7f37", "case": "#b3261e", structure: "#7a8793", site: "#8a5a00",
    reporting: "#1a7f37", alerting: "#b3261e", stale: "#6e4aa8", "not-evaluable": "#9a6700",
    "calibration-overdue": "#c25e00", active: "#8a5a00", inactive: "#b9a27a"
  };
  var map = L.map(el, { preferCanvas: true, zoomSnap: 0.5, maxZoom: 22 });
  if (el.dataset.tiles) {
    L.tileLayer(el.dataset.tiles, { maxZoom: 22, maxNativeZoom: 19, attribution: el.dataset.attribution || "" }).addTo(map);
  } else {
    el.classList.add("no-tiles");
  }
  function esc(s) {
    return String(s === null || s === undefined ? "" : s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function popup(p) {
    var lines = ["<b>" + esc(p.id) + "</b>"];
    if (p.layer === "pipe") {
      lines.push(esc(p.kind) + (p.diameter_in ? ", " + esc(Math.round(p.diameter_in)) + " in" : "") +
                 (p.length_ft ? ", " + esc(Math.round(p.length_ft)) + " ft" : ""));
      lines.push(esc(p.from) + " \u2192 " + esc(p.to));
      if (p.suspect) { lines.push("<b>suspect</b>"); }
    } else if (p.layer === "structure") {
      lines.push(esc(p.status.replace("_", " ")) + (p.receiving_water ? " \u2192 " + esc(p.receiving_water) : ""));
      if (p.visit) { lines.push("visited: flow " + esc(p.visit)); }
      if (p.next) { lines.push("<b>next to open</b>"); }
      lines.push('<a href="' + base + "/network/trace/" + encodeURIComponent(p.id) + '">trace upstream</a>');
    } else {
      lines.push(esc(p.name) + " (" + esc(p.status.replace("-", " ")) + ")");
      lines.push('<a href="' + base + esc(p.href) + '">open</a>');
    }
    return lines.join("<br>");
  }
  var counts = { pipe: 0, suspect: 0, structure: 0, station: 0, site: 0 };
  function style(f) {
    var p = f.properties;
    return p.suspect ? { color: COLOURS.suspect, weight: 6, opacity: 0.9 }
                     : { color: COLOURS.pipe, weight: 2, opacity: 0.8 };
  }
  function point(f, latlng) {
    var p = f.properties, colour, radius = 5, weight = 1, line = "#fff";
    if (p.layer === "structure") {
      colour = COLOURS[p.status] || COLOURS.structure;
      radius = p.kind === "outfall" ? 8 : 4;
      if (p.visit) { colour = COLOURS[p.visit]; radius = 7; }
      if (p.next) { line = COLOURS.next; weight = 4; radius = 9; }
    } else if (p.layer === "station") {
      colour = COLOURS[p.status] || COLOURS.reporting; radius = 7; line = "#1b1f24";
    } else {
      colour = COLOURS[p.status] || COLOURS.site; radius = 7;
    }
    return L.circleMarker(latlng, { radius: radius, color: line, weight: weight, fillColor: colour, fillOpacity: 0.95,
                                    renderer: renderer });
  }
  if (data.bounds) {
    var b = data.bounds;
    map.fitBounds([[b[0], b[1]], [b[2], b[3]]], { padding: [24, 24], maxZoom: 19 });
  } else {
    map.setView([42.8, -73.9], 11);
  }
  function openPopup(e) {          // one popup, made when a feature is tapped (not one per feature)
    L.popup().setLatLng(e.latlng).setContent(popup(e.layer.feature.properties)).openOn(map);
  }
  var all = data.features.features;
  var renderer = L.canvas({ padding: 0.5, tolerance: 6 });
  // pipes first, then points: the order they are drawn in (no reordering afterwards)
  var lines = all.filter(function (f) { return f.geometry.type !== "Point"; });
  var points = all.filter(function (f) { return f.geometry.type === "Point"; });
  lines.sort(function (a, b) { return (a.properties.suspect ? 1 : 0) - (b.properties.suspect ? 1 : 0); });
  [lines, points].forEach(function (group) {
    L.geoJSON({ type: "FeatureCollection", features: group }, {
      style: style,
      renderer: renderer,
      pointToLayer: point,
      onEachFeature: function (f) {
        counts[f.properties.layer] += 1;
        if (f.properties.suspect) { counts.suspect += 1; }
      }
    }).on("click", openPopup).addTo(map);
  });
  performance.mark("netmap-layers");
  requestAnimationFrame(function () { performance.mark("netmap-frame"); });
  L.control.scale({ imperial: true, metric: true }).addTo(map);
  el.dataset.pipes = counts.pipe;
  el.dataset.suspect = counts.suspect;
  el.dataset.structures = counts.structure;
  el.dataset.stations = counts.station;
  el.dataset.sites = counts.site;
  el.dataset.ready = "1";
}());
