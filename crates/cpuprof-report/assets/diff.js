// cpuprof report of a comparison (`cpuprof diff --report`): the page shows the document
// `cpuprof diff --format json` writes (docs/json.md says what it holds), every row up to a page's
// worth, the first changes explained, and the differential flame graph as an image. Names come
// from other people's code: they reach the DOM as text only (page.js's helpers).
"use strict";

(function diffPage() {
  if (document.body.dataset.kind !== "diff") return;
  const page = JSON.parse(document.getElementById("data").textContent);
  const D = page.diff;
  const share = D.normalize === "share";
  const metric = D.metric; // "self" or "total"

  const amount = (w) => (D.unit === "samples" ? Math.round(w).toLocaleString("en-US") : formatNs(w));
  const signed = (w) => (w > 0 ? "+" : w < 0 ? "−" : "±") + amount(Math.abs(w));
  const points = (pp) => (pp > 0 ? "+" : pp < 0 ? "−" : "±") + Math.abs(pp).toFixed(2) + "pp";
  const pValue = (p) => (p === null || p === undefined ? "–" : p < 0.0001 ? p.toExponential(1) : p.toFixed(4));
  const location = (file, line) => (file === null ? "" : line === null ? file : file + ":" + line);

  /** The row's numbers in what decides: per run (time or samples), or shares. */
  function numbers(row) {
    if (share) {
      return {
        base: row["base_" + metric + "_pct"],
        new: row["new_" + metric + "_pct"],
        delta: row[metric + "_delta_pp"],
      };
    }
    return { base: row["base_" + metric], new: row["new_" + metric], delta: row[metric + "_delta"] };
  }
  const shown = (v) => (share ? v.toFixed(2) + "%" : amount(v));
  const shownDelta = (v) => (share ? points(v) : signed(v));

  // ---- header ----
  function header() {
    const first = (side) => side.sources[0] + (side.runs > 1 ? " (+" + (side.runs - 1) + ")" : "");
    $("source").replaceChildren(isolated(first(D.base)), " → ", isolated(first(D.new)));
    const busy = (side) => (D.unit === "samples" ? amount(side.total) + " samples" : amount(side.total));
    fact("base runs", String(D.base.runs), D.base.runs);
    fact("new runs", String(D.new.runs), D.new.runs);
    fact("base busy per run", busy(D.base), D.base.total);
    fact("new busy per run", busy(D.new), D.new.total);
    const change = D.base.total > 0 ? ((100 * (D.new.total - D.base.total)) / D.base.total).toFixed(1) + "%" : "–";
    fact("change", (D.new.total >= D.base.total ? "+" : "") + change);
    fact("compared", (share ? "share of busy time" : "time per run") + ", by " + metric + " time");
    const counts = {};
    for (const row of D.rows) if (row.significant) counts[row.verdict] = (counts[row.verdict] || 0) + 1;
    const summary = $("summary");
    summary.dataset.counts = JSON.stringify(counts);
    if (!D.tested) {
      summary.textContent = "The weights carry no sample counts: no change could be tested for significance.";
    } else {
      const parts = ["hotter", "new", "cooler", "gone"].map((v) => (counts[v] || 0) + " " + v);
      summary.textContent =
        "Significant changes (false discovery rate 5% over all functions): " +
        parts.join(", ") +
        ". Everything else is within the noise" +
        (D.base.runs > 1 && D.new.runs > 1 ? " of the runs." : " of sampling (one run on a side: run-to-run spread is not seen).");
    }
    for (const w of D.warnings) $("warnings").append(make("li", w));
    if (D.moved_files.length > 0) {
      $("warnings").append(make("li", D.moved_files.length + (D.moved_files.length === 1 ? " script" : " scripts") + " matched across checkouts (e.g. " +
        D.moved_files[0].base + " → " + D.moved_files[0].new + ")"));
    }
  }

  // ---- the verdicts ----
  const state = { sort: null, selected: -1 };
  const rows = D.rows.map((row, index) => ({ row, index, n: numbers(row) }));

  function verdicts() {
    const want = $("verdict").value;
    const text = $("filter").value.toLowerCase();
    let list = rows.filter(({ row }) => {
      if (want === "changed" && !row.significant) return false;
      if (want !== "" && want !== "changed" && row.verdict !== want) return false;
      if (text === "") return true;
      return row.name.toLowerCase().includes(text) || (row.file || "").toLowerCase().includes(text);
    });
    const by = {
      delta: (a, b) => Math.abs(b.n.delta) - Math.abs(a.n.delta),
      base: (a, b) => b.n.base - a.n.base,
      new: (a, b) => b.n.new - a.n.new,
      p: (a, b) => a.row.p_value - b.row.p_value,
      name: (a, b) => codePointOrder(a.row.name, b.row.name),
    }[state.sort];
    if (by) list = list.slice().sort((a, b) => by(a, b) || a.index - b.index);
    for (const th of document.querySelectorAll("#verdicts th[data-sort]")) {
      th.classList.toggle("sorted", th.dataset.sort === state.sort);
    }
    const body = $("verdicts").tBodies[0];
    body.replaceChildren();
    const limit = 500;
    for (const { row, index, n } of list.slice(0, limit)) {
      const tr = make("tr", null, "clickable");
      tr.dataset.row = String(index);
      tr.dataset.verdict = row.verdict;
      if (index === state.selected) tr.classList.add("selected");
      const verdict = make("td", row.verdict + (row.significant || row.verdict === "unchanged" ? "" : " (not significant)"), "verdict-" + (row.significant ? row.verdict : "unchanged"));
      const cls = n.delta > 0 ? "num gain" : n.delta < 0 ? "num loss" : "num";
      const ratio = row[metric + "_ratio"];
      const nameCell = named("td", row.name, "name");
      nameCell.dataset.name = row.name;
      tr.append(
        nameCell,
        verdict,
        make("td", shownDelta(n.delta), row.significant ? cls : "num"),
        make("td", shown(n.base), "num"),
        make("td", shown(n.new), "num"),
        make("td", ratio === null ? "–" : "×" + ratio.toFixed(2), "num"),
        make("td", pValue(row.p_value), "num"),
        named("td", location(row.file, row.line), "loc")
      );
      tr.addEventListener("click", () => select(index));
      body.append(tr);
    }
    const more = list.length > limit ? " (the first " + limit + " shown: filter to see the rest)" : "";
    $("shown").textContent = list.length + " of " + D.rows.length + " rows" + more;
  }

  // ---- one function: its runs, and where its change came from ----
  function select(index) {
    state.selected = index;
    const row = D.rows[index];
    $("function-section").hidden = false;
    $("function-name").replaceChildren(isolated(row.name));
    $("function-facts").replaceChildren(
      isolated(location(row.file, row.line)),
      " · self " + amount(row.base_self) + " → " + amount(row.new_self) +
      " · total " + amount(row.base_total) + " → " + amount(row.new_total) + " per run" +
      " · samples " + row.base_self_samples + " → " + row.new_self_samples +
      " · p " + pValue(row.p_value) + (row.significant ? " (significant)" : " (within the noise)"),
    );
    runs(row);
    explain(row);
    verdicts();
    $("function-section").scrollIntoView({ block: "nearest" });
  }

  function runs(row) {
    const body = $("runs").tBodies[0];
    body.replaceChildren();
    const sides = [
      ["base", D.base.sources, row.base_self_runs, row.base_total_runs],
      ["new", D.new.sources, row.new_self_runs, row.new_total_runs],
    ];
    for (const [side, sources, self, total] of sides) {
      self.forEach((w, r) => {
        const tr = make("tr");
        tr.dataset.side = side;
        tr.dataset.self = String(w);
        tr.dataset.total = String(total[r]);
        tr.append(make("td", side), named("td", sources[r]), make("td", amount(w), "num"), make("td", amount(total[r]), "num"));
        body.append(tr);
      });
    }
    strip(row);
  }

  /** Each run's self weight as a dot on one axis per side: the spread the test weighs. */
  function strip(row) {
    const box = $("strip");
    box.replaceChildren();
    const ns = "http://www.w3.org/2000/svg";
    const width = 420;
    const height = 64;
    const max = Math.max(1, ...row.base_self_runs, ...row.new_self_runs);
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    const x = (w) => 50 + ((width - 60) * w) / max;
    [["base", row.base_self_runs, 20, "#4a6fa5"], ["new", row.new_self_runs, 44, "#c0392b"]].forEach(([side, values, y, color]) => {
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", "0");
      label.setAttribute("y", String(y + 4));
      label.textContent = side;
      const axis = document.createElementNS(ns, "line");
      axis.setAttribute("x1", String(x(0)));
      axis.setAttribute("x2", String(x(max)));
      axis.setAttribute("y1", String(y));
      axis.setAttribute("y2", String(y));
      axis.setAttribute("class", "axis");
      svg.append(label, axis);
      for (const w of values) {
        const dot = document.createElementNS(ns, "circle");
        dot.setAttribute("cx", String(x(w)));
        dot.setAttribute("cy", String(y));
        dot.setAttribute("r", "5");
        dot.setAttribute("fill", color);
        dot.setAttribute("fill-opacity", "0.7");
        const title = document.createElementNS(ns, "title");
        title.textContent = side + ": " + amount(w);
        dot.append(title);
        svg.append(dot);
      }
    });
    const scale = document.createElementNS(ns, "text");
    scale.setAttribute("x", String(width - 10));
    scale.setAttribute("y", String(height - 2));
    scale.setAttribute("text-anchor", "end");
    scale.setAttribute("class", "note");
    scale.textContent = "self per run, 0 – " + amount(max);
    svg.append(scale);
    box.append(svg);
  }

  function explain(row) {
    const e = row.explain;
    $("explain-box").hidden = !e;
    $("explain-moved").replaceChildren();
    if (!e) {
      $("explain-note").textContent = row.significant
        ? "Explained for the first changes only (cpuprof diff --explain N says more)."
        : "Not a significant change: nothing to explain.";
      return;
    }
    $("explain-note").textContent =
      "Callers whose part of its total changed most, callees whose totals under it changed most (per run).";
    const fill = (id, list) => {
      const body = $(id).tBodies[0];
      body.replaceChildren();
      for (const c of list) {
        const tr = make("tr");
        tr.dataset.name = c.name;
        tr.dataset.delta = String(c.delta);
        const cls = c.delta > 0 ? "num gain" : c.delta < 0 ? "num loss" : "num";
        const name = named("td", c.name, "name");
        name.append((c.merged ? " (several)" : "") + " ", isolated(location(c.file, c.line), "loc"));
        tr.append(name, make("td", amount(c.base), "num"), make("td", amount(c.new), "num"), make("td", signed(c.delta), cls), make("td", pValue(c.p_value), "num"));
        body.append(tr);
      }
      if (list.length === 0) {
        const none = make("td", "none", "note");
        none.colSpan = 5;
        const tr = make("tr");
        tr.append(none);
        body.append(tr);
      }
    };
    fill("explain-callers", e.callers);
    fill("explain-callees", e.callees);
    for (const m of e.moved) $("explain-moved").append(make("li", visible(m.text) + ": " + amount(m.weight) + " per run"));
    // What V8 did differently (tick logs): the facts as the table says them.
    for (const t of e.jit ? e.jit.text : []) $("explain-moved").append(make("li", visible(t)));
  }

  // ---- event-loop blocks, when compared ----
  function blocks() {
    const b = D.blocks;
    if (!b) return;
    $("blocks-section").hidden = false;
    $("blocks-summary").textContent =
      "Longest block " + signed(b.max_delta_ns) + ", 95th percentile " + signed(b.p95_delta_ns) +
      " (new − base, per run)" + (b.p_value === null ? "" : " · p " + pValue(b.p_value)) +
      (b.significant ? " · significant" : " · within the noise");
    const body = $("blocks").tBodies[0];
    for (const [side, list, sources] of [["base", b.base, D.base.sources], ["new", b.new, D.new.sources]]) {
      list.forEach((run, r) => {
        const tr = make("tr");
        tr.append(make("td", side), named("td", sources[r]), make("td", run.count, "num"), make("td", formatNs(run.p95_ns), "num"), make("td", formatNs(run.max_ns), "num"));
        body.append(tr);
      });
    }
  }

  // ---- wiring ----
  const unitName = share ? " (share)" : D.unit === "samples" ? " (samples per run)" : " (per run)";
  $("delta-head").textContent = metric + " change" + unitName;
  $("base-head").textContent = "base " + metric;
  $("new-head").textContent = "new " + metric;
  $("verdicts-note").textContent =
    "Ranked as the terminal report: significant growth, then significant drops, then the rest by size. " +
    "Click a row for its runs and where the change came from; click a column to sort." +
    (page.rows_total > D.rows.length ? " The page holds the first " + D.rows.length + " of " + page.rows_total + " rows." : "");
  $("verdict").addEventListener("change", verdicts);
  $("filter").addEventListener("input", verdicts);
  for (const th of document.querySelectorAll("#verdicts th[data-sort]")) {
    th.addEventListener("click", () => {
      state.sort = state.sort === th.dataset.sort ? null : th.dataset.sort;
      verdicts();
    });
  }
  $("footer").textContent = "Made by cpuprof diff. The page is self-contained: it loads nothing from the network.";
  header();
  verdicts();
  blocks();
  flameGraph().then(
    () => (document.body.dataset.ready = "true"),
    (e) => {
      $("flame-section").append(make("p", "The flame graph could not be shown: " + e, "warnings"));
      document.body.dataset.ready = "true";
    },
  );

  /** The differential flame graph: gzipped SVG in the data, inflated here, shown as an image. */
  async function flameGraph() {
    if (page.flame_svg_gzip_base64 === null) {
      $("flame-image").hidden = true;
      $("save-flame").hidden = true;
      $("flame-section").append(make("p", "No flame graph: cpuprof could not draw this comparison's (see its warning).", "note"));
      return;
    }
    const gzipped = Uint8Array.from(atob(page.flame_svg_gzip_base64), (c) => c.charCodeAt(0));
    const inflated = new Blob([gzipped]).stream().pipeThrough(new DecompressionStream("gzip"));
    const svg = new Blob([await new Response(inflated).arrayBuffer()], { type: "image/svg+xml" });
    const url = URL.createObjectURL(svg);
    const image = $("flame-image");
    const loaded = new Promise((resolve, reject) => {
      image.onload = resolve;
      image.onerror = () => reject(new Error("the image did not decode"));
    });
    image.src = url;
    $("save-flame").href = url;
    await loaded;
  }
})();
