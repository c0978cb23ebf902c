// The field form (/field/): works without signal.
// - The form is built from the server's own list of what an inspection and a visit record
//   (/api/v1/field/form, which the service worker keeps for offline use): nothing of the
//   law's items is written here.
// - A record is kept in IndexedDB with its photos (each with the time it was taken and,
//   when allowed, where) and an idempotency key, then sent when the phone is online: the
//   server makes it once, however often it is sent.
// - What the server answers is shown and kept: sent (with a link), a conflict (its reason;
//   the record stays on the phone), refused. An ended session stops the sending and keeps
//   the queue until the inspector logs in again.
(function () {
  "use strict";
  var root = document.getElementById("field");
  if (!root) return;
  var BASE = root.getAttribute("data-base"), FORM_URL = root.getAttribute("data-form"),
      SEND_URL = root.getAttribute("data-send");
  var form = document.getElementById("field-form"), net = document.getElementById("net"),
      sessionEnded = document.getElementById("session"), outbox = document.getElementById("outbox"),
      formError = document.getElementById("form-error"), photoList = document.getElementById("photo-list");
  var spec = null, csrf = null, photos = [], flushing = false, stopped = false;

  // -- IndexedDB: one store of records, by key ------------------------------------------------
  var dbp = new Promise(function (resolve, reject) {
    var req = indexedDB.open("ms4watch-field" + BASE, 1);
    req.onupgradeneeded = function () { req.result.createObjectStore("records", {keyPath: "key"}); };
    req.onsuccess = function () { resolve(req.result); };
    req.onerror = function () { reject(req.error); };
  });
  function tx(mode, fn) {
    return dbp.then(function (db) {
      return new Promise(function (resolve, reject) {
        var t = db.transaction("records", mode), out = fn(t.objectStore("records"));
        t.oncomplete = function () { resolve(out && out.result !== undefined ? out.result : out); };
        t.onerror = function () { reject(t.error); };
        t.onabort = function () { reject(t.error); };
      });
    });
  }
  function all() {
    return tx("readonly", function (s) { return s.getAll(); }).then(function (rows) {
      return rows.sort(function (a, b) { return a.created < b.created ? -1 : 1; });
    });
  }
  function put(rec) { return tx("readwrite", function (s) { s.put(rec); }); }

  // -- small helpers ----------------------------------------------------------------------------
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] === true) e.setAttribute(k, "");
      else if (attrs[k] !== false && attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function localInput(d) {   // a datetime-local value
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + "T" + pad(d.getHours()) + ":" +
      pad(d.getMinutes());
  }
  function iso(d) {          // ISO 8601 with the phone's UTC offset
    var off = -d.getTimezoneOffset(), sign = off >= 0 ? "+" : "-";
    off = Math.abs(off);
    return localInput(d) + ":" + pad(d.getSeconds()) + sign + pad(Math.floor(off / 60)) + ":" + pad(off % 60);
  }
  function shown(isoText) { var d = new Date(isoText); return isNaN(d) ? isoText : d.toLocaleString(); }
  function key() {
    if (self.crypto && crypto.randomUUID) return crypto.randomUUID();
    var a = new Uint8Array(16); crypto.getRandomValues(a);
    return Array.prototype.map.call(a, function (b) { return pad(b.toString(16)); }).join("");
  }
  function where() {        // the phone's position if it may be asked, else null (never waits long)
    return new Promise(function (resolve) {
      if (!navigator.geolocation) return resolve(null);
      navigator.geolocation.getCurrentPosition(function (p) {
        resolve({lat: p.coords.latitude, lon: p.coords.longitude, accuracy_m: Math.round(p.coords.accuracy)});
      }, function () { resolve(null); }, {enableHighAccuracy: true, timeout: 10000, maximumAge: 60000});
    });
  }
  function online(yes) {
    net.textContent = yes ? "Online: records kept on this phone are sent now."
                          : "Offline: records are kept on this phone and sent when it is back online.";
    net.classList.toggle("offline", !yes);
  }

  // -- the form, from the server's list ---------------------------------------------------------
  function field(label, input, hint) {
    return el("label", {}, [label, input].concat(hint ? [el("span", {"class": "muted"}, [hint])] : []));
  }
  function select(name, options, attrs) {
    return el("select", Object.assign({name: name}, attrs || {}), options.map(function (o) {
      return el("option", {value: o[0]}, [o[1]]);
    }));
  }
  function buildInspection(part) {
    var s = spec.inspection;
    part.appendChild(el("p", {"class": "law"}, [s.provision]));
    var site = select("site", s.sites.map(function (x) {
      return [x.id, x.name + (x.active ? "" : " (not active today)")];
    }), {required: true});
    var item = select("item", [["", "none: an inspection of its own"]]);
    function items() {
      var chosen = s.sites.filter(function (x) { return x.id === site.value; })[0];
      item.innerHTML = "";
      item.appendChild(el("option", {value: ""}, ["none: an inspection of its own"]));
      (chosen ? chosen.due : []).forEach(function (d) {
        item.appendChild(el("option", {value: String(d.incident)},
                            [d.label + (d.deadline ? ", due " + shown(d.deadline) : "") + " (item " + d.incident + ")"]));
      });
      if (chosen && chosen.due.length) item.value = String(chosen.due[0].incident);
    }
    site.addEventListener("change", items);
    part.appendChild(field("Site", site));
    part.appendChild(field("The item it answers", item));
    items();
    part.appendChild(field("Inspected at", el("input", {type: "datetime-local", name: "at", required: true,
                                                       value: localInput(new Date())})));
    part.appendChild(field("Licensed/certified professional", el("input", {name: "inspector", required: true,
      maxlength: "200", autocomplete: "name", value: spec.user})));
    part.appendChild(field("Credential", select("credential", s.credentials.map(function (c) {
      return [c.value, c.label]; }), {required: true})));
    part.appendChild(field("Licence or certification number", el("input", {name: "license_no", required: true,
                                                                           maxlength: "64"})));
    s.items.forEach(function (it) {
      var box = el("fieldset", {"class": "item"}, [el("legend", {}, [it.number + " " + it.label]),
        el("details", {"class": "law"}, [el("summary", {}, ["The law's words"]), it.law + "."])]);
      if (it.field === "sediment_pct") {
        box.appendChild(el("div", {"class": "two"}, [
          field("Accumulation, % of storage", el("input", {type: "number", name: "sediment_pct", min: "0", max: "100",
                                                           step: "any", inputmode: "decimal", required: true})),
          field("Per practice (optional)", el("input", {name: "sediment_note", maxlength: "4000"}))]));
      } else {
        box.appendChild(el("textarea", {name: it.field, rows: "3", required: true, maxlength: "4000",
                                        "aria-label": it.number + " " + it.label}));
      }
      part.appendChild(box);
    });
    part.appendChild(el("label", {"class": "certify"}, [el("input", {type: "checkbox", name: "certified",
                                                                     required: true}), " " + s.certification]));
  }
  function buildVisit(part) {
    var v = spec.visit;
    v.provisions.forEach(function (p) { part.appendChild(el("p", {"class": "law"}, [p.cite + ": " + p.text])); });
    if (!v.cases.length) part.appendChild(el("p", {"class": "notice"}, ["No case is open: open one on the Cases page."]));
    part.appendChild(field("Case", select("case", v.cases.map(function (c) {
      return [String(c.id), c.number + ": " + (c.outfall ? c.outfall + ", " : "") + c.location];
    }), {required: true})));
    part.appendChild(field("Visit", select("kind", v.kinds.map(function (k) { return [k.value, k.label]; }),
                                           {required: true})));
    part.appendChild(field("At", el("input", {type: "datetime-local", name: "visit_at", required: true,
                                              value: localInput(new Date())})));
    part.appendChild(field("By", el("input", {name: "by", required: true, maxlength: "200", value: spec.user})));
    part.appendChild(field("What you saw and did", el("textarea", {name: "notes", rows: "4", required: true,
                                                                   maxlength: "4000"})));
    part.appendChild(field("Where (left empty: where the phone is)", el("input", {name: "location",
                                                                                  maxlength: "400"})));
    var yesno = [["", "not noted"], ["yes", "yes"], ["no", "no"]];
    part.appendChild(el("div", {"class": "two"}, [
      field("Dry weather", select("dry_weather", yesno), v.dry_weather),
      field("Flow at the outfall", select("flow_observed", yesno))]));
    part.appendChild(field("Finding", select("finding", [["", "none yet"]].concat(v.findings.map(function (f) {
      return [f.value, f.label]; })))));
  }
  function build() {
    var ins = document.getElementById("inspection-part"), vis = document.getElementById("visit-part");
    ins.innerHTML = ""; vis.innerHTML = "";
    buildInspection(ins); buildVisit(vis);
    form.hidden = !(spec.may.inspection || spec.may.visit);
  }
  form.addEventListener("change", function (e) {
    if (e.target.name !== "what") return;
    var visit = e.target.value === "visit";
    ["inspection-part", "visit-part"].forEach(function (id) {
      var p = document.getElementById(id), on = (id === "visit-part") === visit;
      p.hidden = !on; p.disabled = !on;
    });
  });

  // -- photos: each with its time and position ----------------------------------------------------
  function drawPhotos() {
    photoList.innerHTML = "";
    photos.forEach(function (p, i) {
      var pos = p.position ? ", " + p.position.lat.toFixed(5) + ", " + p.position.lon.toFixed(5) +
        (p.position.accuracy_m != null ? " ±" + p.position.accuracy_m + " m" : "") : ", no position";
      var drop = el("button", {type: "button"}, ["Remove"]);
      drop.addEventListener("click", function () { photos.splice(i, 1); drawPhotos(); });
      photoList.appendChild(el("li", {}, [el("span", {}, [p.name + ": " + shown(p.taken_at) + pos]), drop]));
    });
  }
  form.querySelector("input[name=photos]").addEventListener("change", function (e) {
    var input = e.target, picked = Array.prototype.slice.call(input.files || []);
    var max = spec ? spec.max_photos : 12;
    var added = picked.slice(0, Math.max(0, max - photos.length)).map(function (f) {
      return {file: f, name: f.name || "photo.jpg", taken_at: iso(new Date(f.lastModified || Date.now())),
              position: null};
    });
    photos = photos.concat(added);
    input.value = "";
    drawPhotos();
    where().then(function (pos) {
      added.forEach(function (p) { p.position = pos; });
      drawPhotos();
    });
  });

  // -- keeping a record -----------------------------------------------------------------------
  function value(name) {
    var e = form.querySelector("[name=" + name + "]");      // the two parts' names differ
    return e ? e.value.trim() : "";
  }
  function yesno(v) { return v === "yes" ? true : v === "no" ? false : null; }
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    formError.hidden = true;
    if (!form.checkValidity()) { form.reportValidity(); return; }
    var visit = form.querySelector("input[name=what]:checked").value === "visit";
    var rec, summary;
    if (visit) {
      var c = spec.visit.cases.filter(function (x) { return String(x.id) === value("case"); })[0];
      rec = {kind: "visit", "case": Number(value("case")), entry: {
        kind: value("kind"), at: iso(new Date(value("visit_at"))), by: value("by"), notes: value("notes"),
        location: value("location") || null, dry_weather: yesno(value("dry_weather")),
        flow_observed: yesno(value("flow_observed")), finding: value("finding") || null}};
      summary = value("kind").replace(/_/g, " ") + " visit in case " + (c ? c.number : value("case"));
    } else {
      var report = {site: value("site"), at: iso(new Date(value("at"))), inspector: value("inspector"),
                    credential: value("credential"), license_no: value("license_no"),
                    sediment_note: value("sediment_note") || null, certified: true};
      spec.inspection.items.forEach(function (it) {
        report[it.field] = it.field === "sediment_pct" ? Number(value(it.field)) : value(it.field);
      });
      var site = spec.inspection.sites.filter(function (x) { return x.id === report.site; })[0];
      rec = {kind: "inspection", item: value("item") ? Number(value("item")) : null, report: report};
      summary = "Inspection at " + (site ? site.name : report.site);
    }
    var taken = photos, kept = {key: key(), user: spec.username, summary: summary, record: rec, state: "queued",
                                detail: null, result: null, created: iso(new Date()),
                                files: taken.map(function (p) { return {blob: p.file, name: p.name}; })};
    rec.drafted_at = kept.created;
    rec.position = null;
    rec.photos = taken.map(function (p) { return {name: p.name, taken_at: p.taken_at, position: p.position}; });
    put(kept).then(function () {        // kept at once; where the phone is, added when it knows (before sending)
      photos = [];
      drawPhotos();
      form.querySelectorAll((visit ? "#visit-part" : "#inspection-part") + " textarea").forEach(function (t) {
        t.value = "";
      });
      var cert = form.querySelector("[name=certified]");
      if (cert) cert.checked = false;
      return draw();
    }).then(function () {
      return where().then(function (pos) {
        if (!pos) return null;
        return tx("readonly", function (st) { return st.get(kept.key); }).then(function (now) {
          if (!now || now.state !== "queued") return null;
          now.record.position = pos;
          return put(now);
        });
      });
    }).then(flush).catch(function (err) {
      formError.textContent = "Could not keep the record on this phone: " + err;
      formError.hidden = false;
    });
  });

  // -- what is on the phone ---------------------------------------------------------------------
  var WORDS = {queued: "Waiting to be sent", sending: "Sending", sent: "Sent", conflict: "Not recorded: conflict",
               refused: "Not recorded: refused"};
  function contents(rec) {     // what was recorded, word for word, to copy from if the server refused it
    var fields = rec.kind === "visit" ? rec.entry : rec.report, lines = [];
    Object.keys(fields).forEach(function (k) {
      if (fields[k] !== null && fields[k] !== "") lines.push(k.replace(/_/g, " ") + ": " + fields[k]);
    });
    if (rec.position) lines.push("position: " + rec.position.lat + ", " + rec.position.lon);
    return el("details", {"class": "contents"}, [el("summary", {}, ["What was recorded"]),
                                                 el("p", {"class": "lines"}, [lines.join("\n")])]);
  }
  function draw() {
    return all().then(function (rows) {
      outbox.innerHTML = "";
      document.getElementById("outbox-empty").hidden = rows.length > 0;
      rows.slice().reverse().forEach(function (r) {
        var li = el("li", {"class": r.state, "data-key": r.key, "data-state": r.state}, [
          el("span", {"class": "badge state"}, [WORDS[r.state] || r.state]),
          el("strong", {}, [r.summary]),
          el("span", {"class": "muted"}, ["kept " + shown(r.created) + ", " + r.files.length + " photo(s)" +
                                          (spec && r.user !== spec.username ? ", by " + r.user : "")])]);
        if (r.state === "sent" && r.result) {
          li.appendChild(el("span", {}, ["Recorded " + shown(r.result.received_at) + ": ",
                                         el("a", {href: r.result.path}, [r.result.summary])]));
        }
        if (r.detail) li.appendChild(el("span", {"class": "reason"}, [r.detail]));
        if (r.state === "conflict" || r.state === "refused") {
          li.appendChild(el("span", {"class": "muted"}, ["Kept on this phone; the server did not record it."]));
        }
        if (r.state !== "sent") li.appendChild(contents(r.record));
        if (r.state === "conflict" && r.record.kind === "inspection" && r.record.item && r.again) {
          li.appendChild(el("span", {"class": "muted"}, ["Recorded again as an inspection of its own."]));
        } else if (r.state === "conflict" && r.record.kind === "inspection" && r.record.item) {
          var again = el("button", {type: "button", "class": "again"}, ["Record it as an inspection of its own"]);
          again.addEventListener("click", function () {
            again.disabled = true;          // once: a second click would make a second report
            var copy = JSON.parse(JSON.stringify(r.record));
            copy.item = null;
            var fresh = {key: key(), user: r.user, summary: r.summary + " (of its own)", record: copy,
                         state: "queued", detail: null, result: null, created: iso(new Date()), files: r.files};
            r.again = fresh.key;
            put(fresh).then(function () { return put(r); }).then(draw).then(flush);
          });
          li.appendChild(again);
        }
        outbox.appendChild(li);
      });
    });
  }

  // -- sending, once per key ------------------------------------------------------------------
  function loadForm() {
    return fetch(FORM_URL, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) {
        if (r.status === 401) {
          stopped = true; sessionEnded.hidden = false;
          return caches.match(FORM_URL).then(function (hit) { return hit ? hit.json() : null; });
        }
        if (!r.ok) throw new Error("the form: HTTP " + r.status);
        stopped = false; sessionEnded.hidden = true;
        return r.json();
      })
      .then(function (s) {
        if (!s) return null;
        spec = s;
        if (s.csrf && !stopped) csrf = s.csrf;
        return s;
      });
  }
  function sendOne(r) {
    var body = new FormData();
    body.append("record", JSON.stringify(r.record));
    r.files.forEach(function (f) { body.append("photos", f.blob, f.name); });
    return fetch(SEND_URL, {method: "POST", credentials: "same-origin", body: body,
                            headers: {"Idempotency-Key": r.key, "X-CSRF-Token": csrf || "", "Accept": "application/json"}})
      .then(function (res) {
        return res.json().catch(function () { return {detail: "HTTP " + res.status}; }).then(function (j) {
          return {status: res.status, body: j};
        });
      });
  }
  function flush() {
    if (flushing || !navigator.onLine || !spec) return Promise.resolve();
    flushing = true;
    return loadForm().then(function () {
      if (stopped) return null;
      return all().then(function (rows) {
        var mine = rows.filter(function (r) { return r.state === "queued" && r.user === spec.username; });
        var chain = Promise.resolve();
        mine.forEach(function (r) {
          chain = chain.then(function () {
            if (stopped) return null;
            r.state = "sending";
            return put(r).then(draw).then(function () { return sendOne(r); }).then(function (a) {
              if (a.status === 200 || a.status === 201) {   // the server has the photos: the phone frees them
                r.state = "sent"; r.result = a.body; r.detail = null;
                r.files = r.files.map(function (f) { return {blob: null, name: f.name}; });
              }
              else if (a.status === 404 || a.status === 409) { r.state = "conflict"; r.detail = a.body.detail; }
              else if (a.status === 401) { r.state = "queued"; stopped = true; sessionEnded.hidden = false; }
              else if (a.status === 403 && /CSRF/.test(a.body.detail || "")) { r.state = "queued"; csrf = null; }
              else if (a.status >= 500) { r.state = "queued"; r.detail = "the server failed (HTTP " + a.status + "): sent again later"; }
              else { r.state = "refused"; r.detail = a.body.detail || ("HTTP " + a.status); }
              return put(r);
            }, function () {          // no answer (signal lost): it stays queued, sent again later
              r.state = "queued";
              return put(r);
            });
          });
        });
        return chain;
      });
    }).catch(function () { /* offline again: the queue stays */ }).then(function () {
      flushing = false;
      return draw();
    });
  }

  // -- start ------------------------------------------------------------------------------------
  online(navigator.onLine);
  window.addEventListener("online", function () { online(true); flush(); });
  window.addEventListener("offline", function () { online(false); });
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register(root.getAttribute("data-sw"), {scope: root.getAttribute("data-scope")})
      .catch(function (err) { console.warn("the field form will not open offline:", err); });
  }
  // "sending" left by a page closed mid-send: queued again (the key makes a resend harmless)
  all().then(function (rows) {
    return Promise.all(rows.filter(function (r) { return r.state === "sending"; }).map(function (r) {
      r.state = "queued"; return put(r);
    }));
  }).then(loadForm).then(function (s) {
    if (!s) throw new Error("no copy of the form on this phone");
    build();
    online(navigator.onLine);
    return draw();
  }).then(flush).catch(function () {
    net.textContent = "The form has not been loaded on this phone yet: open this page once with signal.";
    net.classList.add("offline");
    return draw();
  });
  setInterval(function () { if (navigator.onLine && !stopped) flush(); }, 30000);
})();
