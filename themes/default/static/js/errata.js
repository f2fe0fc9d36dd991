// errata theme script: copy buttons on code blocks. No framework.
// For console blocks, the copied text is the commands only: prompts (.gp)
// and output lines (.go) are left out.
(function () {
  "use strict";

  function textToCopy(pre) {
    var code = pre.querySelector("code") || pre;
    var clone = code.cloneNode(true);
    var skip = clone.querySelectorAll(".gp, .go");
    for (var i = 0; i < skip.length; i++) skip[i].remove();
    var text = clone.textContent;
    if (skip.length) {
      // Drop the blank lines left where output was.
      text = text.split("\n").filter(function (l) { return l.trim() !== ""; }).join("\n") + "\n";
    }
    return text;
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      try {
        document.execCommand("copy") ? resolve() : reject(new Error("copy failed"));
      } catch (e) {
        reject(e);
      } finally {
        document.body.removeChild(area);
      }
    });
  }

  function addButtons() {
    var blocks = document.querySelectorAll(".codeblock");
    for (var i = 0; i < blocks.length; i++) {
      (function (block) {
        var pre = block.querySelector("pre");
        if (!pre || block.querySelector(".copy")) return;
        var button = document.createElement("button");
        button.type = "button";
        button.className = "copy";
        button.textContent = "Copy";
        button.setAttribute("aria-label", "Copy code to clipboard");
        var status = document.createElement("span");
        status.className = "visually-hidden";
        status.setAttribute("role", "status");
        button.addEventListener("click", function () {
          var text = textToCopy(pre);
          block.setAttribute("data-copied-text", text);
          copy(text).then(function () {
            button.textContent = "Copied";
            status.textContent = "Copied to clipboard";
          }, function () {
            button.textContent = "Press Ctrl+C";
            status.textContent = "Copy failed";
          }).then(function () {
            setTimeout(function () { button.textContent = "Copy"; status.textContent = ""; }, 2000);
          });
        });
        block.appendChild(button);
        block.appendChild(status);
      })(blocks[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", addButtons);
  } else {
    addButtons();
  }
})();
