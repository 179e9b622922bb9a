// Quire back-office: progressive enhancement of server-rendered forms.
// Everything works without this script; it adds list editing in place,
// fills a new page's slug from its name, saves drafts as the person types
// and reads times in the browser's time zone.
"use strict";

(function () {
  // ---- list fields: add, remove, reorder; names renumbered on submit ----
  function items(list) {
    return Array.prototype.filter.call(list.children, function (el) { return el.matches("li.item"); });
  }

  function enhanceList(list) {
    if (list.dataset.enhanced) return;
    list.dataset.enhanced = "1";
    items(list).forEach(function (li) {
      var actions = li.querySelector(":scope > .item-actions");
      if (actions) actions.hidden = false;
    });
    var add = document.createElement("button");
    add.type = "button";
    add.className = "add-item";
    add.textContent = "Add item";
    add.addEventListener("click", function () {
      var blank = list.querySelector(":scope > li.item[data-blank]");
      if (!blank) return;
      var copy = blank.cloneNode(true);
      copy.querySelectorAll("input, textarea, select").forEach(function (el) {
        if (el.type === "hidden") return;
        if (el.type === "checkbox") el.checked = false; else el.value = "";
      });
      list.appendChild(copy);
      renumber(list);
      var first = copy.querySelector("input:not([type=hidden]), textarea, select");
      if (first) first.focus();
    });
    list.after(add);
  }

  function renumber(list) {
    var base = list.dataset.list;
    items(list).forEach(function (li, i) {
      li.querySelectorAll("[name], [id], [for], [data-list], [aria-describedby]").forEach(function (el) {
        ["name", "id", "for", "data-list", "aria-describedby"].forEach(function (attr) {
          var v = el.getAttribute(attr);
          if (v === null) return;
          var re = new RegExp("(^|[\\s-])" + base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "\\.\\d+(?=$|\\.|\\s)", "g");
          el.setAttribute(attr, v.replace(re, "$1" + base + "." + i));
        });
      });
      var legend = li.querySelector(":scope > fieldset > legend, :scope > .field > label");
      if (legend && !li.hasAttribute("data-blank")) legend.textContent = "Item " + (i + 1);
    });
  }

  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button[data-act]");
    if (!btn) return;
    var li = btn.closest("li.item");
    var list = li && li.parentElement;
    if (!list) return;
    var act = btn.dataset.act;
    if (act === "remove") {
      li.removeAttribute("data-blank");
      li.remove();
    } else if (act === "up" && li.previousElementSibling) {
      list.insertBefore(li, li.previousElementSibling);
    } else if (act === "down" && li.nextElementSibling) {
      list.insertBefore(li.nextElementSibling, li);
    }
    renumber(list);
    btn.focus();
  });

  document.addEventListener("submit", function (ev) {
    ev.target.querySelectorAll("ol.items[data-list]").forEach(renumber);
  }, true);

  // ---- arranging: a grip on each item of a list marked data-sortable (a
  // page's sections, sibling pages, a menu's items) and of a form's list.
  // Dragged, or with the keys on the grip (Alt+Up/Down moves it at once;
  // Space or Enter picks it up, the arrows move it, Space or Enter puts it
  // down, Escape puts it back), it moves among its siblings (the same
  // data-group, its sub-items along). A record's move is one request to
  // its move address, before or after its new neighbour; a form's list
  // only changes the form. A live region says where it went. ----
  var live, drag = null, held = null, armed = null;
  function say(text) { live.textContent = text; }
  function isItem(el) { return el.matches("[data-id], li.item"); }
  function itemOf(grip) { return grip.closest("[data-id], li.item"); }
  function depth(el) { return +(el.dataset.depth || 0); }
  function peers(item) {
    return Array.prototype.filter.call(item.parentElement.children, function (el) {
      return isItem(el) && (el.dataset.group || "") === (item.dataset.group || "");
    });
  }
  // An item with the sub-items shown under it.
  function block(item) {
    var out = [item], next = item.nextElementSibling;
    while (next && depth(next) > depth(item)) { out.push(next); next = next.nextElementSibling; }
    return out;
  }
  function putBefore(item, target) {
    block(item).forEach(function (el) { target.parentElement.insertBefore(el, target); });
  }
  function putAfter(item, target) {
    var tail = block(target), next = tail[tail.length - 1].nextElementSibling, box = target.parentElement;
    if (next === item) return;
    block(item).forEach(function (el) { box.insertBefore(el, next); });
  }
  function nameOf(item) {
    var input = item.querySelector("input:not([type=hidden]), textarea");
    var legend = item.querySelector("legend, label");
    return item.dataset.name || (input && input.value) || (legend && legend.textContent) || "the item";
  }
  function where(item) {
    var list = peers(item);
    return nameOf(item) + " to position " + (list.indexOf(item) + 1) + " of " + list.length;
  }
  function back(box, order) { order.forEach(function (el) { box.appendChild(el); }); }
  // One place up (-1) or down (1), moving the neighbour so the focus stays.
  function step(item, by) {
    var list = peers(item), other = list[list.indexOf(item) + by];
    if (!other) return false;
    if (by < 0) putAfter(other, item); else putBefore(other, item);
    return true;
  }
  function buttons(box) {
    if (box.hasAttribute("data-partial")) return;
    Array.prototype.forEach.call(box.children, function (el) {
      if (!isItem(el)) return;
      var list = peers(el), up = el.querySelector(".moves [value=up]"), down = el.querySelector(".moves [value=down]");
      if (up) up.disabled = list[0] === el;
      if (down) down.disabled = list[list.length - 1] === el;
    });
  }
  // The move is over: said, renumbered in a form, or sent.
  function settle(item, order) {
    var box = item.parentElement, list = peers(item), at = list.indexOf(item);
    if (Array.prototype.every.call(box.children, function (el, i) { return el === order[i]; })) {
      say(nameOf(item) + " stays at position " + (at + 1) + " of " + list.length + ".");
      return;
    }
    if (!item.dataset.move) {
      renumber(box);
      var f = box.closest("form");
      if (f) f.dataset.dirty = "1";
      say("Moved " + where(item) + ".");
      return;
    }
    var data = new URLSearchParams();
    if (at > 0) data.set("after", list[at - 1].dataset.id); else data.set("before", list[1].dataset.id);
    var said = where(item);
    fetch(item.dataset.move, { method: "POST", credentials: "same-origin", headers: { "x-csrf-token": csrfToken() }, body: data, redirect: "manual" })
      .then(function (r) {
        if (r.type !== "opaqueredirect" && !r.ok) throw new Error(r.status);
        buttons(box);
        say("Moved " + said + ".");
      })
      .catch(function () {
        back(box, order);
        say("Could not move " + nameOf(item) + "; it is back at " + where(item).replace(/^.*? to /, "") + ".");
      });
  }
  function enhanceSortable(root) {
    root.querySelectorAll("[data-sortable], ol.items[data-list]").forEach(function (box) {
      Array.prototype.forEach.call(box.children, function (item) {
        var at = isItem(item) && (item.querySelector(":scope > .item-actions") || item.querySelector(".moves"));
        if (!at || at.querySelector(":scope > .grip")) return;
        var grip = document.createElement("button");
        grip.type = "button";
        grip.className = "grip";
        grip.textContent = "⠿";
        grip.setAttribute("aria-label", "Move " + nameOf(item));
        grip.setAttribute("aria-describedby", "sort-help");
        grip.setAttribute("aria-pressed", "false");
        at.insertBefore(grip, at.firstChild);
      });
      if (live) return;
      live = document.createElement("div");
      live.className = "sr";
      live.id = "sort-live";
      live.setAttribute("role", "status");
      document.body.appendChild(live);
      var help = document.createElement("p");
      help.id = "sort-help";
      help.hidden = true;
      help.textContent = "Drag to move, or: Alt+Up or Alt+Down moves it at once; Space or Enter picks it up, Up and Down move it, Space or Enter puts it down, Escape puts it back.";
      document.body.appendChild(help);
    });
  }
  document.addEventListener("pointerdown", function (ev) {
    var grip = ev.target.closest && ev.target.closest(".grip");
    if (!grip) return;
    armed = itemOf(grip);
    armed.draggable = true;
  });
  document.addEventListener("pointerup", function () {
    if (armed && !drag) armed.removeAttribute("draggable");
  });
  document.addEventListener("dragstart", function (ev) {
    if (!armed || ev.target !== armed) return;
    var box = armed.parentElement;
    drag = { item: armed, box: box, order: Array.prototype.slice.call(box.children), dropped: false };
    ev.dataTransfer.effectAllowed = "move";
    ev.dataTransfer.setData("text/plain", nameOf(armed));
    armed.classList.add("dragging");
  });
  document.addEventListener("dragover", function (ev) {
    if (!drag) return;
    var t = ev.target.closest ? ev.target : ev.target.parentElement;
    while (t && t.parentElement !== drag.box) t = t.parentElement;
    if (!t) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = "move";
    if (block(drag.item).indexOf(t) >= 0) return;
    // The sibling whose place it is (a sub-item stands for its parent's).
    var g = drag.item.dataset.group || "", head = t;
    while (head && !(isItem(head) && (head.dataset.group || "") === g)) head = head.previousElementSibling;
    if (!head || head === drag.item) return;
    var box = head.getBoundingClientRect();
    if (head === t && ev.clientY < box.top + box.height / 2) putBefore(drag.item, head); else putAfter(drag.item, head);
  });
  document.addEventListener("drop", function (ev) {
    if (!drag) return;
    ev.preventDefault();
    drag.dropped = true;
  });
  document.addEventListener("dragend", function () {
    if (!drag) return;
    var d = drag;
    drag = null;
    armed = null;
    d.item.classList.remove("dragging");
    d.item.removeAttribute("draggable");
    if (d.dropped) settle(d.item, d.order); else { back(d.box, d.order); say("Move cancelled."); }
  });
  function putDown(cancel) {
    var h = held;
    held = null;
    h.item.classList.remove("held");
    h.grip.setAttribute("aria-pressed", "false");
    if (cancel) {
      back(h.item.parentElement, h.order);
      h.grip.focus();
      say("Move cancelled; " + where(h.item).replace(" to ", " is back at ") + ".");
    } else settle(h.item, h.order);
  }
  document.addEventListener("keydown", function (ev) {
    var grip = ev.target.closest && ev.target.closest(".grip");
    if (!grip) return;
    var item = itemOf(grip), key = ev.key, order = Array.prototype.slice.call(item.parentElement.children);
    var by = key === "ArrowUp" ? -1 : key === "ArrowDown" ? 1 : 0;
    if (held && held.item !== item) putDown(true);
    if (by && ev.altKey && !held) {
      if (step(item, by)) settle(item, order);
    } else if (by && held) {
      step(item, by);
      say(where(item).replace(" to ", ", "));
    } else if (key === " " || key === "Enter") {
      if (held) putDown(false);
      else {
        held = { item: item, grip: grip, order: order };
        item.classList.add("held");
        grip.setAttribute("aria-pressed", "true");
        say("Picked up " + where(item).replace(" to ", " at ") + ". Up and Down move it, Space or Enter puts it down, Escape puts it back.");
      }
    } else if (key === "Escape" && held) {
      putDown(true);
      ev.stopImmediatePropagation();
    } else return;
    ev.preventDefault();
  });
  document.addEventListener("focusout", function (ev) {
    if (held && ev.target === held.grip && !held.item.contains(ev.relatedTarget)) putDown(true);
  });

  // Forms with unsaved edits are not replaced under the person's hands,
  // and leaving the screen with one asks first (saving it does not).
  document.addEventListener("input", function (ev) {
    var f = ev.target.closest && ev.target.closest("#main form[method=post]");
    if (f) f.dataset.dirty = "1";
  });
  var submitting = false;
  // A form that says so asks before it is sent (restoring, revoking).
  // One sent in place (data-in-place, by the sidebar) leaves the screen as
  // it is, so leaving it afterwards still asks.
  document.addEventListener("submit", function (ev) {
    var ask = ev.target.dataset && ev.target.dataset.confirm;
    if (ask && !window.confirm(ask)) { ev.preventDefault(); return; }
    if (!ev.target.hasAttribute("data-in-place")) submitting = true;
  });
  window.addEventListener("beforeunload", function (ev) {
    if (submitting || !document.querySelector("#main form[data-dirty]")) return;
    ev.preventDefault();
    ev.returnValue = "";
  });

  // ---- a new page's slug follows its name until edited by hand ----
  function slugify(s) {
    return s.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 100);
  }
  document.querySelectorAll("input[data-slug-from]").forEach(function (slug) {
    var from = document.getElementById(slug.dataset.slugFrom);
    if (!from) return;
    var touched = slug.value !== "";
    slug.addEventListener("input", function () { touched = true; });
    from.addEventListener("input", function () { if (!touched) slug.value = slugify(from.value); });
  });

  // ---- markdown fields: a toolbar with shortcuts, a live preview beside
  // the text rendered by the server (POST /preview, the renderer and rule
  // of links the server keeps; the fragment it answers holds no markup the
  // person typed), images from the library, and an image pasted or dropped
  // uploaded into the library (as the Media screen uploads) and inserted.
  // Without the script the field is a plain textarea. ----
  var csrfMeta = document.querySelector('meta[name="csrf-token"]');
  function csrfToken() { return csrfMeta ? csrfMeta.getAttribute("content") : ""; }
  function markdown(target, source) {
    var seq = String((Number(target.dataset.seq) || 0) + 1);
    target.dataset.seq = seq;
    fetch("/preview", {
      method: "POST",
      credentials: "same-origin",
      headers: { "x-csrf-token": csrfToken() },
      body: new URLSearchParams({ text: source })
    }).then(function (r) {
      if (!r.ok) throw new Error("preview " + r.status);
      return r.text();
    }).then(function (html) {
      if (target.dataset.seq !== seq) return;
      var doc = new DOMParser().parseFromString(html, "text/html");
      target.replaceChildren.apply(target, Array.prototype.slice.call(doc.body.childNodes));
    }).catch(function () {
      if (target.dataset.seq === seq) target.textContent = "The preview could not be made; the text is unchanged.";
    });
  }

  // Replaces the text from `start` to `end` with `text` as typing would
  // (so Undo takes it back), then selects `from`..`to` of what was put in.
  function put(area, start, end, text, from, to) {
    area.focus();
    area.setSelectionRange(start, end);
    if (!document.execCommand || !document.execCommand("insertText", false, text)) {
      area.setRangeText(text, start, end, "end");
      area.dispatchEvent(new Event("input", { bubbles: true }));
    }
    area.setSelectionRange(start + (from === undefined ? text.length : from), start + (to === undefined ? text.length : to));
  }
  // Around the selection (or a placeholder): **bold**, _italic_, `code`;
  // said twice, the marks come off.
  function wrap(area, mark, placeholder) {
    var v = area.value, s = area.selectionStart, e = area.selectionEnd, n = mark.length;
    if (v.slice(s - n, s) === mark && v.slice(e, e + n) === mark) {
      put(area, s - n, e + n, v.slice(s, e), 0, e - s);
      return;
    }
    var inner = v.slice(s, e) || placeholder;
    put(area, s, e, mark + inner + mark, n, n + inner.length);
  }
  // Each line of the selection starts with `prefix` (a heading, a list
  // item, a task, a quote); when every one already does, it comes off.
  function lines(area, prefix) {
    var v = area.value, s = v.lastIndexOf("\n", area.selectionStart - 1) + 1;
    var e = v.indexOf("\n", area.selectionEnd); if (e < 0) e = v.length;
    var rows = v.slice(s, e).split("\n");
    var all = rows.every(function (r) { return r.indexOf(prefix) === 0; });
    var text = rows.map(function (r) { return all ? r.slice(prefix.length) : prefix + r.replace(/^(#{1,6} |> |- \[[ xX]\] |[-*+] )/, ""); }).join("\n");
    put(area, s, e, text);
  }
  function link(area) {
    var v = area.value, s = area.selectionStart, e = area.selectionEnd, chosen = v.slice(s, e);
    if (/^(https?:\/\/|\/)\S*$/.test(chosen)) { put(area, s, e, "[](" + chosen + ")", 1, 1); return; }
    var words = chosen || "words";
    put(area, s, e, "[" + words + "](https://)", words.length + 3, words.length + 11);
  }
  function code(area) {
    var chosen = area.value.slice(area.selectionStart, area.selectionEnd);
    if (chosen.indexOf("\n") < 0) { wrap(area, "`", "code"); return; }
    put(area, area.selectionStart, area.selectionEnd, "```\n" + chosen.replace(/\n$/, "") + "\n```\n");
  }
  // What an image is called in the text: its alt text, or its file's
  // name in words; then its markdown.
  function imageWords(alt, filename) {
    return (alt || String(filename || "image").replace(/\.[a-z0-9]+$/i, "").replace(/[-_]+/g, " ")).replace(/[\[\]]/g, "");
  }
  function imageText(words, url) { return "![" + words + "](" + url + ")"; }

  var TOOLS = [
    ["Bold", "B", function (a) { wrap(a, "**", "bold"); }],
    ["Italic", "I", function (a) { wrap(a, "_", "italic"); }],
    ["Heading", "Shift+H", function (a) { lines(a, "## "); }],
    ["Link", "K", link],
    ["List", "Shift+8", function (a) { lines(a, "- "); }],
    ["Tasks", "Shift+L", function (a) { lines(a, "- [ ] "); }],
    ["Quote", "Shift+.", function (a) { lines(a, "> "); }],
    ["Code", "E", code]
  ];
  var mac = /Mac|iP(hone|ad)/.test(navigator.platform);
  function keysOf(tool) { return (mac ? "Meta+" : "Control+") + tool[1].replace(".", "Period"); }
  function toolFor(ev) {
    if (!(mac ? ev.metaKey : ev.ctrlKey) || ev.altKey) return null;
    var key = ev.code === "Digit8" ? "8" : ev.code === "Period" ? "." : ev.key.toUpperCase();
    return TOOLS.filter(function (t) { return t[1] === (ev.shiftKey ? "Shift+" : "") + key; })[0];
  }

  function enhanceMarkdown(root) {
    root.querySelectorAll("textarea[data-markdown]").forEach(function (area) {
      if (area.dataset.enhanced) return;
      area.dataset.enhanced = "1";
      var editor = document.createElement("div");
      editor.className = "md-editor";
      var bar = document.createElement("div");
      bar.className = "md-toolbar";
      bar.setAttribute("role", "toolbar");
      bar.setAttribute("aria-label", "Formatting");
      bar.setAttribute("aria-controls", area.id);
      function button(text, title) {
        var b = document.createElement("button");
        b.type = "button";
        b.textContent = text;
        if (title) b.title = title;
        bar.appendChild(b);
        return b;
      }
      TOOLS.forEach(function (tool) {
        var b = button(tool[0], tool[0] + " (" + (mac ? "⌘" : "Ctrl+") + tool[1] + ")");
        b.setAttribute("aria-keyshortcuts", keysOf(tool));
        b.addEventListener("click", function () { tool[2](area); });
      });
      var image = button("Image", "An image from the library, or paste or drop one in the text");
      image.setAttribute("aria-expanded", "false");
      var toggle = button("Preview");
      toggle.className = "preview-toggle";
      toggle.setAttribute("aria-pressed", "false");
      var status = document.createElement("p");
      status.className = "hint md-status";
      status.setAttribute("role", "status");
      var grid = document.createElement("ul");
      grid.className = "picker";
      grid.hidden = true;
      var view = document.createElement("div");
      view.className = "md-preview";
      view.hidden = true;
      view.tabIndex = 0;
      view.setAttribute("aria-label", "Preview");
      view.setAttribute("role", "region");
      area.before(editor);
      editor.append(bar, grid, area, view);
      editor.after(status);

      function show(on) {
        view.hidden = !on;
        editor.classList.toggle("md-split", on);
        toggle.setAttribute("aria-pressed", String(on));
        if (on) markdown(view, area.value);
      }
      toggle.addEventListener("click", function () {
        var on = view.hidden;
        try { localStorage.setItem("quire.preview", on ? "1" : ""); } catch (e) { /* private mode */ }
        show(on);
      });
      try { if (localStorage.getItem("quire.preview")) show(true); } catch (e) { /* private mode */ }
      var pending = null;
      area.addEventListener("input", function () {
        if (view.hidden) return;
        clearTimeout(pending);
        pending = setTimeout(function () { markdown(view, area.value); }, 250);
      });

      area.addEventListener("keydown", function (ev) {
        var tool = toolFor(ev);
        if (tool) {
          ev.preventDefault();
          ev.stopPropagation();
          tool[2](area);
          return;
        }
        // Enter in a list item starts the next one; in an empty one, ends
        // the list with a blank line.
        if (ev.key !== "Enter" || ev.shiftKey || ev.ctrlKey || ev.metaKey || ev.altKey || area.selectionStart !== area.selectionEnd) return;
        var v = area.value, at = area.selectionStart, s = v.lastIndexOf("\n", at - 1) + 1;
        var m = /^(\s*)(- \[[ xX]\] |[-*+] |(\d+)\. |> )/.exec(v.slice(s, at));
        if (!m) return;
        ev.preventDefault();
        if (v.slice(s, at) === m[0]) { put(area, s, at, "\n"); return; }
        var next = m[3] ? (Number(m[3]) + 1) + ". " : m[2].replace(/\[[xX]\]/, "[ ]");
        put(area, at, at, "\n" + m[1] + next);
      });

      image.addEventListener("click", function () {
        if (!grid.hidden) { grid.hidden = true; image.setAttribute("aria-expanded", "false"); return; }
        grid.hidden = false;
        image.setAttribute("aria-expanded", "true");
        grid.textContent = "Loading…";
        fetch("/api/v1/images?status=completed&limit=48", { credentials: "same-origin" })
          .then(function (r) { return r.json(); })
          .then(function (list) {
            grid.textContent = "";
            if (!list.items || !list.items.length) { grid.textContent = "The library has no images yet: paste or drop one in the text."; return; }
            list.items.forEach(function (img) {
              var li = document.createElement("li");
              var pick = document.createElement("button");
              pick.type = "button";
              var words = imageWords(img.alt, img.filename);
              pick.setAttribute("aria-label", "Insert " + words);
              var t = document.createElement("img");
              var small = img.variants && img.variants.thumbnail;
              t.src = (small && (small.webp || small.url)) || img.url;
              t.alt = "";
              t.width = 96;
              t.height = 72;
              pick.appendChild(t);
              pick.addEventListener("click", function () {
                grid.hidden = true;
                image.setAttribute("aria-expanded", "false");
                put(area, area.selectionStart, area.selectionEnd, imageText(words, img.url));
              });
              li.appendChild(pick);
              grid.appendChild(li);
            });
          })
          .catch(function () { grid.textContent = "The library could not be loaded."; });
      });

      // An image file pasted or dropped: uploaded into the library, its
      // place in the text held by a note the finished image replaces.
      var uploads = 0;
      function upload(file) {
        var mark = "![Uploading " + file.name.replace(/[\[\]()]/g, "") + "…](#upload-" + (++uploads) + ")";
        put(area, area.selectionStart, area.selectionEnd, mark);
        status.textContent = "Uploading " + file.name + "…";
        function done(text, said) {
          // Replaced where the person's cursor is not, wherever it is now.
          var at = area.value.indexOf(mark), end = at + mark.length, d = text.length - mark.length;
          if (at >= 0) {
            var s = area.selectionStart, e = area.selectionEnd;
            area.setRangeText(text, at, end);
            area.setSelectionRange(s >= end ? s + d : Math.min(s, at), e >= end ? e + d : Math.min(e, at));
            area.dispatchEvent(new Event("input", { bubbles: true }));
          }
          status.textContent = said;
        }
        function ready(img, tries) {
          if (img.status === "completed") { done(imageText(imageWords(img.alt, file.name), img.url), file.name + " is in the library and the text."); return; }
          if (img.status !== "processing" || tries > 120) { done("", file.name + " could not be processed: " + (img.error || img.status)); return; }
          setTimeout(function () {
            fetch("/api/v1/images/" + encodeURIComponent(img.id), { credentials: "same-origin" })
              .then(function (r) { return r.json(); })
              .then(function (next) { ready(next, tries + 1); })
              .catch(function () { ready(img, tries + 1); });
          }, 500);
        }
        var data = new FormData();
        data.append("file", file);
        fetch("/api/v1/images", { method: "POST", credentials: "same-origin", headers: { "x-csrf-token": csrfToken() }, body: data })
          .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
          .then(function (r) {
            if (r.ok) ready(r.body, 0); else done("", file.name + " was refused: " + (r.body.error || "not an image"));
          })
          .catch(function () { done("", file.name + " did not reach the server."); });
      }
      function images(list) {
        return Array.prototype.filter.call(list || [], function (f) { return /^image\//.test(f.type); });
      }
      area.addEventListener("paste", function (ev) {
        var files = images(ev.clipboardData && ev.clipboardData.files);
        if (!files.length) return;
        ev.preventDefault();
        files.forEach(upload);
      });
      area.addEventListener("dragover", function (ev) {
        if (ev.dataTransfer && Array.prototype.indexOf.call(ev.dataTransfer.types, "Files") >= 0) ev.preventDefault();
      });
      area.addEventListener("drop", function (ev) {
        var files = images(ev.dataTransfer && ev.dataTransfer.files);
        if (!files.length) return;
        ev.preventDefault();
        files.forEach(upload);
      });
    });
  }

  // ---- the template chosen for a new section says what it is for, its
  // sketch beside ----
  var template = document.getElementById("template"), about = document.getElementById("template-about");
  if (template && about) {
    template.addEventListener("change", function () {
      var dd = document.querySelector('dd[data-template="' + CSS.escape(template.value) + '"]');
      if (dd) about.replaceChildren.apply(about, Array.prototype.map.call(dd.childNodes, function (n) { return n.cloneNode(true); }));
      else about.textContent = "What each one is for is listed below.";
    });
  }

  // ---- focus the error summary after a refused save ----
  var summary = document.getElementById("error-summary");
  if (summary) summary.focus();

  // The target picker suggests what the chosen type can point at.
  document.querySelectorAll("select[data-target-type]").forEach(function (select) {
    var target = document.getElementById(select.dataset.targetType);
    select.addEventListener("change", function () {
      if (select.value === "url" || select.value === "placeholder") target.removeAttribute("list");
      else target.setAttribute("list", "targets-" + select.value);
    });
  });

  // ---- drafts save themselves: an editor's form marked data-autosave is
  // sent in the background once the person has stopped typing for two
  // seconds, as its Save button sends it but without an entry's status (so
  // an autosave changes the draft only, never what is published). The
  // version the server answers with is taken up, so the next save is not
  // refused as stale, and leaving the screen no longer asks. ----
  var AUTOSAVE_MS = 2000;
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function enhanceAutosave(root) {
    root.querySelectorAll("form[data-autosave]").forEach(function (form) {
      if (form.dataset.enhanced) return;
      form.dataset.enhanced = "1";
      var status = document.createElement("p");
      status.className = "hint autosave";
      status.setAttribute("role", "status");
      status.setAttribute("aria-live", "polite");
      var buttons = form.querySelectorAll("button[type=submit]");
      var last = buttons[buttons.length - 1];
      if (last) last.after(status); else form.appendChild(status);
      var timer = null;
      var busy = false;
      var again = false;
      var submitAfter = false;
      var edits = 0;
      function later() {
        clearTimeout(timer);
        timer = setTimeout(save, AUTOSAVE_MS);
      }
      function said(text, failed) {
        status.textContent = text;
        status.classList.toggle("error", !!failed);
      }
      function save() {
        timer = null;
        // Values the agent proposed wait for the person: none is saved
        // until they keep it.
        if (form.querySelector("[data-proposed]")) return;
        if (busy) { again = true; return; }
        busy = true;
        again = false;
        var sent = edits;
        form.querySelectorAll("ol.items[data-list]").forEach(renumber);
        var data = new FormData(form);
        data.delete("entry.status");
        fetch(form.action, {
          method: "POST",
          credentials: "same-origin",
          headers: { "x-csrf-token": csrfMeta ? csrfMeta.getAttribute("content") : "" },
          body: new URLSearchParams(data)
        }).then(function (r) {
          return r.text().then(function (html) {
            var doc = new DOMParser().parseFromString(html, "text/html");
            if (!r.ok) {
              var why = doc.querySelector("#main .error, .error-message");
              said("Draft not saved: " + (why ? why.textContent.trim() : "the server answered " + r.status) + ". Save to see why.", true);
              return;
            }
            var fresh = doc.querySelector('form[action="' + form.getAttribute("action") + '"] input[name="_version"]');
            var mine = form.querySelector('input[name="_version"]');
            if (fresh && mine) mine.value = fresh.value;
            // Where the document stands, and its version, as they are now.
            ["[data-publication]", "[data-version]"].forEach(function (which) {
              var latest = doc.querySelector(which);
              var here = document.querySelector(which);
              if (latest && here) here.replaceWith(document.importNode(latest, true));
            });
            var now = new Date();
            said("Draft saved at " + pad(now.getHours()) + ":" + pad(now.getMinutes()));
            if (edits === sent) delete form.dataset.dirty;
          });
        }).catch(function () {
          said("Draft not saved: the server could not be reached.", true);
        }).then(function () {
          busy = false;
          if (submitAfter) { submitAfter = false; form.requestSubmit(); }
          else if (again) save();
        });
      }
      form.addEventListener("input", function () { edits++; later(); });
      form.addEventListener("change", function () { edits++; later(); });
      form.addEventListener("submit", function (ev) {
        clearTimeout(timer);
        timer = null;
        // Sent now, the form would carry the version before the autosave
        // under way: it is sent once that has answered.
        if (busy) { ev.preventDefault(); submitAfter = true; }
      });
    });
  }

  // ---- times: a time typed in a datetime-local input is the browser's
  // local time, sent as UTC beside it (at_utc); without this script the
  // server reads it as UTC, as its label says. Times shown are turned into
  // local time too. ----
  var zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
  function enhanceTimes(root) {
    root.querySelectorAll("input[data-local-time]").forEach(function (input) {
      if (input.dataset.enhanced) return;
      input.dataset.enhanced = "1";
      var label = input.form && input.form.querySelector('label[for="' + input.id + '"]');
      if (label) label.textContent = label.textContent.replace("(UTC)", "(your time" + (zone ? ", " + zone : "") + ")");
      var utc = input.form && input.form.querySelector('input[name="at_utc"]');
      if (!utc) return;
      input.form.addEventListener("submit", function () {
        var when = input.value ? new Date(input.value) : null;
        utc.value = when && !isNaN(when.getTime()) ? when.toISOString() : "";
      });
    });
    root.querySelectorAll("time[data-local]").forEach(function (t) {
      if (t.dataset.enhanced) return;
      t.dataset.enhanced = "1";
      var when = new Date(t.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      t.title = t.textContent;
      t.textContent = when.getFullYear() + "-" + pad(when.getMonth() + 1) + "-" + pad(when.getDate()) + " " +
        pad(when.getHours()) + ":" + pad(when.getMinutes());
    });
    // A new release's name is asked for only when "New release…" is chosen.
    root.querySelectorAll("select[data-new-release]").forEach(function (select) {
      var field = document.getElementById(select.dataset.newRelease);
      if (!field || select.dataset.enhanced) return;
      select.dataset.enhanced = "1";
      function sync() { field.hidden = select.value !== ""; }
      select.addEventListener("change", sync);
      sync();
    });
  }

  // ---- a long select (the parent page picker) gets a search box above
  // it that narrows its options to those whose name holds what is typed ----
  function enhanceFilterable(root) {
    root.querySelectorAll("select[data-filterable]").forEach(function (select) {
      if (select.dataset.enhanced || select.options.length < 6) return;
      select.dataset.enhanced = "1";
      var search = document.createElement("input");
      search.type = "search";
      search.className = "filter-options";
      search.id = select.id + "-search";
      search.placeholder = "Search the pages";
      search.setAttribute("aria-label", "Search the choices of " + (select.labels[0] ? select.labels[0].textContent : "the list"));
      search.setAttribute("aria-controls", select.id);
      select.insertAdjacentElement("beforebegin", search);
      search.addEventListener("input", function () {
        var words = search.value.trim().toLowerCase();
        var first = null;
        Array.prototype.forEach.call(select.options, function (o) {
          var shown = !words || !o.value || o.selected || o.textContent.toLowerCase().indexOf(words) >= 0;
          o.hidden = !shown;
          if (shown && o.value && !first && o.textContent.toLowerCase().indexOf(words) >= 0) first = o;
        });
        if (words && first) select.size = Math.min(8, select.querySelectorAll("option:not([hidden])").length + 1);
        else select.removeAttribute("size");
      });
    });
  }

  window.quireEnhance = function (root) {
    root.querySelectorAll("ol.items[data-list]").forEach(enhanceList);
    enhanceSortable(root);
    enhanceMarkdown(root);
    enhanceAutosave(root);
    enhanceTimes(root);
    enhanceFilterable(root);
  };
  window.quireEnhance(document);
})();

// ---- the frame: the navigation folds behind Menu on a small screen, and
// the colour theme follows the system's unless the person chose one here
// (remembered in a cookie, so the server draws the screen in it) ----
(function () {
  var nav = document.getElementById("side-nav");
  var menu = document.getElementById("nav-toggle");
  if (nav && menu) {
    document.body.classList.add("js-nav");
    menu.hidden = false;
    menu.addEventListener("click", function () {
      var opened = nav.classList.toggle("open");
      menu.setAttribute("aria-expanded", String(opened));
      if (opened) { var first = nav.querySelector("a"); if (first) first.focus(); }
    });
    document.addEventListener("keydown", function (ev) {
      if (ev.key !== "Escape" || !nav.classList.contains("open") || ev.defaultPrevented) return;
      nav.classList.remove("open");
      menu.setAttribute("aria-expanded", "false");
      menu.focus();
    });
  }
  var button = document.getElementById("theme-toggle");
  if (!button) return;
  var root = document.documentElement;
  var system = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function dark() { return root.dataset.theme ? root.dataset.theme === "dark" : !!(system && system.matches); }
  function sync() {
    button.setAttribute("aria-pressed", String(dark()));
    button.value = dark() ? "light" : "dark";
  }
  sync();
  if (system && system.addEventListener) system.addEventListener("change", sync);
  button.form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var wanted = dark() ? "light" : "dark";
    // Back to the system's own when that is what is wanted.
    var follows = system && (system.matches ? "dark" : "light") === wanted;
    if (follows) delete root.dataset.theme; else root.dataset.theme = wanted;
    sync();
    var data = new URLSearchParams(new FormData(button.form));
    data.set("theme", follows ? "" : wanted);
    fetch(button.form.action, { method: "POST", credentials: "same-origin", body: data, redirect: "manual" })
      .catch(function () { /* remembered next time it works */ });
  });
})();

// ---- the AI sidebar: chat with an agent over the REST API and its event
// stream (AG-UI over SSE), answer approvals inline, undo a turn. The open
// conversation follows the person from screen to screen (and through a
// reload): the server renders it as it happened, then the stream goes on
// from where that ends ----------
(function () {
  var aside = document.getElementById("ai");
  var toggle = document.getElementById("ai-toggle");
  if (!aside || !toggle) return;
  var csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  var log = document.getElementById("ai-log");
  var form = document.getElementById("ai-form");
  var input = document.getElementById("ai-input");
  var agentSelect = document.getElementById("ai-agent");
  var contextLine = document.getElementById("ai-context");
  var body = document.body;
  var store = window.sessionStorage;
  var state = { session: store.getItem("quire.ai.session"), turn: null, source: null, changed: [], busy: false };
  var texts = {};
  // Tools whose words are what the agent says, not calls to show.
  var saying = ["finalAnswer", "acknowledgeRequest"];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function add(node) { log.appendChild(node); log.scrollTop = log.scrollHeight; return node; }
  function note(text, cls) { return add(el("li", "ai-note " + (cls || ""), text)); }
  function short(v) {
    var s = typeof v === "string" ? v : JSON.stringify(v);
    return s.length > 120 ? s.slice(0, 117) + "…" : s;
  }
  function call(method, url, payload) {
    return fetch(url, {
      method: method,
      headers: Object.assign({ "x-csrf-token": csrf }, payload ? { "content-type": "application/json" } : {}),
      body: payload ? JSON.stringify(payload) : undefined,
      credentials: "same-origin",
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
        return j;
      });
    });
  }
  // A piece of the sidebar the server renders, as a parsed document.
  function rendered(url) {
    return fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.text();
    }).then(function (html) { return new DOMParser().parseFromString(html, "text/html"); });
  }
  function inLog(selector, value) { return log.querySelector(selector.replace("?", CSS.escape(value))); }

  // What is on screen, sent with each message as the turn's context, and
  // named in the banner as it is now (a turn may rename or archive it).
  var context = null;
  function showContext(name, gone) {
    context.name = name;
    contextLine.textContent = "Working on: " + context.entity + " “" + name + "”" + (gone ? " (archived by the agent's turn)" : "");
  }
  if (body.dataset.entity) {
    context = { entity: body.dataset.entity, id: body.dataset.entityId };
    if (body.dataset.pageId) context.pageId = body.dataset.pageId;
    showContext(body.dataset.entityName);
    contextLine.hidden = false;
  }

  // The record form on screen, as the person has it now (unsaved values
  // too): sent with each message as their own input.
  function recordForm() { return document.querySelector("#main form[data-record-form]"); }
  function fieldsOf(form) {
    return Array.prototype.filter.call(form.elements, function (e) {
      return e.name && !e.disabled && e.name.charAt(0) !== "_" &&
        ["hidden", "password", "file", "submit", "button", "reset"].indexOf(e.type) < 0;
    });
  }
  function formOnScreen() {
    var f = recordForm();
    if (!f) return null;
    var values = {}, size = 0;
    fieldsOf(f).forEach(function (e) {
      if (e.type === "radio" && !e.checked) return;
      var v = e.type === "checkbox" ? e.checked : String(e.value).slice(0, 4000);
      size += String(v).length;
      if (size <= 16000) values[e.name] = v;
    });
    return Object.keys(values).length ? values : null;
  }
  function labelOf(e) {
    var l = e.id && document.querySelector('label[for="' + CSS.escape(e.id) + '"]');
    return l ? l.textContent.trim() : e.name;
  }
  // Values the agent proposes appear in their fields, marked, until the
  // person keeps or discards them; nothing is saved until they save.
  function proposed(p) {
    var f = recordForm();
    var values = (p && p.values) || {};
    var li = add(el("li", "ai-note ai-proposal"));
    if (!f) { li.textContent = "The agent proposed values for a form that is not on this screen."; return; }
    var before = [], missing = [];
    Object.keys(values).forEach(function (name) {
      var e = fieldsOf(f).filter(function (x) { return x.name === name && x.type !== "radio"; })[0];
      if (!e) { missing.push(name); return; }
      before.push({ e: e, value: e.type === "checkbox" ? e.checked : e.value });
      if (e.type === "checkbox") e.checked = values[name] === true || values[name] === "true";
      else e.value = String(values[name]);
      e.dataset.proposed = "1";
      e.classList.add("ai-proposed");
    });
    if (before.length) { f.dataset.dirty = "1"; before[0].e.scrollIntoView({ block: "center" }); }
    li.appendChild(el("p", null, before.length
      ? "Proposed in the form: " + before.map(function (b) { return labelOf(b.e); }).join(", ") + ". Nothing is saved until you save."
      : "The agent proposed values for fields this form does not have."));
    if (p && p.reason) li.appendChild(el("p", "ai-reason", p.reason));
    if (missing.length) li.appendChild(el("p", null, "Not on this form: " + missing.join(", ") + "."));
    if (!before.length) return;
    var done = function (kept) {
      before.forEach(function (b) {
        if (!kept) { if (b.e.type === "checkbox") b.e.checked = b.value; else b.e.value = b.value; }
        delete b.e.dataset.proposed;
        b.e.classList.remove("ai-proposed");
      });
      // Kept, a value is as if typed (a form that saves drafts as one types saves it).
      if (kept) f.dispatchEvent(new Event("input", { bubbles: true }));
      li.querySelectorAll("button").forEach(function (b) { b.remove(); });
      li.appendChild(el("p", "ai-outcome", kept ? "Kept in the form." : "Discarded: the form is as you had it."));
    };
    var keep = li.appendChild(el("button", null, "Keep"));
    keep.type = "button";
    keep.addEventListener("click", function () { done(true); });
    var drop = li.appendChild(el("button", null, "Discard"));
    drop.type = "button";
    drop.addEventListener("click", function () { done(false); });
  }

  function open(show) {
    aside.hidden = !show;
    toggle.setAttribute("aria-expanded", String(show));
    store.setItem("quire.ai.open", show ? "1" : "");
    if (show) input.focus();
  }
  toggle.hidden = false;
  toggle.addEventListener("click", function () { open(aside.hidden); });
  // Close (and Esc, wherever the focus is) puts the sidebar away, which on
  // a small screen is a sheet over the whole screen, and gives the focus
  // back to the button that opens it.
  function close() { open(false); toggle.focus(); }
  document.getElementById("ai-close").addEventListener("click", close);
  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "Escape" || aside.hidden || ev.defaultPrevented) return;
    ev.preventDefault();
    close();
  });

  // An agent in release mode stages its turns in a release: a new one per
  // turn, or an open one the person chooses here.
  var staging = document.getElementById("ai-staging");
  var releaseSelect = document.getElementById("ai-release");
  var modes = {};
  var releasesLoaded = false;
  function showStaging() {
    var staged = modes[agentSelect.value] === "release";
    staging.hidden = !staged;
    if (!staged || releasesLoaded) return;
    releasesLoaded = true;
    call("GET", "/api/v1/releases?state=open").then(function (list) {
      list.items.forEach(function (r) {
        var o = el("option", null, r.name);
        o.value = r.id;
        releaseSelect.appendChild(o);
      });
      var saved = store.getItem("quire.ai.release");
      if (saved && list.items.some(function (r) { return r.id === saved; })) releaseSelect.value = saved;
    }).catch(function (e) { note("Releases could not be loaded: " + e.message, "ai-error"); });
  }
  releaseSelect.addEventListener("change", function () { store.setItem("quire.ai.release", releaseSelect.value); });

  call("GET", "/api/v1/agents").then(function (list) {
    list.items.forEach(function (a) {
      var o = el("option", null, a.name + " (" + a.alias + ")");
      o.value = a.alias;
      modes[a.alias] = a.writeMode;
      agentSelect.appendChild(o);
    });
    var saved = store.getItem("quire.ai.agent");
    if (saved) agentSelect.value = saved;
    if (!list.items.length) note("No agent is available to you.");
    showStaging();
  }).catch(function (e) { note("Agents could not be loaded: " + e.message, "ai-error"); });
  agentSelect.addEventListener("change", function () {
    store.setItem("quire.ai.agent", agentSelect.value);
    showStaging();
  });

  // An approval the agent asks for, in the person's words with the exact
  // call one click away: the server writes it (it names the records); its
  // place in the log is kept while it comes.
  function approval(p) {
    var li = add(el("li", "ai-approval", "The agent asks before it runs " + p.tool + "…"));
    rendered("/ai/approvals/" + encodeURIComponent(p.approvalId)).then(function (doc) {
      var asked = document.importNode(doc.querySelector("li.ai-approval"), true);
      asked.dataset.toolCall = p.toolCallId;
      li.replaceWith(asked);
      log.scrollTop = log.scrollHeight;
    }).catch(function (e) {
      li.textContent = "The agent waits for an approval of " + p.tool + " (it could not be shown here: " + e.message + "); answer it on the Approvals screen.";
    });
  }
  function answer(li, kind) {
    var buttons = li.querySelectorAll("button, input");
    var reason = li.querySelector(".ai-reason");
    var status = li.querySelector(".ai-approval-status");
    Array.prototype.forEach.call(buttons, function (b) { b.disabled = true; });
    status.textContent = kind === "approve" ? "Approving…" : "Rejecting…";
    var payload = kind === "reject" && reason.value.trim() ? { reason: reason.value.trim() } : undefined;
    call("POST", "/api/v1/approvals/" + encodeURIComponent(li.dataset.approval) + "/" + kind, payload)
      .then(function () {
        // The resumed call may have reported its outcome already.
        if (!status.dataset.outcome) status.textContent = kind === "approve" ? "Approved." : "Rejected.";
      })
      .catch(function (e) {
        status.textContent = e.message;
        Array.prototype.forEach.call(buttons, function (b) { b.disabled = false; });
      });
  }
  function undo(button) {
    button.disabled = true;
    call("POST", "/api/v1/sessions/" + encodeURIComponent(state.session) + "/turns/" + button.dataset.undoTurn + "/undo")
      .then(function (r) { note("Undone: " + r.count + " change(s) reverted."); button.remove(); refresh(); })
      .catch(function (e) { note("Could not undo: " + e.message, "ai-error"); button.disabled = false; });
  }
  // The buttons of the log, whether the stream or the server put them there.
  log.addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-verdict], button[data-undo-turn]");
    if (!b) return;
    if (b.dataset.verdict) answer(b.closest("li.ai-approval"), b.dataset.verdict);
    else undo(b);
  });

  function finished() {
    state.busy = false;
    form.querySelector("button").disabled = false;
    var changed = state.changed.splice(0);
    // The turn's number comes with the answer to the message that started
    // it, which a quick turn's end can overtake on the stream.
    Promise.resolve(state.sending).then(function () { turnEnded(state.turn, changed); });
  }

  // Under a finished turn: what it changed, with its undo, and the
  // release it put its changes in (an agent in release mode).
  function turnEnded(turn, changed) {
    if (changed.length && turn !== null) {
      var li = add(el("li", "ai-after"));
      li.appendChild(el("span", null, "Changed: "));
      var names = el("span", "ai-changed");
      li.appendChild(names);
      nameChanged(names, changed);
      var b = li.appendChild(el("button", null, "Undo this turn"));
      b.type = "button";
      b.dataset.undoTurn = turn;
      // The record on screen changed: show it as it is now.
      var here = body.dataset.entityId;
      var onScreen = changed.some(function (c) {
        return c.id === here || c.pageId === here || document.getElementById("section-" + c.id);
      });
      if (onScreen) refresh();
    }
    if (turn !== null && state.session) showReleases(state.session, turn);
  }

  // The records a turn changed, by name with a link to each (the server
  // names them: a section by its template and page, an archived record by
  // what its archive recorded); until it answers, by the name the event
  // carried, never by an id.
  function nameChanged(span, changed) {
    function show(list) {
      span.textContent = "";
      list.forEach(function (c, i) {
        var label = c.noun ? c.noun + " “" + c.label + "”" : c.entity + (c.label ? " “" + c.label + "”" : "");
        span.appendChild(c.href ? Object.assign(el("a", null, label), { href: c.href }) : el("span", null, label));
        if (i < list.length - 1) span.appendChild(document.createTextNode(", "));
      });
    }
    show(changed);
    var seen = {};
    var query = changed.filter(function (c) {
      var key = c.entity + ":" + c.id;
      return seen[key] ? false : (seen[key] = true);
    }).map(function (c) { return "r=" + encodeURIComponent(c.entity + ":" + c.id); }).join("&");
    fetch("/names?" + query, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (list) { if (list && list.length) show(list); })
      .catch(function () { /* the names the events carried stay */ });
  }

  // An agent in release mode puts a turn's changes into a release of its
  // own: the server renders it (each document's differences, and what can
  // be done to it), shown under its turn at the end of the log. A release
  // already shown is replaced in place.
  function showReleases(session, turn) {
    return rendered("/ai/sessions/" + encodeURIComponent(session) + "/releases?turn=" + encodeURIComponent(turn)).then(function (doc) {
      return Array.prototype.map.call(doc.querySelectorAll("li.ai-release"), function (li) {
        var node = document.importNode(li, true);
        var old = inLog('li.ai-release[data-release="?"]', li.dataset.release);
        if (old) old.replaceWith(node);
        else add(node);
        window.quireEnhance && window.quireEnhance(node);
        return node;
      });
    }).catch(function (e) { note("The turn's release could not be shown: " + e.message, "ai-error"); return []; });
  }

  // A release's Publish and Discard are sent from the sidebar (after the
  // confirm prompt the form carries), then the release is shown as it now
  // stands; a refusal is said under it.
  document.addEventListener("submit", function (ev) {
    var f = ev.target;
    if (ev.defaultPrevented || !f.matches || !f.matches("#ai-log li.ai-release form[data-in-place]")) return;
    ev.preventDefault();
    var li = f.closest("li.ai-release");
    var status = li.querySelector(".ai-release-status");
    var buttons = li.querySelectorAll("button");
    Array.prototype.forEach.call(buttons, function (b) { b.disabled = true; });
    status.classList.remove("ai-error");
    status.textContent = f.dataset.doing || "…";
    fetch(f.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { "x-csrf-token": csrf },
      body: new URLSearchParams(new FormData(f)),
    }).then(function (r) {
      return r.text().then(function (html) {
        if (r.ok) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var why = doc.querySelector("#release-error, .error-message");
        throw new Error(why ? why.textContent.trim() : "the server answered " + r.status);
      });
    }).then(function () {
      return showReleases(li.dataset.session, li.dataset.turn).then(function (shown) {
        var fresh = shown[0];
        var said = fresh && fresh.querySelector(".ai-release-status");
        if (said) said.textContent = f.dataset.done || "Done.";
        // A document of the release is on screen: show it as it now stands.
        if (fresh && fresh.querySelector('a[href="' + window.location.pathname + '"]')) refresh();
      });
    }).catch(function (e) {
      Array.prototype.forEach.call(buttons, function (b) { b.disabled = false; });
      status.classList.add("ai-error");
      status.textContent = "Not done: " + e.message;
    });
  });

  // Shows the screen's record as it is now: the screen is fetched again
  // and its main content replaced in place (the conversation stays), and
  // the banner names the record as it now is.
  function refresh() {
    if (document.querySelector("#main form[data-dirty]")) {
      note("The record on screen was changed by this turn. Save or discard your edits, then reload to see it.");
      return;
    }
    fetch(window.location.href, { credentials: "same-origin" }).then(function (r) {
      if (r.status === 404 || r.status === 410) {
        // Archived by the turn: say so where the record was, until an undo brings it back.
        var main = document.getElementById("main");
        if (main) {
          main.textContent = "";
          var h = el("h1", null, "Archived");
          var p = el("p", "ai-gone", "This record was archived by the agent's turn. “Undo this turn” in the sidebar brings it back.");
          main.appendChild(h);
          main.appendChild(p);
        }
        if (context) showContext(context.name, true);
        return;
      }
      if (!r.ok) { note("The record on screen could not be shown (HTTP " + r.status + ")."); return; }
      return r.text().then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        var main = document.getElementById("main");
        if (fresh && main) {
          main.replaceWith(document.importNode(fresh, true));
          window.quireEnhance && window.quireEnhance(document.getElementById("main"));
        }
        if (context && doc.body.dataset.entityId === context.id) showContext(doc.body.dataset.entityName);
      });
    }).catch(function (e) { note("Could not refresh the screen: " + e.message, "ai-error"); });
  }

  var handlers = {
    RUN_STARTED: function () { state.busy = true; form.querySelector("button").disabled = true; },
    TEXT_MESSAGE_START: function (e) { texts[e.messageId] = add(el("li", "ai-msg ai-assistant", "")); },
    TEXT_MESSAGE_CONTENT: function (e) {
      var node = texts[e.messageId] || (texts[e.messageId] = add(el("li", "ai-msg ai-assistant", "")));
      node.textContent += e.delta;
    },
    // Each call on a line of its own (what the agent says through a tool
    // comes as its words), its result under it.
    TOOL_CALL_START: function (e) {
      if (saying.indexOf(e.toolCallName) >= 0) return;
      var li = add(el("li", "ai-tool-row"));
      li.dataset.call = e.toolCallId;
      li.dataset.name = e.toolCallName;
      li.dataset.args = "";
      var d = li.appendChild(el("details", "ai-tool"));
      d.appendChild(el("summary", null, "⚙ " + e.toolCallName));
    },
    TOOL_CALL_ARGS: function (e) {
      var li = inLog('li[data-call="?"]', e.toolCallId);
      if (li) li.dataset.args += e.delta;
    },
    TOOL_CALL_END: function (e) {
      var li = inLog('li[data-call="?"]', e.toolCallId);
      if (li && li.dataset.name) li.querySelector("summary").textContent = "⚙ " + li.dataset.name + " " + short(li.dataset.args);
    },
    // A failed call is marked, its error said on its line; an approved
    // call's outcome is said under its approval.
    TOOL_CALL_RESULT: function (e) {
      var outcome = {};
      try { outcome = JSON.parse(e.content); } catch (x) { /* text */ }
      var failed = outcome.success === false;
      var status = inLog('li[data-tool-call="?"] .ai-approval-status', e.toolCallId);
      if (status) {
        status.textContent = failed ? "Not run: " + (outcome.error || "it failed") : "Done: " + (outcome.message || "it ran");
        status.dataset.outcome = failed ? "failed" : "done";
      }
      var li = inLog('li[data-call="?"]', e.toolCallId);
      if (!li) return;
      var result = e.content;
      try { result = JSON.stringify(JSON.parse(e.content), null, 2); } catch (x) { /* text */ }
      li.querySelector("details").appendChild(el("pre", "ai-result", result)).tabIndex = 0;
      if (failed) {
        li.classList.add("ai-failed");
        li.appendChild(el("p", "ai-error", "✗ " + li.dataset.name + " failed: " + (outcome.error || e.content)));
      }
    },
    CUSTOM: function (e) {
      if (e.name === "approval_requested") approval(e.value);
      if (e.name === "entity_changed" && e.value && e.value.id) state.changed.push(e.value);
      if (e.name === "form_values_proposed") proposed(e.value);
    },
    RUN_FINISHED: finished,
    RUN_ERROR: function (e) { note("The turn failed: " + (e.message || "unknown error"), "ai-error"); finished(); },
  };

  function follow(session, after) {
    if (state.source) state.source.close();
    var url = "/api/v1/sessions/" + encodeURIComponent(session) + "/events";
    if (after) url += "?lastEventId=" + encodeURIComponent(after);
    var source = new EventSource(url);
    state.source = source;
    Object.keys(handlers).forEach(function (type) {
      source.addEventListener(type, function (m) {
        var data;
        try { data = JSON.parse(m.data); } catch (x) { return; }
        handlers[type](data);
      });
    });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var text = input.value.trim();
    if (!text || state.busy) return;
    add(el("li", "ai-msg ai-user", text));
    input.value = "";
    var payload = { message: text };
    if (state.session) payload.sessionId = state.session;
    // Always sent, so a screen without a record or a form replaces the last one's.
    var onScreen = formOnScreen();
    payload.context = Object.assign({}, context || {}, onScreen ? { form: onScreen } : {});
    if (!staging.hidden && releaseSelect.value) payload.releaseId = releaseSelect.value;
    state.busy = true;
    form.querySelector("button").disabled = true;
    state.sending = call("POST", "/api/v1/agents/" + encodeURIComponent(agentSelect.value) + "/chat", payload)
      .then(function (r) {
        var fresh = r.sessionId !== state.session || !state.source;
        state.session = r.sessionId;
        state.turn = r.turn;
        store.setItem("quire.ai.session", r.sessionId);
        // A new conversation's stream starts at this turn's run.
        if (fresh) follow(r.sessionId, null);
      })
      .catch(function (e) {
        note(e.message, "ai-error");
        state.busy = false;
        form.querySelector("button").disabled = false;
      });
  });
  input.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); }
  });

  document.getElementById("ai-new").addEventListener("click", function () {
    if (state.source) state.source.close();
    state.source = null;
    state.session = null;
    state.turn = null;
    store.removeItem("quire.ai.session");
    log.textContent = "";
    input.focus();
  });

  // Past conversations: reopen one and continue it.
  var history = document.getElementById("ai-history");
  history.addEventListener("toggle", function () {
    if (!history.open) return;
    var list = document.getElementById("ai-sessions");
    call("GET", "/api/v1/sessions").then(function (r) {
      list.textContent = "";
      (r.items || []).slice(0, 20).forEach(function (s) {
        var b = el("button", "link", (s.title || "Conversation") + " · " + String(s.updatedAt || "").slice(0, 16).replace("T", " "));
        b.type = "button";
        b.addEventListener("click", function () { reopen(s.id); });
        var li = el("li");
        li.appendChild(b);
        list.appendChild(li);
      });
      if (!list.children.length) list.appendChild(el("li", null, "None yet."));
    }).catch(function (e) { note(e.message, "ai-error"); });
  });

  // A conversation shown again as it happened (the server renders every
  // message, call, result, approval, undo and release of it), then
  // followed on its stream from where that ends: after its last event, or
  // while a turn runs, from that run's start.
  function reopen(id) {
    rendered("/ai/sessions/" + encodeURIComponent(id)).then(function (doc) {
      var shown = doc.getElementById("ai-replay");
      log.textContent = "";
      Array.prototype.forEach.call(shown.children, function (li) { log.appendChild(document.importNode(li, true)); });
      window.quireEnhance && window.quireEnhance(log);
      log.scrollTop = log.scrollHeight;
      state.session = id;
      state.turn = Number(shown.dataset.turns);
      store.setItem("quire.ai.session", id);
      follow(id, shown.dataset.lastEvent);
      history.open = false;
    }).catch(function (e) {
      // One of another site or environment (or gone) is let go quietly.
      if (/HTTP 40[34]/.test(e.message)) store.removeItem("quire.ai.session");
      else note("The conversation could not be shown: " + e.message, "ai-error");
    });
  }

  // AI actions on a record: each sends its task to the agent, with the
  // record on screen as the turn's context.
  function showActions(root) {
    root.querySelectorAll("[data-ai-actions]").forEach(function (p) { p.hidden = false; });
  }
  showActions(document);
  var enhance = window.quireEnhance;
  window.quireEnhance = function (root) { enhance(root); showActions(root); };
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button[data-ai-prompt]");
    if (!btn || state.busy) return;
    var prompt = btn.dataset.aiPrompt;
    if (btn.dataset.aiLanguage) {
      var select = document.getElementById(btn.dataset.aiLanguage);
      var option = select.options[select.selectedIndex];
      prompt = prompt.split("{language}").join(option.dataset.name).split("{code}").join(option.value);
    }
    open(true);
    input.value = prompt;
    form.requestSubmit();
  });

  // On another screen, or after a reload: the same conversation, open as
  // it was.
  if (store.getItem("quire.ai.open")) open(true);
  if (state.session) reopen(state.session);
})();

