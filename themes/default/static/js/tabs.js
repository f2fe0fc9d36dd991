// errata theme script: tool tabs. errata writes a group
// (<div data-tabs="label">) holding one panel per tool
// (<div data-tab="key" data-label="Tool">, its heading first); without this
// script every panel shows under its heading. With it, each group becomes a
// WAI-ARIA tab list (arrow keys, Home and End move and select), and a choice
// is remembered in localStorage and applied to every group on this page and
// on later pages that offer the same tool, as Starlight's synced tabs do.
(function () {
  "use strict";

  var STORE = "errata-tabs";
  var MAX_REMEMBERED = 12;
  var groups = [];

  // The tools chosen so far, most recent first: a group shows the first one
  // it has, so a choice of tool and a choice of, say, OS both hold.
  function remembered() {
    try {
      var list = JSON.parse(localStorage.getItem(STORE) || "[]");
      return Array.isArray(list) ? list.filter(function (k) { return typeof k === "string"; }) : [];
    } catch (e) {
      return [];
    }
  }

  function remember(key) {
    var list = remembered().filter(function (k) { return k !== key; });
    list.unshift(key);
    try {
      localStorage.setItem(STORE, JSON.stringify(list.slice(0, MAX_REMEMBERED)));
    } catch (e) {
      // Storage may be off (private mode, a policy): the choice holds on this page only.
    }
  }

  function select(group, index, focus) {
    group.tabs.forEach(function (tab, i) {
      var on = i === index;
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
      group.panels[i].hidden = !on;
    });
    if (focus) group.tabs[index].focus();
  }

  function keyIndex(group, key) {
    for (var i = 0; i < group.panels.length; i++) {
      if (group.panels[i].getAttribute("data-tab") === key) return i;
    }
    return -1;
  }

  // Every group shows the most recently chosen tool it has (else its first).
  function applyRemembered() {
    var list = remembered();
    groups.forEach(function (group) {
      var index = 0;
      for (var i = 0; i < list.length; i++) {
        var found = keyIndex(group, list[i]);
        if (found >= 0) { index = found; break; }
      }
      select(group, index, false);
    });
  }

  // The reader chose tab `index` of `group`: all groups follow, and the
  // chosen tab stays where it was on the screen while panels above change height.
  function choose(group, index, focus) {
    var tab = group.tabs[index];
    var before = tab.getBoundingClientRect().top;
    remember(group.panels[index].getAttribute("data-tab"));
    applyRemembered();
    select(group, index, focus);
    var after = tab.getBoundingClientRect().top;
    if (after !== before) window.scrollBy(0, after - before);
  }

  function build(container, n) {
    var panels = Array.prototype.filter.call(container.children, function (el) {
      return el.hasAttribute("data-tab");
    });
    if (!panels.length) return null;
    var list = document.createElement("div");
    list.setAttribute("role", "tablist");
    list.setAttribute("aria-label", container.getAttribute("data-tabs") || "Tools");
    list.className = "tab-list";
    var group = { tabs: [], panels: panels };
    panels.forEach(function (panel, i) {
      var heading = panel.firstElementChild;
      var base = "tabs-" + n + "-" + i;
      var tab = document.createElement("button");
      tab.type = "button";
      tab.id = base + "-tab";
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-controls", base + "-panel");
      tab.textContent = panel.getAttribute("data-label");
      tab.addEventListener("click", function () { choose(group, i, false); });
      panel.id = base + "-panel";
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      panel.tabIndex = 0;
      // The tab names the panel now; its heading stays for screen readers'
      // heading navigation and for the page's table of contents.
      if (heading && /^H[1-6]$/.test(heading.tagName)) heading.classList.add("visually-hidden");
      list.appendChild(tab);
      group.tabs.push(tab);
    });
    list.addEventListener("keydown", function (event) {
      var current = group.tabs.indexOf(document.activeElement);
      if (current < 0) return;
      var last = group.tabs.length - 1;
      var next = {
        ArrowRight: current === last ? 0 : current + 1,
        ArrowLeft: current === 0 ? last : current - 1,
        Home: 0,
        End: last
      }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      choose(group, next, true);
    });
    container.insertBefore(list, panels[0]);
    container.classList.add("tabs-ready");
    return group;
  }

  // A link to something inside a hidden panel (the table of contents, a
  // shared #anchor) shows that panel, without changing the remembered tool.
  function revealHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return;
    groups.forEach(function (group) {
      group.panels.forEach(function (panel, i) {
        if (panel.contains(target) && panel.hidden) {
          select(group, i, false);
          target.scrollIntoView();
        }
      });
    });
  }

  function init() {
    var containers = document.querySelectorAll("[data-tabs]");
    for (var i = 0; i < containers.length; i++) {
      var group = build(containers[i], i);
      if (group) groups.push(group);
    }
    if (!groups.length) return;
    applyRemembered();
    revealHash();
    window.addEventListener("hashchange", revealHash);
    // A choice made in another window of the site applies here too.
    window.addEventListener("storage", function (event) {
      if (event.key === STORE) applyRemembered();
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
