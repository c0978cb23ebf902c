// The workbench's only script. Pages work without it.
// - A block marked data-refresh="SECONDS" reloads itself from the server while the page is
//   visible and nobody is typing in it.
// - A countdown (data-deadline="ISO time", data-now: the server's clock when drawn, which is
//   the data's clock in the demo) counts down to its deadline every 30 s.
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
          if (fresh) { el.innerHTML = fresh.innerHTML; countdowns(el); }
        })
        .catch(function () { /* offline in the field: keep what is shown */ });
    }, seconds * 1000);
  }
  function left(ms) {
    var s = Math.floor(Math.abs(ms) / 1000), d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600),
        m = Math.floor((s % 3600) / 60);
    var text = d > 0 ? d + " d " + h + " h" : (h > 0 ? h + " h " + m + " min" : m + " min");
    return ms < 0 ? "overdue by " + text : "in " + text;
  }
  function countdowns(root) {
    root.querySelectorAll("[data-deadline]").forEach(function (el) {
      if (!el.hasAttribute("data-seen")) el.setAttribute("data-seen", String(Date.now()));
      var drawn = Date.parse(el.getAttribute("data-now"));
      var now = isNaN(drawn) ? Date.now() : drawn + (Date.now() - Number(el.getAttribute("data-seen")));
      var ms = Date.parse(el.getAttribute("data-deadline")) - now;
      if (isNaN(ms)) return;
      el.textContent = left(ms);
      el.classList.toggle("late", ms < 0);
      el.classList.toggle("soon", ms >= 0 && ms < 6 * 3600 * 1000);
    });
  }
  document.querySelectorAll("[data-refresh]").forEach(function (el) {
    var s = parseInt(el.getAttribute("data-refresh"), 10);
    if (el.id && s > 0) refresh(el, s);
  });
  if (document.querySelector("[data-deadline]")) {
    countdowns(document);
    setInterval(function () { countdowns(document); }, 30000);
  }
})();