// Media uploads: each chosen file is sent to the REST API with a progress
// bar, then its processing is followed until the image is ready.
(function () {
  var form = document.querySelector("[data-upload-form]");
  if (!form) return;
  var list = document.querySelector("[data-upload-list]");
  var csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");

  function line(name) {
    var li = document.createElement("li");
    var label = document.createElement("span");
    label.textContent = name;
    var bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", "Uploading " + name);
    var status = document.createElement("span");
    status.className = "upload-status";
    status.textContent = "uploading…";
    li.append(label, " ", bar, " ", status);
    list.appendChild(li);
    return { li: li, bar: bar, status: status };
  }

  function follow(row, image, tries) {
    if (image.status !== "processing" || tries > 180) {
      row.bar.value = 100;
      row.status.textContent = image.status === "completed" ? "ready" : image.status === "failed" ? "failed: " + (image.error || "") : "still processing";
      var link = document.createElement("a");
      link.href = "/media/" + image.id;
      link.textContent = "Open";
      row.li.append(" ", link);
      return;
    }
    setTimeout(function () {
      var id = encodeURIComponent(image.id);
      // The processing job's stage and percentage, then the image itself.
      fetch("/api/v1/images/" + id + "/jobs", { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : { items: [] }; })
        .then(function (jobs) {
          var job = (jobs.items || []).filter(function (j) { return j.kind === "image.process"; })[0];
          if (job) {
            row.bar.value = 90 + Math.round((job.progress || 0) / 10);
            row.status.textContent = job.status === "running" ? "processing: " + (job.stage || "") + " " + job.progress + " %"
              : job.status === "queued" ? "waiting to be processed" + (job.error ? " (retrying: " + job.error + ")" : "")
              : "processing…";
          }
          return fetch("/api/v1/images/" + id, { credentials: "same-origin" });
        })
        .then(function (r) { return r.json(); })
        .then(function (next) { follow(row, next, tries + 1); })
        .catch(function () { follow(row, image, tries + 1); });
    }, 700);
  }

  function send(file) {
    var row = line(file.name);
    var data = new FormData();
    data.append("file", file);
    var xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/v1/images");
    xhr.setRequestHeader("x-csrf-token", csrf);
    xhr.upload.addEventListener("progress", function (ev) {
      if (ev.lengthComputable) row.bar.value = Math.round((ev.loaded / ev.total) * 90);
    });
    xhr.addEventListener("load", function () {
      var body = {};
      try { body = JSON.parse(xhr.responseText); } catch (e) { /* not JSON */ }
      if (xhr.status === 200 || xhr.status === 202) {
        row.bar.value = 90;
        if (xhr.status === 200) row.status.textContent = "already in the library";
        follow(row, body, 0);
      } else {
        row.bar.value = 0;
        row.li.classList.add("error");
        row.status.textContent = "refused: " + (body.error || "HTTP " + xhr.status);
      }
    });
    xhr.addEventListener("error", function () { row.status.textContent = "the upload did not reach the server"; });
    xhr.send(data);
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var input = form.querySelector("input[type=file]");
    Array.prototype.forEach.call(input.files, send);
    input.value = "";
  });
})();

