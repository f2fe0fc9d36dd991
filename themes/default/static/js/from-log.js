// "From your log": shows, above the fix, what the paste box found in the
// reader's log: the captures ("tried to allocate 20.00 MiB, free 17.06 MiB")
// and the matched line, read from the fragment #log=... that the result link
// carried. Text only: nothing from the fragment is ever parsed as HTML.
(function () {
  "use strict";
  var aside = document.querySelector("[data-from-log]");
  if (!aside) return;

  function show() {
    var m = /^#log=(.*)$/.exec(window.location.hash);
    if (!m) return;
    var q;
    try {
      q = new URLSearchParams(decodeURIComponent(m[1]));
    } catch (e) {
      return;
    }
    var parts = [];
    q.forEach(function (value, key) {
      if (key.charAt(0) !== "_") parts.push(key.replace(/_/g, " ") + " " + value);
    });
    aside.querySelector("[data-from-log-captures]").textContent = parts.length
      ? parts.join(", ") + "."
      : "line " + (q.get("_line") || "?") + " matches this error.";
    aside.querySelector("[data-from-log-text]").textContent = q.get("_text") || "";
    aside.hidden = false;
  }

  show();
  window.addEventListener("hashchange", show);
})();
