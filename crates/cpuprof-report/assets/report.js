// cpuprof report of a profile: every view is computed here, in the page, from the data cpuprof
// embedded (crates/cpuprof-analysis/src/report_data.rs says what it holds). Names come from
// other people's code: they reach the DOM as text (textContent) only, never as markup (the
// helpers are page.js's).
"use strict";

(function main() {
  if (document.body.dataset.kind !== "profile") return;
  const D = JSON.parse(document.getElementById("data").textContent);

  const formatWeight = (w) => (D.unit === "samples" ? w.toLocaleString("en-US") : formatNs(w));
  const percent = (part, whole) => (whole > 0 ? ((100 * part) / whole).toFixed(2) + "%" : "–");

  // ---- the tables ----
  const F = D.functions;
  const nodeParent = D.nodes.parent;
  const nodeFunction = D.nodes.function;
  const nodeCount = nodeParent.length;
  const children = Array.from({ length: nodeCount }, () => []);
  const roots = [];
  for (let n = 0; n < nodeCount; n++) {
    if (nodeParent[n] < 0) roots.push(n);
    else children[nodeParent[n]].push(n);
  }
  const nameOf = (f) => (f < 0 ? "(pruned)" : F.name[f]);
  const pathOf = (f) => (f < 0 || F.file[f] < 0 ? null : D.paths[F.file[f]]);
  // A canvas `width` × `height` CSS pixels, sharp on high-density screens, and its context set
  // up for text in `font`.
  function canvasContext(canvas, width, height, font) {
    const ratio = window.devicePixelRatio || 1;
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    canvas.style.height = height + "px";
    const ctx = canvas.getContext("2d");
    ctx.scale(ratio, ratio);
    ctx.font = font;
    ctx.textBaseline = "middle";
    return ctx;
  }

  function location(f) {
    const path = pathOf(f);
    if (path === null) return "";
    return F.line[f] === null ? path : path + ":" + F.line[f];
  }
  function shortLocation(f) {
    const path = pathOf(f);
    if (path === null) return "";
    const base = path.slice(path.lastIndexOf("/") + 1);
    return F.line[f] === null ? base : base + ":" + F.line[f];
  }
  // The buckets' weights, decoded once: per bucket, nodes and their self weights.
  const bucketCount = D.buckets.start_ns.length;
  const bucketNodes = [];
  const bucketWeights = [];
  for (const flat of D.buckets.weights) {
    const nodes = new Int32Array(flat.length / 2);
    const weights = new Float64Array(flat.length / 2);
    let node = 0;
    for (let i = 0; i < flat.length; i += 2) {
      node += flat[i];
      nodes[i / 2] = node;
      weights[i / 2] = flat[i + 1];
    }
    bucketNodes.push(nodes);
    bucketWeights.push(weights);
  }

  // ---- the state: a range of buckets, a function, the flame graph's zoom and search ----
  const state = { from: 0, to: bucketCount, fn: -1, zoom: -1, sort: "self", group: "function" };
  const wholeRange = () => state.from === 0 && state.to === bucketCount;
  let view = null;

  /** Everything the range holds: each node's self and total, the denominator, the categories. */
  function compute() {
    const self = new Float64Array(nodeCount);
    let counted = 0;
    let countedSamples = 0;
    let samples = 0;
    const categories = new Float64Array(D.categories.length);
    for (let b = state.from; b < state.to; b++) {
      const nodes = bucketNodes[b];
      const weights = bucketWeights[b];
      for (let i = 0; i < nodes.length; i++) self[nodes[i]] += weights[i];
      counted += D.buckets.counted[b];
      countedSamples += D.buckets.counted_samples[b];
      samples += D.buckets.samples[b];
      D.buckets.categories[b].forEach((w, k) => (categories[k] += w));
    }
    const total = Float64Array.from(self);
    for (let n = nodeCount - 1; n >= 0; n--) if (nodeParent[n] >= 0) total[nodeParent[n]] += total[n];
    return { self, total, counted, countedSamples, samples, categories };
  }

  /**
   * Self and total per key (a function, file or package): self from the nodes whose key it
   * is, total once per path however often the key recurs on it (as `top`).
   */
  function totals(keyOf, keyCount) {
    const self = new Float64Array(keyCount);
    const total = new Float64Array(keyCount);
    const onPath = new Int32Array(keyCount);
    const todo = roots.map((n) => [n, false]);
    while (todo.length > 0) {
      const [n, leaving] = todo.pop();
      const key = keyOf(n);
      if (leaving) {
        if (key >= 0) onPath[key]--;
        continue;
      }
      if (view.total[n] === 0) continue;
      if (key >= 0) {
        self[key] += view.self[n];
        if (onPath[key] === 0) total[key] += view.total[n];
        onPath[key]++;
      }
      todo.push([n, true]);
      for (const c of children[n]) todo.push([c, false]);
    }
    return { self, total };
  }

  function keyOfGroup(group) {
    if (group === "file") return (n) => (nodeFunction[n] < 0 ? -1 : F.file_group[nodeFunction[n]]);
    if (group === "package") return (n) => (nodeFunction[n] < 0 ? -1 : F.package_group[nodeFunction[n]]);
    return (n) => nodeFunction[n];
  }

  // ---- header ----
  function header() {
    $("source").replaceChildren(isolated(D.source));
    fact("format", D.format, D.format);
    if (D.duration_ns !== null) fact("duration", formatNs(D.duration_ns), D.duration_ns);
    const samples = D.buckets.samples.reduce((a, b) => a + b, 0);
    fact("samples", samples.toLocaleString("en-US"), samples);
    if (D.interval_ns !== null) fact("interval", formatNs(D.interval_ns), D.interval_ns);
    if (D.pruned.nodes > 0) {
      fact(
        "pruned",
        D.pruned.nodes + " call paths of at most " + (100 * D.pruned.at_most_share).toPrecision(2) + "% each (" +
          formatWeight(D.pruned.weight) + " of self time, kept under (pruned) by function" +
          (D.pruned.unnamed > 0 ? "; " + formatWeight(D.pruned.unnamed) + " of it from functions too light to keep by name" : "") + ")",
        D.pruned.weight,
      );
    }
    for (const w of D.warnings) $("warnings").append(make("li", visible(w)));
    D.categories.forEach((c, k) => {
      const li = make("li");
      const swatch = make("i");
      swatch.style.background = D.category_colors[k];
      li.append(swatch, make("span", c));
      $("legend").append(li);
    });
    $("footer").textContent =
      "Written by cpuprof. Self: time with the function on top of the stack; total: with it anywhere on the stack. " +
      "Percentages are of the counted samples (idle excluded unless --include-idle).";
  }

  function categorySplit() {
    const split = $("split");
    split.replaceChildren();
    const all = view.categories.reduce((a, b) => a + b, 0);
    D.categories.forEach((c, k) => {
      const w = view.categories[k];
      split.dataset[c] = String(w);
      if (w <= 0) return;
      const span = make("span");
      span.style.background = D.category_colors[k];
      span.style.width = (100 * w) / all + "%";
      span.title = c + ": " + formatWeight(w) + " (" + percent(w, all) + ")";
      split.append(span);
    });
    const legend = $("legend").children;
    D.categories.forEach((c, k) => {
      legend[k].lastChild.textContent = c + " " + percent(view.categories[k], all);
    });
  }

  // ---- timeline ----
  let chart = null;
  function timeline() {
    if (!D.timed || typeof uPlot === "undefined") {
      $("timeline-note").textContent = D.timed
        ? "The chart could not be drawn."
        : "This profile's samples have no times (" + D.format + "): it has no timeline; every view shows the whole profile.";
      return;
    }
    // One more x at the last bucket's end, so that the axis (and a drag) reaches it.
    const xs = D.buckets.start_ns.map((s) => s / 1e9);
    xs.push(D.buckets.end_ns[bucketCount - 1] / 1e9);
    // Stacked bars of each category's share of its bucket's wall time (idle left out: CPU).
    const shown = D.categories.map((c, k) => k).filter((k) => D.categories[k] !== "idle");
    const series = [{ label: "time (s)" }];
    const data = [xs];
    for (let i = shown.length - 1; i >= 0; i--) {
      const ys = D.buckets.categories.map((cats, b) => {
        let sum = 0;
        for (let j = 0; j <= i; j++) sum += cats[shown[j]];
        const length = D.buckets.end_ns[b] - D.buckets.start_ns[b];
        return D.unit === "samples" ? sum : (100 * sum) / length;
      });
      ys.push(null);
      data.push(ys);
      const k = shown[i];
      series.push({
        label: D.categories[k],
        fill: D.category_colors[k],
        stroke: D.category_colors[k],
        width: 0,
        paths: uPlot.paths.bars({ size: [1, Infinity], gap: 0, align: 1 }),
        points: { show: false },
        // Of the bucket's wall time (or, counting samples, of its samples).
        value: (u, v, si, idx) =>
          idx === null || idx >= bucketCount
            ? ""
            : percent(D.buckets.categories[idx][k], D.unit === "samples" ? D.buckets.samples[idx] : D.buckets.end_ns[idx] - D.buckets.start_ns[idx]),
      });
    }
    const width = Math.max(320, $("timeline").clientWidth || document.body.clientWidth - 40);
    chart = new uPlot(
      {
        width,
        height: 180,
        series,
        scales: { x: { time: false }, y: { range: (u, min, max) => [0, Math.max(D.unit === "samples" ? max : 100, 1)] } },
        axes: [{ label: "seconds" }, { label: D.unit === "samples" ? "samples" : "% of wall time" }],
        cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
        legend: { show: true, live: true },
        hooks: {
          draw: [drawBlocks],
          setSelect: [
            (u) => {
              if (u.select.width < 2) return;
              const t0 = u.posToVal(u.select.left, "x");
              const t1 = u.posToVal(u.select.left + u.select.width, "x");
              // Whole buckets: from the one the drag starts in to the one it ends in.
              const starts = D.buckets.start_ns;
              let b0 = 0;
              while (b0 + 1 < bucketCount && starts[b0 + 1] <= t0 * 1e9) b0++;
              let b1 = b0 + 1;
              while (b1 < bucketCount && starts[b1] < t1 * 1e9) b1++;
              setRange(b0, b1);
            },
          ],
        },
      },
      data,
      $("timeline"),
    );
  }

  function drawBlocks(u) {
    if (!D.blocks) return;
    const ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = "rgba(198, 40, 40, 0.75)";
    for (const b of D.blocks.list) {
      const x0 = u.valToPos(b.start_ns / 1e9, "x", true);
      const x1 = u.valToPos((b.start_ns + b.duration_ns) / 1e9, "x", true);
      ctx.fillRect(x0, u.bbox.top, Math.max(1, x1 - x0), 4 * devicePixelRatio);
    }
    ctx.restore();
  }

  /** Looks at buckets `from`..`to`; the flame chart follows unless the chart asked for it. */
  function setRange(from, to, fromChart) {
    state.from = from;
    state.to = to;
    state.zoom = -1;
    const whole = from === 0 && to === bucketCount;
    $("whole").hidden = whole;
    const range = $("range");
    if (whole) {
      range.textContent = "";
      delete range.dataset.fromNs;
      delete range.dataset.toNs;
      if (chart) chart.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
    } else {
      const fromNs = D.buckets.start_ns[from];
      const toNs = D.buckets.end_ns[to - 1];
      // Into the recording: a report of a window has its times from the window's start.
      const offset = D.window_from_ns || 0;
      range.dataset.fromNs = String(fromNs + offset);
      range.dataset.toNs = String(toNs + offset);
      range.textContent =
        formatNs(fromNs + offset) + " – " + formatNs(toNs + offset) + " into the recording   (cpuprof top --from " +
        (fromNs + offset) / 1e6 + "ms --to " + (toNs + offset) / 1e6 + "ms)";
      if (chart) {
        const left = chart.valToPos(fromNs / 1e9, "x");
        const right = chart.valToPos(toNs / 1e9, "x");
        chart.setSelect({ left, width: right - left, top: 0, height: chart.bbox.height / devicePixelRatio }, false);
      }
    }
    if (!fromChart) {
      if (whole) chartZoom(chartWhole[0], chartWhole[1], false);
      else chartZoom(D.buckets.start_ns[from], D.buckets.end_ns[to - 1], false);
    }
    refresh();
  }

  // ---- blocks ----
  function blocks() {
    if (!D.blocks) return;
    $("blocks-section").hidden = false;
    const b = D.blocks;
    $("blocks-summary").textContent =
      b.count + " blocks of at least " + formatNs(b.min_ns) + ": p50 " + formatNs(b.p50_ns) + ", p95 " + formatNs(b.p95_ns) +
      ", max " + formatNs(b.max_ns) + "; " + b.blocked_pct.toFixed(1) + "% of the wall time blocked" +
      (b.idle_samples === 0 ? " (no idle samples: the event loop never waited in this recording)" : "") +
      (b.cut > 0 ? "; " + b.cut + " cut by the recording's edge (marked ≥: at least that long)" : "") +
      (b.list.length < b.count ? "; the " + b.list.length + " longest are listed" : "") + ". Click one to look at its time.";
    const body = $("blocks").tBodies[0];
    // A function as `blocks` names it, each name isolated: a list of text and elements.
    const nameOf = (f) => (f ? [isolated(f.name), ...(f.file ? [" ", isolated(f.file.slice(f.file.lastIndexOf("/") + 1) + (f.line ? ":" + f.line : ""))] : [])] : []);
    const longestFirst = [...b.list].sort((x, y) => y.duration_ns - x.duration_ns || x.start_ns - y.start_ns);
    let spread = 0;
    for (const block of longestFirst) {
      const tr = make("tr", null, "clickable");
      tr.dataset.startNs = String(block.start_ns);
      // As `blocks` says it (cpuprof-render's words.rs): a native frame in brackets, and
      // "(spread out)" when no frame holds more than half of the block.
      const native = block.native ? [isolated(/^\[.*\]$/.test(block.native.name) ? block.native.name : "[" + block.native.name + "]")] : [];
      const where = block.common ? [...nameOf(block.common), ...(block.under ? [" under ", ...nameOf(block.under)] : [])] : [];
      if (!block.common && !block.native) where.push("(spread out)");
      if (where.length > 0 && native.length > 0) where.push(" ");
      const blockedIn = make("td", null, "names");
      blockedIn.append(...where, ...native);
      if (!block.common && !block.native) {
        blockedIn.title = SPREAD_OUT;
        blockedIn.classList.add("spread");
        spread++;
      }
      // One function a line, each unbroken.
      const top = make("td", null, "names");
      for (const [f, w] of block.top) {
        const line = make("div");
        line.append(isolated(f.name), " " + formatNs(w));
        top.append(line);
      }
      const entry = make("td", null, "names");
      entry.append(...nameOf(block.entry));
      tr.append(
        make("td", formatNs(block.start_ns), "num"),
        make("td", (block.cut ? "≥ " : "") + formatNs(block.duration_ns), "num"),
        entry,
        blockedIn,
        top,
      );
      tr.addEventListener("click", () => {
        const b0 = Math.floor(block.start_ns / D.bucket_ns);
        const b1 = Math.min(bucketCount, Math.ceil((block.start_ns + block.duration_ns) / D.bucket_ns));
        setRange(Math.max(0, b0), Math.max(b0 + 1, b1));
      });
      body.append(tr);
    }
    $("blocks-legend").textContent = spread > 0 ? "(spread out): " + SPREAD_OUT : "";
  }
  const SPREAD_OUT =
    "no one frame is on the stacks of more than half of this block: its time went to several places (see top self).";

  // ---- top ----
  const TOP_ROWS = 200;
  function topTable() {
    const group = state.group;
    const keyCount = group === "file" ? D.files.length : group === "package" ? D.packages.length : F.name.length;
    const { self, total } = totals(keyOfGroup(group), keyCount);
    if (wholeRange()) {
      // The whole profile's totals are exact whatever was pruned (computed before pruning).
      const exact = group === "file" ? D.file_totals : group === "package" ? D.package_totals : F.whole_total;
      exact.forEach((t, key) => (total[key] = t));
    }
    // A group's first function stands for its category and location.
    const first = new Int32Array(keyCount).fill(-1);
    for (let f = F.name.length - 1; f >= 0; f--) {
      const key = group === "file" ? F.file_group[f] : group === "package" ? F.package_group[f] : f;
      first[key] = f;
    }
    const label = (key) => (group === "file" ? D.files[key] : group === "package" ? D.packages[key] : F.name[key]);
    const text = $("filter").value.trim().toLowerCase();
    const category = $("category").value;
    const rows = [];
    for (let key = 0; key < keyCount; key++) {
      if (self[key] === 0 && total[key] === 0) continue;
      const f = first[key];
      if (category !== "" && D.categories[F.category[f]] !== category) continue;
      const where = group === "function" ? location(f) : "";
      if (text !== "" && !label(key).toLowerCase().includes(text) && !where.toLowerCase().includes(text)) continue;
      rows.push(key);
    }
    const metric = state.sort === "total" ? total : self;
    rows.sort((a, b) => metric[b] - metric[a] || compareIdentity(a, b, label, group));
    const shown = rows.slice(0, TOP_ROWS);
    $("top-note").textContent =
      rows.length > TOP_ROWS ? "the first " + TOP_ROWS + " of " + rows.length + " rows" : rows.length + " rows";
    const body = $("top").tBodies[0];
    body.replaceChildren();
    for (const key of shown) {
      const f = first[key];
      const tr = make("tr", null, group === "function" ? "clickable" : "");
      tr.dataset.key = String(key);
      tr.dataset.self = String(self[key]);
      tr.dataset.total = String(total[key]);
      const nameCell = named("td", label(key), "name");
      nameCell.dataset.name = label(key);
      tr.append(
        nameCell,
        make("td", formatWeight(self[key]), "num"),
        make("td", percent(self[key], view.counted), "num"),
        make("td", formatWeight(total[key]), "num"),
        make("td", percent(total[key], view.counted), "num"),
        group === "function" ? named("td", location(f), "loc") : make("td", "", "loc"),
      );
      if (group === "function") {
        if (key === state.fn) tr.classList.add("selected");
        tr.addEventListener("click", () => selectFunction(key));
      }
      body.append(tr);
    }
    for (const th of $("top").tHead.querySelectorAll("th[data-sort]")) {
      th.classList.toggle("sorted", th.dataset.sort === state.sort);
    }
  }

  /** Rows of equal weight in `top`'s order: name, file, line, column, kind. */
  function compareIdentity(a, b, label, group) {
    const byText = codePointOrder;
    const c = byText(label(a), label(b));
    if (c !== 0 || group !== "function") return c;
    return (
      byText(pathOf(a) ?? "", pathOf(b) ?? "") ||
      (F.line[a] ?? -1) - (F.line[b] ?? -1) ||
      (F.column[a] ?? -1) - (F.column[b] ?? -1) ||
      byText(F.kind[a], F.kind[b])
    );
  }

  // ---- one function: callers, callees, lines ----
  function selectFunction(f) {
    state.fn = f;
    refresh();
    $("function-section").scrollIntoView({ block: "nearest" });
  }

  function functionView() {
    const section = $("function-section");
    const f = state.fn;
    if (f < 0) {
      section.hidden = true;
      return;
    }
    section.hidden = false;
    $("function-name").replaceChildren(isolated(F.name[f]));
    const callers = new Map();
    const callees = new Map();
    let self = 0;
    let total = 0;
    // Below each node: the weight that reaches a frame of `f` at or under it (callees are read
    // from the innermost frame of `f`, callers from the outermost: SPEC §8).
    const reach = new Float64Array(nodeCount);
    for (let n = nodeCount - 1; n >= 0; n--) {
      if (nodeFunction[n] === f) reach[n] = view.total[n];
      const p = nodeParent[n];
      if (p >= 0 && nodeFunction[p] !== f) reach[p] += reach[n];
    }
    for (let n = 0; n < nodeCount; n++) {
      if (nodeFunction[n] !== f || view.total[n] === 0) continue;
      self += view.self[n];
      let outermost = true;
      for (let a = nodeParent[n]; a >= 0; a = nodeParent[a]) {
        if (nodeFunction[a] === f) {
          outermost = false;
          break;
        }
      }
      if (outermost) {
        total += view.total[n];
        const p = nodeParent[n];
        const caller = p < 0 ? -2 : nodeFunction[p];
        callers.set(caller, (callers.get(caller) ?? 0) + view.total[n]);
      }
      for (const c of children[n]) {
        const through = view.total[c] - reach[c];
        if (through > 0) callees.set(nodeFunction[c], (callees.get(nodeFunction[c]) ?? 0) + through);
      }
    }
    if (wholeRange()) total = F.whole_total[f];
    const facts = $("function-facts");
    facts.replaceChildren(
      ...(location(f) === "" ? [] : [isolated(location(f))]),
      " — self " + formatWeight(self) + " (" + percent(self, view.counted) + "), total " + formatWeight(total) +
      " (" + percent(total, view.counted) + ")",
    );
    facts.dataset.self = String(self);
    facts.dataset.total = String(total);
    const fill = (table, map) => {
      const body = table.tBodies[0];
      body.replaceChildren();
      const rows = [...map.entries()].sort((a, b) => b[1] - a[1] || compareIdentity(a[0], b[0], nameOf, "function"));
      for (const [g, w] of rows) {
        const tr = make("tr", null, g >= 0 ? "clickable" : "");
        tr.dataset.total = String(w);
        const name = g === -2 ? "(root)" : nameOf(g);
        const cell = named("td", name, "name");
        cell.dataset.name = name;
        if (g >= 0) {
          cell.append(" ", isolated(shortLocation(g), "loc"));
          tr.dataset.file = pathOf(g) ?? "";
          tr.dataset.line = F.line[g] === null ? "" : String(F.line[g]);
          tr.addEventListener("click", () => selectFunction(g));
        }
        tr.append(cell, make("td", formatWeight(w), "num"), make("td", percent(w, total), "num"));
        body.append(tr);
      }
    };
    fill($("callers"), callers);
    fill($("callees"), callees);
    const lines = D.lines.filter((l) => l[0] === f);
    $("lines-box").hidden = lines.length === 0;
    const body = $("lines").tBodies[0];
    body.replaceChildren();
    const lineSelf = lines.reduce((a, l) => a + l[2], 0);
    for (const [, line, w] of [...lines].sort((a, b) => b[2] - a[2] || a[1] - b[1])) {
      const tr = make("tr");
      tr.append(make("td", line, "num"), make("td", formatWeight(w), "num"), make("td", percent(w, lineSelf), "num"));
      body.append(tr);
    }
    annotate(f, lines, lineSelf);
    jit(f);
  }

  // What V8 did to the function (tick logs: tiers, compilations, deopts, inlining), in
  // `cpuprof jit`'s words; sub-lines (indented) nest under the line before them.
  function jit(f) {
    const entry = (D.jit || []).find((j) => j.function === f);
    $("jit-box").hidden = !entry;
    const list = $("jit-lines");
    list.replaceChildren();
    if (!entry) return;
    let sub = null;
    for (const line of entry.lines) {
      if (line.startsWith("  ") && list.lastChild) {
        if (!sub) {
          sub = make("ul");
          list.lastChild.append(sub);
        }
        sub.append(make("li", visible(line.trimStart())));
      } else {
        sub = null;
        list.append(make("li", visible(line)));
      }
    }
  }

  // A function's source around its lines, each with the self time and share of the table above
  // (shares of its listed lines' self, the page keeping a function's heaviest lines); the
  // hottest (at most 3, each with at least 5% of that, `cpuprof annotate`'s rule) highlighted,
  // the first of them scrolled into view. Tabs stop every 4 columns, as in the terminal.
  function untab(text) {
    let out = "";
    for (const c of text) out += c === "\t" ? " ".repeat(4 - (out.length % 4)) : c;
    return out;
  }

  function annotate(f, lines, lineSelf) {
    const source = (D.sources || []).find((s) => s.function === f);
    $("annotated-box").hidden = !source;
    const body = $("annotated").tBodies[0];
    body.replaceChildren();
    if (!source) return;
    $("annotated-file").textContent = visible(source.file) + " (" + source.origin + ")";
    const weights = new Map(lines.map(([, line, w]) => [line, w]));
    const hot = lines
      .filter(([, , w]) => w > 0 && 100 * w >= 5 * lineSelf)
      .sort((a, b) => b[2] - a[2] || a[1] - b[1])
      .slice(0, 3)
      .map(([, line]) => line);
    let before = null;
    let hottest = null;
    for (const [line, text] of source.lines) {
      if (before !== null && line > before + 1) {
        const gap = make("tr", null, "gap");
        const cell = make("td", "⋮");
        cell.colSpan = 4;
        gap.append(cell);
        body.append(gap);
      }
      const w = weights.get(line) || 0;
      const tr = make("tr", null, hot.includes(line) ? "hot" : w > 0 ? "" : "cold");
      tr.append(
        make("td", line, "num"),
        make("td", w > 0 ? formatWeight(w) : "", "num"),
        make("td", w > 0 ? percent(w, lineSelf) : "", "num"),
        make("td", visible(untab(text)), "code"),
      );
      if (line === hot[0]) hottest = tr;
      body.append(tr);
      before = line;
    }
    if (hottest) {
      const scroller = $("annotated-scroll");
      scroller.scrollTop = Math.max(0, hottest.offsetTop - scroller.clientHeight / 3);
    }
  }

  // ---- flame graph ----
  const ROW = 18;
  // Rows a canvas can hold (browsers stop drawing past ~32,000 pixels).
  const MAX_ROWS = 1500;
  const canvas = $("flame");
  let frames = [];
  let search = null;
  function flame() {
    const width = Math.max(320, canvas.parentElement.clientWidth);
    const icicle = $("icicle").checked;
    const whole = roots.reduce((a, r) => a + view.total[r], 0);
    // The zoomed node takes the whole width; its ancestors are drawn full width too.
    const zoom = state.zoom >= 0 && view.total[state.zoom] > 0 ? state.zoom : -1;
    const scaleTotal = zoom >= 0 ? view.total[zoom] : whole;
    frames = [];
    let maxDepth = 0;
    let cut = false;
    // Siblings by name, then in tree order (a stable order from draw to draw).
    const byName = (a, b) => {
      const x = nameOf(nodeFunction[a]);
      const y = nameOf(nodeFunction[b]);
      return x < y ? -1 : x > y ? 1 : a - b;
    };
    // Without recursion (a stack can be thousands of frames deep), and no deeper than a canvas
    // can be tall: the frames below MAX_ROWS are left out (zoom in to see them).
    const place = (top, x0, depth0) => {
      const todo = [[top, x0, depth0]];
      while (todo.length > 0) {
        const [n, x, depth] = todo.pop();
        const w = (view.total[n] / scaleTotal) * width;
        if (w < 0.3) continue;
        if (depth >= MAX_ROWS) {
          cut = true;
          continue;
        }
        frames.push({ n, x, w, depth });
        maxDepth = Math.max(maxDepth, depth);
        let cx = x;
        const kids = children[n].filter((c) => view.total[c] > 0).sort(byName);
        const placed = [];
        for (const c of kids) {
          placed.push([c, cx, depth + 1]);
          cx += (view.total[c] / scaleTotal) * width;
        }
        for (let i = placed.length - 1; i >= 0; i--) todo.push(placed[i]);
      }
    };
    frames.push({ n: -1, x: 0, w: width, depth: 0 });
    if (zoom >= 0) {
      // The zoomed frame's callers, full width: the nearest ones when there are too many.
      const chain = [];
      for (let a = zoom; a >= 0; a = nodeParent[a]) chain.unshift(a);
      const callers = chain.slice(0, -1).slice(-Math.floor(MAX_ROWS / 2));
      callers.forEach((a, i) => frames.push({ n: a, x: 0, w: width, depth: i + 1 }));
      place(zoom, 0, callers.length + 1);
    } else {
      let x = 0;
      for (const r of [...roots].sort(byName)) {
        if (view.total[r] === 0) continue;
        place(r, x, 1);
        x += (view.total[r] / whole) * width;
      }
    }
    const height = (maxDepth + 1) * ROW + 2;
    const ctx = canvasContext(canvas, width, height, "12px system-ui, sans-serif");
    let matched = 0;
    const matches = new Uint8Array(nodeCount);
    if (search) {
      // The share of the total under a matching frame, once per path.
      for (let n = 0; n < nodeCount; n++) {
        const p = nodeParent[n];
        const above = p >= 0 && matches[p] > 0;
        const hit = searchMatches(nodeFunction[n]);
        matches[n] = hit ? (above ? 2 : 1) : above ? 2 : 0;
        if (hit && !above) matched += view.total[n];
      }
    }
    for (const fr of frames) {
      const y = icicle ? fr.depth * ROW : height - (fr.depth + 1) * ROW;
      const f = fr.n < 0 ? -1 : nodeFunction[fr.n];
      let color = fr.n < 0 ? "#c8c8c8" : f < 0 ? "#bbbbbb" : F.color[f];
      if (search && fr.n >= 0 && searchMatches(f)) color = "#e040fb";
      ctx.fillStyle = color;
      ctx.fillRect(fr.x, y, Math.max(fr.w - 0.5, 0.3), ROW - 1);
      if (fr.w > 24) {
        ctx.fillStyle = "#000";
        const label = fr.n < 0 ? "all (" + formatWeight(whole) + ")" : frameLabel(f);
        ctx.fillText(fit(ctx, label, fr.w - 6), fr.x + 3, y + ROW / 2);
      }
      fr.y = y;
    }
    canvas.dataset.frames = String(frames.length);
    $("flame-note").textContent = cut ? "Frames deeper than " + MAX_ROWS + " levels are not drawn: click a deep frame to zoom in." : "";
    $("reset-zoom").hidden = zoom < 0;
    const share = whole > 0 ? (100 * matched) / whole : 0;
    $("matched").textContent = search ? "matched " + share.toFixed(2) + "% of the total (" + formatWeight(matched) + ")" : "";
    $("matched").dataset.weight = search ? String(matched) : "";
  }

  function searchMatches(f) {
    if (!search) return false;
    if (f < 0) return false;
    search.lastIndex = 0;
    if (search.test(F.name[f])) return true;
    const path = pathOf(f);
    search.lastIndex = 0;
    return path !== null && search.test(path);
  }

  // Shown as the tables show them, each isolated (U+2068 … U+2069) as a <bdi> would be.
  const frameLabel = (f) =>
    f < 0 ? "(pruned)" : "\u2068" + visible(F.name[f]) + "\u2069" + (pathOf(f) === null ? "" : " \u2068" + visible(shortLocation(f)) + "\u2069");

  /** `text` cut from the right (the name first, then its location) to fit `width` pixels. */
  function fit(ctx, text, width) {
    // No label shows more characters than it has half pixels: the rest is never measured (a
    // name can be megabytes long).
    const cap = Math.ceil(Math.max(width, 0)) * 2 + 2;
    if (text.length <= cap && ctx.measureText(text).width <= width) return text;
    let lo = 0;
    let hi = Math.min(text.length, cap);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + "…").width <= width) lo = mid;
      else hi = mid - 1;
    }
    return lo === 0 ? "" : text.slice(0, lo) + "…";
  }

  function frameAt(event) {
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    for (let i = frames.length - 1; i >= 0; i--) {
      const fr = frames[i];
      if (x >= fr.x && x < fr.x + fr.w && y >= fr.y && y < fr.y + ROW) return fr;
    }
    return null;
  }

  canvas.addEventListener("mousemove", (event) => {
    const fr = frameAt(event);
    const tip = $("tip");
    if (!fr) {
      tip.hidden = true;
      return;
    }
    const whole = roots.reduce((a, r) => a + view.total[r], 0);
    tip.replaceChildren();
    if (fr.n < 0) {
      tip.append(make("div", "all: " + formatWeight(whole)));
    } else {
      const f = nodeFunction[fr.n];
      tip.append(named("strong", nameOf(f)));
      if (f >= 0 && location(f) !== "") tip.append(named("div", location(f), "loc"));
      tip.append(
        make("div", "total " + formatWeight(view.total[fr.n]) + " (" + percent(view.total[fr.n], whole) + "), self " +
          formatWeight(view.self[fr.n])),
      );
      if (f >= 0) tip.append(make("div", D.categories[F.category[f]], "loc"));
    }
    tip.hidden = false;
    tip.style.left = Math.min(event.clientX + 12, window.innerWidth - 300) + "px";
    tip.style.top = event.clientY + 14 + "px";
  });
  canvas.addEventListener("mouseleave", () => ($("tip").hidden = true));
  canvas.addEventListener("click", (event) => {
    const fr = frameAt(event);
    if (!fr) return;
    state.zoom = fr.n;
    if (fr.n >= 0 && nodeFunction[fr.n] >= 0) state.fn = nodeFunction[fr.n];
    refresh();
  });

  // ---- flame chart: the samples in time order ----
  // Runs of samples (D.chart: consecutive samples with one stack, each lasting until the next
  // sample) laid out as DevTools does: a frame per call, callers on top, consecutive runs that
  // share a caller sharing its frame. Names are drawn with fillText, and the tooltip is text.
  const C = D.chart;
  const chartCanvas = $("chart");
  const CHART_ROW = 16;
  const CHART_AXIS = 18;
  const runCount = C.node.length;
  const chartWhole = [0, Math.max(runCount > 0 ? C.end_ns[runCount - 1] : 0, bucketCount > 0 ? D.buckets.end_ns[bucketCount - 1] : 0)];
  const chartView = { t0: chartWhole[0], t1: chartWhole[1], segments: [], drag: null, sync: 0 };

  /** The nodes from the outermost caller down to `n`. */
  function stackOf(n) {
    const stack = [];
    for (let a = n; a >= 0; a = nodeParent[a]) stack.push(a);
    return stack.reverse();
  }

  /** Frames in [t0, t1): per depth, each call (a node over contiguous runs) once. */
  function chartLayout(t0, t1) {
    const segments = [];
    const open = [];
    const flush = (d) => {
      const o = open[d];
      if (o) segments.push(o);
      open[d] = null;
    };
    // The first run that ends after t0.
    let lo = 0;
    let hi = runCount;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (C.end_ns[mid] <= t0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < runCount && C.start_ns[i] < t1; i++) {
      const stack = stackOf(C.node[i]);
      const start = C.start_ns[i];
      const end = C.end_ns[i];
      for (let d = 0; d < stack.length; d++) {
        const o = open[d];
        if (o && o.node === stack[d] && o.end === start) o.end = end;
        else {
          flush(d);
          open[d] = { node: stack[d], depth: d, start, end };
        }
      }
      for (let d = stack.length; d < open.length; d++) flush(d);
    }
    for (let d = 0; d < open.length; d++) flush(d);
    return segments;
  }

  function chartDraw() {
    if (runCount === 0) return;
    const width = Math.max(280, chartCanvas.parentElement.clientWidth);
    const { t0, t1 } = chartView;
    const scale = width / (t1 - t0);
    const segments = chartLayout(t0, t1);
    chartView.segments = segments;
    let depth = 0;
    for (const s of segments) depth = Math.max(depth, s.depth + 1);
    const rows = Math.min(Math.max(depth, 1), MAX_ROWS);
    const height = CHART_AXIS + rows * CHART_ROW + 2;
    const ctx = canvasContext(chartCanvas, width, height, "11px system-ui, sans-serif");
    // The time axis: about one tick per 100 px, at round times.
    const step = niceStep((t1 - t0) / Math.max(1, width / 100));
    ctx.fillStyle = "#888";
    for (let t = Math.ceil(t0 / step) * step; t < t1; t += step) {
      const x = (t - t0) * scale;
      ctx.fillRect(x, 0, 1, CHART_AXIS - 4);
      ctx.fillText(formatNs(t + (D.window_from_ns || 0)), x + 3, (CHART_AXIS - 4) / 2);
    }
    ctx.font = "12px system-ui, sans-serif";
    for (const s of segments) {
      if (s.depth >= MAX_ROWS) continue;
      const x0 = (Math.max(s.start, t0) - t0) * scale;
      const x1 = (Math.min(s.end, t1) - t0) * scale;
      const w = x1 - x0;
      if (w < 0.3) continue;
      const f = nodeFunction[s.node];
      const y = CHART_AXIS + s.depth * CHART_ROW;
      ctx.fillStyle = f < 0 ? "#bbbbbb" : F.color[f];
      ctx.fillRect(x0, y, Math.max(w - 0.5, 0.3), CHART_ROW - 1);
      if (w > 24) {
        ctx.fillStyle = "#000";
        ctx.fillText(fit(ctx, frameLabel(f), w - 6), x0 + 3, y + CHART_ROW / 2);
      }
    }
    chartCanvas.dataset.t0 = String(t0);
    chartCanvas.dataset.t1 = String(t1);
    chartCanvas.dataset.frames = String(segments.length);
    const offset = D.window_from_ns || 0;
    $("chart-range").textContent = formatNs(t0 + offset) + " – " + formatNs(t1 + offset) + " (" + formatNs(t1 - t0) + ")";
    $("chart-whole").hidden = t0 <= chartWhole[0] && t1 >= chartWhole[1];
  }

  /** A round step (1, 2, 5 × 10^k ns) of at least `span`. */
  function niceStep(span) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(span, 1))));
    for (const m of [1, 2, 5, 10]) if (m * p >= span) return m * p;
    return 10 * p;
  }

  /** Shows [t0, t1) (at least 1 µs, within the recording); `sync`: the timeline follows. */
  function chartZoom(t0, t1, sync) {
    const whole = chartWhole[1] - chartWhole[0];
    let span = Math.min(Math.max(t1 - t0, Math.min(1000, whole)), whole);
    if (!(span > 0)) span = whole;
    let start = Math.min(Math.max(t0 + (t1 - t0 - span) / 2, chartWhole[0]), chartWhole[1] - span);
    if (!Number.isFinite(start)) start = chartWhole[0];
    chartView.t0 = start;
    chartView.t1 = start + span;
    chartDraw();
    if (sync) {
      // The timeline (and every view with it) follows once the zooming stops.
      window.clearTimeout(chartView.sync);
      chartView.sync = window.setTimeout(chartSelects, 250);
    }
  }

  /** The chart's view as the timeline's selection: the buckets it touches. */
  function chartSelects() {
    const { t0, t1 } = chartView;
    if (t0 <= chartWhole[0] && t1 >= chartWhole[1]) {
      setRange(0, bucketCount, true);
      return;
    }
    let b0 = 0;
    while (b0 + 1 < bucketCount && D.buckets.start_ns[b0 + 1] <= t0) b0++;
    let b1 = b0 + 1;
    while (b1 < bucketCount && D.buckets.start_ns[b1] < t1) b1++;
    setRange(b0, b1, true);
  }

  function chartSegmentAt(event) {
    const rect = chartCanvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const depth = Math.floor((event.clientY - rect.top - CHART_AXIS) / CHART_ROW);
    const t = chartView.t0 + (x / rect.width) * (chartView.t1 - chartView.t0);
    return chartView.segments.find((s) => s.depth === depth && s.start <= t && t < s.end) ?? null;
  }

  function chartSetup() {
    if (!D.timed || runCount === 0) return;
    $("chart-section").hidden = false;
    if (C.slot_ns !== null) {
      $("chart-slots").hidden = false;
      $("chart-slots").textContent =
        "The recording has " + C.runs.toLocaleString("en-US") + " runs of samples (a run: consecutive samples with one stack); " +
        "the page holds them as " + runCount.toLocaleString("en-US") + " slots of " + formatNs(C.slot_ns) +
        ", each showing the stack that held most of it: closer than that, the chart shows no more detail.";
    }
    chartCanvas.addEventListener(
      "wheel",
      (event) => {
        event.preventDefault();
        const rect = chartCanvas.getBoundingClientRect();
        const span = chartView.t1 - chartView.t0;
        if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
          const d = (event.shiftKey ? event.deltaY : event.deltaX) / rect.width;
          chartZoom(chartView.t0 + d * span, chartView.t1 + d * span, true);
          return;
        }
        const at = chartView.t0 + ((event.clientX - rect.left) / rect.width) * span;
        const k = Math.exp(event.deltaY * 0.002);
        chartZoom(at - (at - chartView.t0) * k, at + (chartView.t1 - at) * k, true);
      },
      { passive: false },
    );
    chartCanvas.addEventListener("pointerdown", (event) => {
      chartView.drag = { x: event.clientX, t0: chartView.t0, t1: chartView.t1, moved: false };
      chartCanvas.setPointerCapture(event.pointerId);
    });
    chartCanvas.addEventListener("pointermove", (event) => {
      const drag = chartView.drag;
      if (drag) {
        const dx = event.clientX - drag.x;
        if (Math.abs(dx) > 2) drag.moved = true;
        if (drag.moved) {
          const d = (-dx / chartCanvas.getBoundingClientRect().width) * (drag.t1 - drag.t0);
          chartZoom(drag.t0 + d, drag.t1 + d, true);
        }
        $("tip").hidden = true;
        return;
      }
      const s = chartSegmentAt(event);
      const tip = $("tip");
      if (!s) {
        tip.hidden = true;
        return;
      }
      const f = nodeFunction[s.node];
      tip.replaceChildren(named("strong", nameOf(f)));
      if (f >= 0 && location(f) !== "") tip.append(named("div", location(f), "loc"));
      const offset = D.window_from_ns || 0;
      tip.append(make("div", formatNs(s.end - s.start) + " (" + formatNs(s.start + offset) + " – " + formatNs(s.end + offset) + ")"));
      tip.hidden = false;
      tip.style.left = Math.max(0, Math.min(event.clientX + 12, window.innerWidth - 300)) + "px";
      tip.style.top = event.clientY + 14 + "px";
    });
    const endDrag = () => (chartView.drag = null);
    chartCanvas.addEventListener("pointerup", endDrag);
    chartCanvas.addEventListener("pointercancel", endDrag);
    chartCanvas.addEventListener("mouseleave", () => ($("tip").hidden = true));
    chartCanvas.addEventListener("keydown", (event) => {
      const { t0, t1 } = chartView;
      const span = t1 - t0;
      const middle = (t0 + t1) / 2;
      const moves = {
        "+": () => chartZoom(middle - span / 4, middle + span / 4, true),
        "=": () => chartZoom(middle - span / 4, middle + span / 4, true),
        "-": () => chartZoom(middle - span, middle + span, true),
        ArrowLeft: () => chartZoom(t0 - span / 5, t1 - span / 5, true),
        ArrowRight: () => chartZoom(t0 + span / 5, t1 + span / 5, true),
        0: () => chartZoom(chartWhole[0], chartWhole[1], true),
        Home: () => chartZoom(chartWhole[0], chartWhole[1], true),
      };
      const move = moves[event.key];
      if (move) {
        event.preventDefault();
        move();
      }
    });
    $("chart-whole").addEventListener("click", () => chartZoom(chartWhole[0], chartWhole[1], true));
    // For the browser test: the names of the chart's frames at `t` (ns after the recording's
    // start), outermost first, read from the frames laid out around it.
    window.__flameChartStackAt = (t) => {
      chartZoom(t - 500, t + 500, false);
      return chartView.segments
        .filter((s) => s.start <= t && t < s.end)
        .sort((a, b) => a.depth - b.depth)
        .map((s) => nameOf(nodeFunction[s.node]));
    };
    chartDraw();
  }

  // ---- wiring ----
  function refresh() {
    view = compute();
    categorySplit();
    topTable();
    functionView();
    flame();
  }

  for (const c of D.categories) $("category").append(make("option", c));
  $("group").addEventListener("change", () => {
    state.group = $("group").value;
    topTable();
  });
  $("category").addEventListener("change", topTable);
  $("filter").addEventListener("input", topTable);
  for (const th of $("top").tHead.querySelectorAll("th[data-sort]")) {
    th.addEventListener("click", () => {
      state.sort = th.dataset.sort;
      topTable();
    });
  }
  $("whole").addEventListener("click", () => setRange(0, bucketCount));
  $("icicle").addEventListener("change", flame);
  $("reset-zoom").addEventListener("click", () => {
    state.zoom = -1;
    flame();
  });
  $("search").addEventListener("input", () => {
    const text = $("search").value;
    if (text === "") search = null;
    else {
      try {
        search = new RegExp(text);
      } catch {
        search = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
      }
    }
    flame();
  });
  window.addEventListener("resize", () => {
    if (chart) chart.setSize({ width: Math.max(320, $("timeline").clientWidth), height: 180 });
    flame();
    chartDraw();
  });

  header();
  blocks();
  view = compute();
  timeline();
  chartSetup();
  refresh();
  document.body.dataset.ready = "true";
})();