// Image fields: a select of the library's images by name (which works
// without this script), the chosen one's thumbnail beside it, a Clear
// button, and "Choose from the library", which opens the library's recent
// images as thumbnails; picking one chooses it (and fills an empty alt text
// beside it). Clicks are handled for the whole document, so the copies a
// list makes of an item work too.
(function () {
  function fillAlt(select, alt) {
    var name = select.name.replace(/\.url$/, ".alt");
    if (name === select.name || !alt) return;
    var other = select.form && Array.prototype.find.call(select.form.elements, function (el) { return el.name === name; });
    if (other && !other.value) other.value = alt;
  }
  function thumb(image) {
    var t = image.variants && image.variants.thumbnail;
    return (t && (t.webp || t.url)) || image.url;
  }
  function showThumb(select) {
    var img = select.parentNode.querySelector("img.thumb");
    var option = select.options[select.selectedIndex];
    var src = option && option.value ? option.dataset.thumb || option.value : "";
    if (img) { if (src) img.src = src; else img.removeAttribute("src"); img.hidden = !src; }
    var clear = select.parentNode.querySelector("button.clear-image");
    if (clear) clear.disabled = !select.value;
  }
  function picker(select) {
    if (select.dataset.enhanced) return;
    select.dataset.enhanced = "1";
    var label = select.labels && select.labels[0] ? select.labels[0].textContent : "the image";
    var clear = document.createElement("button");
    clear.type = "button";
    clear.className = "clear-image";
    clear.textContent = "Clear";
    clear.setAttribute("aria-label", "Clear " + label);
    var button = document.createElement("button");
    button.type = "button";
    button.className = "pick";
    button.textContent = "Choose from the library";
    button.setAttribute("aria-expanded", "false");
    var grid = document.createElement("ul");
    grid.className = "picker";
    grid.hidden = true;
    select.insertAdjacentElement("afterend", clear);
    clear.insertAdjacentElement("afterend", button);
    select.parentNode.insertAdjacentElement("afterend", grid);
    showThumb(select);
  }
  function choose(select, url, alt, thumbUrl) {
    var option = Array.prototype.find.call(select.options, function (o) { return o.value === url; });
    if (!option) {
      option = new Option(alt || url.split("/").pop(), url);
      option.dataset.thumb = thumbUrl || url;
      select.add(option, 1);
    }
    select.value = url;
    fillAlt(select, alt);
    select.dispatchEvent(new Event("input", { bubbles: true }));
    select.dispatchEvent(new Event("change", { bubbles: true }));
  }
  function open(button) {
    var select = button.parentNode.querySelector("select[data-image-picker]");
    var grid = button.parentNode.nextElementSibling;
    if (!grid.hidden) { grid.hidden = true; button.setAttribute("aria-expanded", "false"); return; }
    grid.hidden = false;
    button.setAttribute("aria-expanded", "true");
    grid.textContent = "Loading…";
    fetch("/api/v1/images?status=completed&limit=48", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (list) {
        grid.textContent = "";
        if (!list.items || !list.items.length) { grid.textContent = "The library has no images yet."; return; }
        list.items.forEach(function (image) {
          var li = document.createElement("li");
          var pick = document.createElement("button");
          pick.type = "button";
          pick.dataset.url = image.url;
          pick.dataset.alt = image.alt || "";
          pick.dataset.thumb = thumb(image);
          pick.setAttribute("aria-label", "Use " + (image.alt || image.filename));
          if (image.url === select.value) pick.setAttribute("aria-pressed", "true");
          var img = document.createElement("img");
          img.src = thumb(image);
          img.alt = "";
          img.width = 96;
          img.height = 72;
          pick.appendChild(img);
          li.appendChild(pick);
          grid.appendChild(li);
        });
      })
      .catch(function () { grid.textContent = "The library could not be loaded."; });
  }
  document.addEventListener("change", function (ev) {
    if (ev.target.matches && ev.target.matches("select[data-image-picker]")) showThumb(ev.target);
  });
  document.addEventListener("click", function (ev) {
    var toggle = ev.target.closest("button.pick");
    if (toggle) { open(toggle); return; }
    var clear = ev.target.closest("button.clear-image");
    if (clear) {
      var s = clear.parentNode.querySelector("select[data-image-picker]");
      choose(s, "", "");
      s.focus();
      return;
    }
    var choice = ev.target.closest(".picker button[data-url]");
    if (!choice) return;
    var grid = choice.closest(".picker");
    var box = grid.previousElementSibling;
    var select = box.querySelector("select[data-image-picker]");
    choose(select, choice.dataset.url, choice.dataset.alt, choice.dataset.thumb);
    grid.hidden = true;
    var button = box.querySelector("button.pick");
    button.setAttribute("aria-expanded", "false");
    button.focus();
  });
  function enhance(root) { root.querySelectorAll("select[data-image-picker]").forEach(picker); }
  enhance(document);
  var previous = window.quireEnhance;
  window.quireEnhance = function (root) { if (previous) previous(root); enhance(root); };
})();

// Search everywhere: `/` (outside a text field) or Ctrl+K / ⌘K puts the
// cursor in the header's search field, which opens /search; without this
// script the field and the /search screen work the same.
(function () {
  var field = document.getElementById("find-q");
  if (!field) return;
  document.addEventListener("keydown", function (ev) {
    var t = ev.target, typing = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
    var ctrlK = (ev.ctrlKey || ev.metaKey) && !ev.altKey && (ev.key === "k" || ev.key === "K");
    if (ctrlK || (ev.key === "/" && !typing && !ev.ctrlKey && !ev.metaKey && !ev.altKey)) {
      ev.preventDefault();
      field.focus();
      field.select();
    }
  });
})();
