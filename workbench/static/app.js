// The workbench's only script: a table marked data-refresh="SECONDS" reloads itself from the
// server while the page is visible and nobody is typing in it. Pages work without it.
(function () {
  "use strict";
  function refresh(el, seconds) {
    setInterval(function () {
      if (document.hidden || el.contains(document.activeElement)) return;
      fetch(location.href, {credentials: "same-origin", headers: {"Accept": "text/html"}})
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(el.id);
          if (fresh) el.innerHTML = fresh.innerHTML;
        })
        .catch(function () { /* offline in the field: keep what is shown */ });
    }, seconds * 1000);
  }
  document.querySelectorAll("[data-refresh]").forEach(function (el) {
    var s = parseInt(el.getAttribute("data-refresh"), 10);
    if (el.id && s > 0) refresh(el, s);
  });
})();
