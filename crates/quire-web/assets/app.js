// Quire back-office: progressive enhancement of server-rendered forms.
// Everything works without this script; it adds list editing in place and
// fills a new page's slug from its name.
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

  // ---- focus the error summary after a refused save ----
  var summary = document.getElementById("error-summary");
  if (summary) summary.focus();

  document.querySelectorAll("ol.items[data-list]").forEach(enhanceList);
})();
