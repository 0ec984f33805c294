/* report_html.js — the script of `shim-report html` pages, embedded in each page (the build
   turns it into a C string: tools/module.mk). The charts are SVG the page already holds; this
   adds sorting to the tables (click a header; numbers first sort descending, text ascending,
   a second click reverses), the memory charts' hover readout, on a page of several ranks the
   rank selector (one rank's part shown at a time; #rank-select, or a click on a row of the
   ranks table), and, when the page's address ends in #selftest, a check of all three whose
   result is written to <body data-selftest>. When it
   has run, <body data-ready="1">, and <body data-wide-tables> lists the tables wider than the
   window lets the page be (none: ""). Errors are caught by the handler the page's head installs
   (window.shimErrors, <html data-errors>) and listed in #shim-errors. */
(function () {
  "use strict";

  function parseData() {
    var el = document.getElementById("shim-data");
    return el ? JSON.parse(el.textContent) : null;
  }

  /* ---- sortable tables ---- */

  function isNum(th) {
    return th.getAttribute("data-type") === "num";
  }

  function cellKey(td, num) {
    var v = td.getAttribute("data-value");
    if (v === null) {
      v = td.textContent;
    }
    if (!num) {
      return v.toLowerCase();
    }
    if (v === "true") {
      return 1;
    }
    if (v === "false") {
      return 0;
    }
    var n = parseFloat(v);
    return isNaN(n) ? -Infinity : n;
  }

  function sortTable(table, col, dir) {
    var ths = table.tHead.rows[0].cells;
    var num = isNum(ths[col]);
    var body = table.tBodies[0];
    var keyed = Array.prototype.map.call(body.rows, function (row, i) {
      return { row: row, key: cellKey(row.cells[col], num), pos: i };
    });
    keyed.sort(function (a, b) {
      var c = a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
      return c !== 0 ? c * dir : a.pos - b.pos;
    });
    var frag = document.createDocumentFragment();
    keyed.forEach(function (k) {
      frag.appendChild(k.row);
    });
    body.appendChild(frag);
    for (var i = 0; i < ths.length; i++) {
      if (i === col) {
        ths[i].setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      } else {
        ths[i].removeAttribute("aria-sort");
      }
    }
  }

  function makeSortable(table) {
    var ths = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener("click", function () {
        var now = th.getAttribute("aria-sort");
        var dir = now === "descending" ? 1 : now === "ascending" ? -1 : isNum(th) ? -1 : 1;
        sortTable(table, col, dir);
      });
    });
    table.setAttribute("data-sortable", "1");
  }

  /* ---- the memory chart's readout ---- */

  function fmtBytes(b) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"];
    var u = 0;
    while (b >= 1024 && u < units.length - 1) {
      b /= 1024;
      u++;
    }
    return (u === 0 ? b.toFixed(0) : b.toFixed(2)) + " " + units[u];
  }

  /* The readout of one memory chart (fig) of the series mem; null when there is nothing to
     read. */
  function memoryHover(fig, mem) {
    if (!fig || !mem || mem.t_ms.length === 0) {
      return null;
    }
    var svg = fig.querySelector("svg");
    var hit = svg.querySelector("rect.hit");
    var g = svg.querySelector("g.hover");
    var line = g.querySelector("line");
    var text = g.querySelector("text");
    var x0 = parseFloat(svg.getAttribute("data-x0"));
    var x1 = parseFloat(svg.getAttribute("data-x1"));
    var t0 = parseFloat(svg.getAttribute("data-t0-ms"));
    var t1 = parseFloat(svg.getAttribute("data-t1-ms"));
    var budgets = mem.budget || [];

    function indexAt(ms) { /* the last sample at or before ms */
      var lo = 0, hi = mem.t_ms.length - 1, ans = 0;
      while (lo <= hi) {
        var mid = (lo + hi) >> 1;
        if (mem.t_ms[mid] <= ms) {
          ans = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      return ans;
    }

    function budgetAt(ms) {
      var b = null;
      for (var i = 0; i < budgets.length && budgets[i][0] <= ms; i++) {
        b = budgets[i][1];
      }
      return b;
    }

    function show(clientX, clientY) {
      var ctm = svg.getScreenCTM();
      if (!ctm) {
        return;
      }
      var pt = svg.createSVGPoint();
      pt.x = clientX;
      pt.y = clientY;
      var p = pt.matrixTransform(ctm.inverse());
      var x = Math.min(x1, Math.max(x0, p.x));
      var ms = t0 + ((x - x0) / (x1 - x0)) * (t1 - t0);
      var i = indexAt(ms);
      var b = budgetAt(ms);
      line.setAttribute("x1", x);
      line.setAttribute("x2", x);
      text.textContent = (ms / 1000).toFixed(3) + " s: on device " + fmtBytes(mem.device[i]) +
        ", moving " + fmtBytes(mem.moving[i]) + ", on host " + fmtBytes(mem.host[i]) +
        " (allocated " + fmtBytes(mem.total[i]) + (b === null ? "" : ", budget " + fmtBytes(b)) + ")";
      var right = x > (x0 + x1) / 2;
      text.setAttribute("x", right ? x - 6 : x + 6);
      text.setAttribute("text-anchor", right ? "end" : "start");
      g.setAttribute("visibility", "visible");
      fig.setAttribute("data-hover-index", String(i));
    }

    hit.addEventListener("mousemove", function (e) {
      show(e.clientX, e.clientY);
    });
    hit.addEventListener("mouseleave", function () {
      g.setAttribute("visibility", "hidden");
    });
    return { show: show, hit: hit, group: g, text: text };
  }

  /* Every memory chart with its series, and the index of the rank it belongs to (0 on the
     page of one trace). */
  function memoryHovers(data) {
    var out = [];
    if (!data) {
      return out;
    }
    var parts = data.ranks ? data.ranks :
      [{ id_prefix: "", memory: data.memory, device_memory: data.device_memory }];
    parts.forEach(function (part, k) {
      /* the primary device's chart, then every other device's */
      var charts = [{ chart: "memory-chart", memory: part.memory }].concat(part.device_memory || []);
      charts.forEach(function (c) {
        var h = memoryHover(document.getElementById(part.id_prefix + c.chart), c.memory);
        if (h) {
          h.rank = k;
          out.push(h);
        }
      });
    });
    return out;
  }

  /* ---- the rank selector (pages of several traces) ---- */

  function rankParts() {
    return Array.prototype.slice.call(document.querySelectorAll("section.rank"));
  }

  /* Shows the part of the rank at index `which` ("all": every part). */
  function showRank(which) {
    var key = String(which);
    rankParts().forEach(function (sec) {
      sec.hidden = key !== "all" && sec.getAttribute("data-rank-index") !== key;
    });
    var nav = document.getElementById("rank-select");
    Array.prototype.forEach.call(nav ? nav.querySelectorAll("button") : [], function (b) {
      b.setAttribute("aria-pressed", b.getAttribute("data-rank-index") === key ? "true" : "false");
    });
    document.body.setAttribute("data-rank-shown", key);
  }

  function rankSelector() {
    var nav = document.getElementById("rank-select");
    if (!nav) {
      return false;
    }
    Array.prototype.forEach.call(nav.querySelectorAll("button"), function (b) {
      b.addEventListener("click", function () {
        showRank(b.getAttribute("data-rank-index"));
      });
    });
    var table = document.getElementById("ranks-table");
    Array.prototype.forEach.call(table ? table.tBodies[0].rows : [], function (row) {
      row.addEventListener("click", function () {
        showRank(row.getAttribute("data-rank-index"));
      });
    });
    showRank(0);
    return true;
  }

  /* ---- #selftest: click every header twice, pick every rank, move over each memory chart ---- */

  function ordered(table, col, dir) {
    var num = isNum(table.tHead.rows[0].cells[col]);
    var rows = table.tBodies[0].rows;
    for (var r = 1; r < rows.length; r++) {
      var a = cellKey(rows[r - 1].cells[col], num), b = cellKey(rows[r].cells[col], num);
      if ((dir > 0 && a > b) || (dir < 0 && a < b)) {
        return false;
      }
    }
    return true;
  }

  /* The rank parts shown, as a list of their indexes. */
  function shownRanks() {
    return rankParts().filter(function (sec) {
      return !sec.hidden && sec.getBoundingClientRect().height > 0;
    }).map(function (sec) {
      return sec.getAttribute("data-rank-index");
    });
  }

  function selftest(tables, hovers, ranked) {
    var fails = [], checks = 0;
    tables.forEach(function (table) {
      var ths = table.tHead.rows[0].cells;
      for (var c = 0; c < ths.length; c++) {
        var seen = {};
        for (var click = 0; click < 2; click++) {
          ths[c].click();
          var s = ths[c].getAttribute("aria-sort");
          var dir = s === "ascending" ? 1 : s === "descending" ? -1 : 0;
          seen[s] = true;
          checks++;
          if (dir === 0 || !ordered(table, c, dir)) {
            fails.push(table.id + ": " + ths[c].getAttribute("data-key") + " " + s);
          }
        }
        if (!seen.ascending || !seen.descending) {
          fails.push(table.id + ": " + ths[c].getAttribute("data-key") + " did not reverse");
        }
      }
    });
    if (ranked) {
      rankParts().forEach(function (sec) {
        var k = sec.getAttribute("data-rank-index");
        document.querySelector("#rank-select button[data-rank-index=\"" + k + "\"]").click();
        checks++;
        if (shownRanks().join(",") !== k) {
          fails.push("rank selector: " + k + " shows [" + shownRanks().join(",") + "]");
        }
      });
    }
    hovers.forEach(function (hover) {
      if (ranked) {
        showRank(hover.rank);
      }
      var r = hover.hit.getBoundingClientRect();
      hover.show(r.left + r.width * 0.6, r.top + r.height / 2);
      checks++;
      if (hover.group.getAttribute("visibility") !== "visible" ||
          hover.text.textContent.indexOf("on device") < 0) {
        fails.push("memory chart " + hover.rank + ": no readout");
      }
    });
    if (ranked) {
      showRank(0);
    }
    document.body.setAttribute("data-selftest-checks", String(checks));
    document.body.setAttribute("data-selftest", fails.length ? "fail: " + fails.join("; ") : "ok");
  }

  function showErrors() {
    var errs = window.shimErrors || [];
    var box = document.getElementById("shim-errors");
    if (errs.length && box) {
      box.textContent = "Errors in this page's script:\n" + errs.join("\n");
      box.hidden = false;
    }
  }

  /* The ids of the shown tables wider than the page's column (they scroll sideways in their
     box), space-separated: what a test reads to know the tables fit the window. */
  function wideTables() {
    var wide = [];
    document.querySelectorAll(".table-wrap").forEach(function (w) {
      var t = w.querySelector("table");
      if (w.offsetParent !== null && w.scrollWidth > w.clientWidth) {
        wide.push(t && t.id ? t.id : "?");
      }
    });
    return wide.join(" ");
  }

  var data = parseData();
  var tables = Array.prototype.slice.call(document.querySelectorAll("table.sortable"));
  tables.forEach(makeSortable);
  var hovers = memoryHovers(data);
  var ranked = rankSelector();
  if (window.location.hash === "#selftest") {
    selftest(tables, hovers, ranked);
  }
  document.body.setAttribute("data-sortable-tables", String(tables.length));
  document.body.setAttribute("data-wide-tables", wideTables());
  document.body.setAttribute("data-ready", "1");
  window.addEventListener("error", showErrors);
  showErrors();
})();
