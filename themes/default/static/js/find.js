// "Paste your error or search". No framework, no network beyond the site's own
// files: the match index, the matcher's WebAssembly (run in a Worker, so a
// pasted 5 MB log never blocks the page) and Pagefind's bundle, each loaded
// on first use. Pages that match the pasted text come first, then full-text
// search results. A result link carries the matched line and the pattern's
// captures in its fragment (#log=...), which the page shows as "From your
// log"; a fragment never reaches the server.
(function () {
  "use strict";
  var box = document.querySelector("[data-find]");
  if (!box) return;
  if (typeof Worker !== "function" || typeof WebAssembly !== "object") {
    box.hidden = true;
    return;
  }
  var input = box.querySelector("textarea");
  var status = box.querySelector("[data-find-status]");
  var list = box.querySelector("[data-find-results]");
  var worker = null;
  var pagefind = null;
  var latest = 0;
  var timer = null;
  // Longest text sent to full-text search: longer input is a log, not words.
  var SEARCH_MAX = 200;
  var SHOWN = 8;

  function matcher() {
    if (!worker) {
      worker = new Worker(box.getAttribute("data-worker"));
      worker.postMessage({ init: {
        index: box.getAttribute("data-index"),
        wasm: box.getAttribute("data-wasm")
      } });
    }
    return worker;
  }

  function match(text, id) {
    return new Promise(function (resolve) {
      var w = matcher();
      function onMessage(event) {
        if (event.data.id !== id) return;
        w.removeEventListener("message", onMessage);
        resolve(event.data.error ? { error: event.data.error, matches: [] } : { matches: event.data.matches });
      }
      w.addEventListener("message", onMessage);
      w.postMessage({ id: id, text: text });
    });
  }

  // Pagefind's script, imported on first focus or input (never with the
  // page), and again after a failure (a preview server mid-rebuild).
  // Absent when the site turns search off.
  function loadPagefind() {
    var url = box.getAttribute("data-pagefind");
    if (!url) return null;
    if (!pagefind) {
      pagefind = import(url).then(function (p) {
        return p.options ? p.options({ excerptLength: 24 }).then(function () { return p; }) : p;
      });
      pagefind.catch(function () { pagefind = null; });
    }
    return pagefind;
  }

  function search(text) {
    var words = text.trim();
    if (!words || words.length > SEARCH_MAX || /\n/.test(words)) return Promise.resolve([]);
    var loaded = loadPagefind();
    if (!loaded) return Promise.resolve([]);
    return loaded.then(function (p) {
      return p.search(words);
    }).then(function (found) {
      return Promise.all(found.results.slice(0, SHOWN).map(function (r) { return r.data(); }));
    }).catch(function () {
      return [];
    });
  }

  // The fragment a result link carries: the matched line and the captures.
  function fragment(m) {
    var q = new URLSearchParams();
    q.set("_line", String(m.line));
    q.set("_text", m.text.slice(0, 400));
    Object.keys(m.captures).forEach(function (k) { q.set(k, m.captures[k]); });
    return "#log=" + encodeURIComponent(q.toString());
  }

  // The matched line with each captured value highlighted.
  function highlighted(m) {
    var code = document.createElement("code");
    var text = m.text;
    var spans = [];
    Object.keys(m.captures).forEach(function (k) {
      var v = m.captures[k];
      var at = v ? text.indexOf(v) : -1;
      if (at >= 0) spans.push([at, at + v.length, k]);
    });
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var pos = 0;
    spans.forEach(function (s) {
      if (s[0] < pos) return;
      code.appendChild(document.createTextNode(text.slice(pos, s[0])));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(s[0], s[1]);
      mark.title = s[2];
      code.appendChild(mark);
      pos = s[1];
    });
    code.appendChild(document.createTextNode(text.slice(pos)));
    return code;
  }

  function matchItem(m) {
    var li = document.createElement("li");
    li.className = "find-match";
    var a = document.createElement("a");
    a.href = m.url + fragment(m);
    a.textContent = m.title;
    li.appendChild(a);
    var where = document.createElement("p");
    where.className = "find-where";
    where.textContent = (m.kind === "fuzzy" ? "Resembles" : "Matches") + " line " + m.line + " of your log:";
    li.appendChild(where);
    var pre = document.createElement("pre");
    pre.className = "find-line";
    pre.appendChild(highlighted(m));
    li.appendChild(pre);
    var names = Object.keys(m.captures);
    if (names.length) {
      var dl = document.createElement("dl");
      dl.className = "find-captures";
      names.forEach(function (k) {
        var dt = document.createElement("dt");
        dt.textContent = k.replace(/_/g, " ");
        var dd = document.createElement("dd");
        dd.textContent = m.captures[k];
        dl.appendChild(dt);
        dl.appendChild(dd);
      });
      li.appendChild(dl);
    }
    return li;
  }

  // Pagefind's excerpt, keeping only its text and <mark> highlights.
  function excerpt(html) {
    var p = document.createElement("p");
    p.className = "find-excerpt";
    var doc = new DOMParser().parseFromString("<body>" + html + "</body>", "text/html");
    doc.body.childNodes.forEach(function (n) {
      if (n.nodeName === "MARK") {
        var mark = document.createElement("mark");
        mark.textContent = n.textContent;
        p.appendChild(mark);
      } else {
        p.appendChild(document.createTextNode(n.textContent));
      }
    });
    return p;
  }

  function searchItem(r) {
    var li = document.createElement("li");
    li.className = "find-hit";
    var a = document.createElement("a");
    a.href = r.url;
    a.textContent = (r.meta && r.meta.title) || r.url;
    li.appendChild(a);
    li.appendChild(excerpt(r.excerpt || ""));
    return li;
  }

  function show(matches, hits, error) {
    list.textContent = "";
    var seen = {};
    matches.slice(0, SHOWN).forEach(function (m) {
      seen[m.url.replace(/#.*$/, "")] = true;
      list.appendChild(matchItem(m));
    });
    hits = hits.filter(function (r) { return !seen[r.url.replace(/#.*$/, "")]; });
    hits.forEach(function (r) { list.appendChild(searchItem(r)); });
    var parts = [];
    if (matches.length) parts.push(matches.length + (matches.length === 1 ? " page matches" : " pages match") + " your error");
    if (hits.length) parts.push(hits.length + " search result" + (hits.length === 1 ? "" : "s"));
    if (error) parts.push("matching is unavailable (" + error + ")");
    status.textContent = parts.length ? parts.join("; ") + "." : "No page matches, and no search results.";
    box.setAttribute("data-state", "done");
  }

  // A pasted log can be megabytes, and laying that out in a text area
  // freezes the page for seconds. Past PASTE_SHOWN characters the box keeps
  // the whole paste for the matcher and shows only its end (where errors
  // are) under a note; editing the text leaves just what is shown.
  var PASTE_SHOWN = 20000;
  var pasted = null;

  function current() {
    return pasted && input.value === pasted.shown ? pasted.full : input.value;
  }

  function megabytes(n) {
    return (n / 1048576).toFixed(1) + " MB";
  }

  input.addEventListener("paste", function (e) {
    var data = e.clipboardData ? e.clipboardData.getData("text/plain") : "";
    if (data.length <= PASTE_SHOWN) return;
    e.preventDefault();
    var tail = data.slice(data.length - PASTE_SHOWN);
    tail = tail.slice(tail.indexOf("\n") + 1);
    var shown = "[" + megabytes(data.length) + " pasted: all of it is matched; its last lines:]\n" + tail;
    pasted = { full: data, shown: shown };
    input.value = shown;
    input.scrollTop = input.scrollHeight;
    clearTimeout(timer);
    run();
  });

  function run() {
    var text = current();
    var id = ++latest;
    if (!text.trim()) {
      list.textContent = "";
      status.textContent = "";
      box.removeAttribute("data-state");
      return;
    }
    box.setAttribute("data-state", "busy");
    status.textContent = "Looking…";
    Promise.all([match(text, id), search(text)]).then(function (both) {
      if (id !== latest) return;
      show(both[0].matches, both[1], both[0].error);
    });
  }

  input.addEventListener("focus", loadPagefind);
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(run, 150);
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Escape") {
      input.value = "";
      pasted = null;
      run();
    } else if (e.key === "ArrowDown" && list.firstElementChild && input.selectionStart === input.value.length) {
      e.preventDefault();
      list.querySelector("a").focus();
    }
  });
  list.addEventListener("keydown", function (e) {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    var links = Array.prototype.slice.call(list.querySelectorAll("li > a"));
    var at = links.indexOf(document.activeElement);
    if (at < 0) return;
    e.preventDefault();
    if (e.key === "ArrowUp" && at === 0) input.focus();
    else if (links[at + (e.key === "ArrowDown" ? 1 : -1)]) links[at + (e.key === "ArrowDown" ? 1 : -1)].focus();
  });
})();
