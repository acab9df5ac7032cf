// cairn report: draws the radial I/O network, the latency timeline and the summary's tables
// from the JSON embedded in the page. Every piece of trace text (paths, commands, names) is
// put in the page as text (textContent, createTextNode), never as markup.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("cairn-data").textContent);
  const net = data.network;
  const summary = data.summary;
  const SVG = "http://www.w3.org/2000/svg";
  const state = { metric: "latency", from: 0, to: net.time_bins };

  function el(tag, attributes, parent) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
    if (parent) parent.appendChild(node);
    return node;
  }
  function html(tag, text, parent, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    if (parent) parent.appendChild(node);
    return node;
  }

  // Perceptually ordered colour maps (viridis for the application ring, inferno for the
  // storage ring), interpolated between control points.
  const MAPS = [
    [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]],
    [[20, 11, 52], [120, 28, 109], [212, 72, 66], [250, 153, 8], [252, 255, 164]],
  ];
  function colour(ring, fraction) {
    const stops = MAPS[ring];
    const x = Math.max(0, Math.min(1, fraction)) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(x));
    const t = x - i;
    const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * t));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  function formatValue(value, metric) {
    if (metric === "size") {
      const units = ["B", "KiB", "MiB", "GiB", "TiB"];
      let u = 0;
      while (value >= 1024 && u < units.length - 1) { value /= 1024; u++; }
      return `${value.toFixed(value < 10 && u > 0 ? 1 : 0)} ${units[u]}`;
    }
    if (value < 1e3) return `${value.toFixed(0)} ns`;
    if (value < 1e6) return `${(value / 1e3).toFixed(1)} µs`;
    if (value < 1e9) return `${(value / 1e6).toFixed(2)} ms`;
    return `${(value / 1e9).toFixed(3)} s`;
  }
  function binValue(range, bin, bins) {
    // The display bins split [min, max] evenly on a log scale (of value + 1).
    const low = Math.log2(range.min + 1), high = Math.log2(range.max + 1);
    return Math.pow(2, low + (high - low) * bin / bins) - 1;
  }

  // ---- The radial network ----
  const RADII = { outer: [440, 480], middle: [300, 330], centre: 130 };
  const svg = document.getElementById("network");
  const tooltip = document.getElementById("tooltip");
  const angle = (index, count) => (2 * Math.PI * (index + 0.5)) / Math.max(count, 1) - Math.PI / 2;
  const point = (r, a) => [r * Math.cos(a), r * Math.sin(a)];

  function sector(r0, r1, a0, a1) {
    const large = a1 - a0 > Math.PI ? 1 : 0;
    const [x0, y0] = point(r1, a0), [x1, y1] = point(r1, a1);
    const [x2, y2] = point(r0, a1), [x3, y3] = point(r0, a0);
    if (r0 === 0) return `M0,0 L${x0},${y0} A${r1},${r1} 0 ${large} 1 ${x1},${y1} Z`;
    return `M${x0},${y0} A${r1},${r1} 0 ${large} 1 ${x1},${y1} L${x2},${y2} A${r0},${r0} 0 ${large} 0 ${x3},${y3} Z`;
  }

  function ring(nodes, r0, r1, kind, group) {
    const n = nodes.length;
    const gap = n > 1 ? Math.min(0.02, (Math.PI / n) * 0.2) : 0;
    nodes.forEach((node, i) => {
      let a0 = (2 * Math.PI * i) / n - Math.PI / 2 + gap;
      let a1 = (2 * Math.PI * (i + 1)) / n - Math.PI / 2 - gap;
      if (n === 1) { a0 = -Math.PI / 2; a1 = (3 * Math.PI) / 2 - 1e-4; }
      const segment = el("path", { d: sector(r0, r1, a0, a1), class: `node ${kind}` }, group);
      segment.dataset.label = node.label;
      segment.addEventListener("mousemove", (e) => show(e, [node.label]));
      segment.addEventListener("mouseleave", hide);
      if (n <= 64) {
        const [x, y] = point(r1 + 12, angle(i, n));
        const label = el("text", { x, y, class: `label ${kind}`, "text-anchor": "middle" }, group);
        label.textContent = node.label;
      }
    });
  }

  function edgePath(r0, a0, r1, a1, t0, t1) {
    // Radius and angle interpolated together, the shorter way round.
    let delta = a1 - a0;
    while (delta > Math.PI) delta -= 2 * Math.PI;
    while (delta < -Math.PI) delta += 2 * Math.PI;
    const steps = 4;
    let d = "";
    for (let s = 0; s <= steps; s++) {
      const t = t0 + ((t1 - t0) * s) / steps;
      const [x, y] = point(r0 + (r1 - r0) * t, a0 + delta * t);
      d += `${s ? "L" : "M"}${x.toFixed(2)},${y.toFixed(2)}`;
    }
    return d;
  }

  const edgeGroups = [];
  function drawNetwork() {
    svg.replaceChildren();
    const edges = el("g", { class: "edges" }, svg);
    const rings = el("g", { class: "rings" }, svg);
    ring(net.ranks, RADII.outer[0], RADII.outer[1], "rank", rings);
    ring(net.middle, RADII.middle[0], RADII.middle[1], "middle", rings);
    ring(net.targets, 0, RADII.centre, "target", rings);
    edgeGroups.length = 0;
    for (const edge of net.edges) {
      const g = el("g", { class: "edge" }, edges);
      g.dataset.ring = edge.ring;
      g.dataset.from = edge.from;
      g.dataset.to = edge.to;
      const [r0, a0, r1, a1] = edge.ring === 0
        ? [RADII.outer[0], angle(edge.from, net.ranks.length), RADII.middle[1], angle(edge.to, net.middle.length)]
        : [RADII.middle[0], angle(edge.from, net.middle.length), RADII.centre, angle(edge.to, net.targets.length)];
      // A grey line the whole length (no value), and a coloured stretch per bin with
      // values, made when the selection changes: only what is seen is drawn.
      el("path", { d: edgePath(r0, a0, r1, a1, 0, 1), class: "base" }, g);
      const bins = el("g", { class: "bins" }, g);
      const paths = [];
      for (let bin = 0; bin < net.value_bins; bin++) {
        // Outer end = highest value.
        const t0 = (net.value_bins - 1 - bin) / net.value_bins, t1 = (net.value_bins - bin) / net.value_bins;
        paths.push(() => edgePath(r0, a0, r1, a1, t0, t1));
      }
      const segments = { bins, paths };
      g.addEventListener("mousemove", (e) => show(e, edgeText(edge)));
      g.addEventListener("mouseleave", hide);
      edgeGroups.push({ edge, g, segments });
    }
    colourEdges();
  }

  function counts(edge) {
    const list = state.metric === "latency" ? edge.latency : edge.size;
    const bins = new Array(net.value_bins).fill(0);
    for (const [time, bin, count] of list) if (time >= state.from && time < state.to) bins[bin] += count;
    return bins;
  }

  function colourEdges() {
    let most = [1, 1];
    const all = edgeGroups.map(({ edge }) => counts(edge));
    all.forEach((bins, i) => { const r = edgeGroups[i].edge.ring; most[r] = Math.max(most[r], ...bins); });
    edgeGroups.forEach(({ edge, g, segments }, i) => {
      const bins = all[i];
      const any = bins.some((c) => c > 0);
      g.classList.toggle("idle", !any);
      segments.bins.replaceChildren();
      bins.forEach((c, bin) => {
        if (c === 0) return;
        const stroke = colour(edge.ring, Math.log(1 + c) / Math.log(1 + most[edge.ring]));
        el("path", { d: segments.paths[bin](), class: "bin", stroke }, segments.bins);
      });
    });
    const label = document.getElementById("selection");
    const whole = state.from === 0 && state.to === net.time_bins;
    const seconds = (bin) => ((net.time_start + (bin * (net.time_end - net.time_start)) / net.time_bins) / 1e9).toFixed(4);
    label.textContent = whole ? "the whole run" : `${seconds(state.from)} s – ${seconds(state.to)} s`;
  }

  function edgeText(edge) {
    const bins = counts(edge);
    const range = (state.metric === "latency" ? net.latency_range : net.size_range)[edge.ring];
    const total = bins.reduce((a, b) => a + b, 0);
    const seen = bins.map((c, b) => [c, b]).filter(([c]) => c > 0);
    const from = edge.ring === 0 ? net.ranks[edge.from] : net.middle[edge.from];
    const to = edge.ring === 0 ? net.middle[edge.to] : net.targets[edge.to];
    const lines = [`${from ? from.label : "?"} → ${to ? to.label : "?"}`, `${total} values in the selection`];
    if (seen.length) {
      lines.push(`${state.metric}: ${formatValue(binValue(range, seen[0][1], net.value_bins), state.metric)} – ${formatValue(binValue(range, seen[seen.length - 1][1] + 1, net.value_bins), state.metric)}`);
    }
    return lines;
  }

  function show(event, lines) {
    tooltip.replaceChildren();
    for (const line of lines) html("div", line, tooltip);
    tooltip.style.display = "block";
    tooltip.style.left = `${event.pageX + 12}px`;
    tooltip.style.top = `${event.pageY + 12}px`;
  }
  function hide() { tooltip.style.display = "none"; }

  // ---- The timeline: mean latency, and a band from min to max, per time bin ----
  const timeline = document.getElementById("timeline");
  function drawTimeline() {
    timeline.replaceChildren();
    const W = 1000, H = 180, left = 60, bottom = 20;
    const bins = net.timeline;
    const values = bins.filter((b) => b.count > 0);
    if (!values.length) { el("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, timeline).textContent = "no I/O latency recorded"; return; }
    const low = Math.log10(1 + Math.min(...values.map((b) => b.min)));
    const high = Math.max(low + 1, Math.log10(1 + Math.max(...values.map((b) => b.max))));
    const x = (bin) => left + ((W - left) * bin) / net.time_bins;
    const y = (v) => H - bottom - ((H - bottom - 5) * (Math.log10(1 + v) - low)) / (high - low);
    let band = "", mean = "";
    bins.forEach((b, i) => {
      if (!b.count) return;
      band += `M${x(i)},${y(b.max)} L${x(i + 1)},${y(b.max)} L${x(i + 1)},${y(b.min)} L${x(i)},${y(b.min)} Z `;
      mean += `${mean ? "L" : "M"}${x(i + 0.5)},${y(b.mean)} `;
    });
    el("path", { d: band, class: "band" }, timeline);
    el("path", { d: mean, class: "mean" }, timeline);
    el("line", { x1: left, y1: H - bottom, x2: W, y2: H - bottom, class: "axis" }, timeline);
    for (const v of [Math.pow(10, low) - 1, Math.pow(10, high) - 1]) {
      el("text", { x: left - 4, y: y(v) + 4, "text-anchor": "end", class: "tick" }, timeline).textContent = formatValue(v, "latency");
    }
    el("text", { x: left, y: H - 4, class: "tick" }, timeline).textContent = `${(net.time_start / 1e9).toFixed(4)} s`;
    el("text", { x: W, y: H - 4, "text-anchor": "end", class: "tick" }, timeline).textContent = `${(net.time_end / 1e9).toFixed(4)} s`;
    const whole = state.from === 0 && state.to === net.time_bins;
    const brush = el("rect", { x: x(state.from), y: 0, width: whole ? 0 : x(state.to) - x(state.from), height: H - bottom, class: "brush" }, timeline);
    let start = null;
    const binAt = (event) => {
      const box = timeline.getBoundingClientRect();
      const px = ((event.clientX - box.left) / box.width) * W;
      return Math.max(0, Math.min(net.time_bins, Math.round(((px - left) / (W - left)) * net.time_bins)));
    };
    timeline.onmousedown = (e) => { start = binAt(e); };
    timeline.onmousemove = (e) => {
      if (start === null) return;
      const b = binAt(e);
      brush.setAttribute("x", x(Math.min(start, b)));
      brush.setAttribute("width", Math.abs(x(b) - x(start)));
    };
    timeline.onmouseup = (e) => {
      if (start === null) return;
      const b = binAt(e);
      select(start === b ? 0 : Math.min(start, b), start === b ? net.time_bins : Math.max(start, b));
      start = null;
    };
  }

  function select(from, to) {
    state.from = from;
    state.to = to;
    colourEdges();
    drawTimeline();
  }

  // ---- Tables ----
  function table(id, columns, rows) {
    const container = document.getElementById(id);
    if (!rows.length) { html("p", "none", container, "empty"); return; }
    const t = html("table", undefined, container);
    const head = html("tr", undefined, html("thead", undefined, t));
    for (const [title] of columns) html("th", title, head);
    const body = html("tbody", undefined, t);
    for (const row of rows) {
      const tr = html("tr", undefined, body);
      for (const [, cell] of columns) {
        const value = cell(row);
        html("td", value === undefined || value === null ? "" : value, tr, typeof value === "number" ? "number" : "");
      }
    }
  }
  const bytes = (v) => formatValue(v, "size");
  const secs = (v) => (v === undefined ? "" : `${v.toFixed(6)} s`);

  function drawInsights() {
    const container = document.getElementById("insights");
    if (!summary.insights.length) { html("p", "None: no rule of Drishti's fires on this run.", container, "empty"); return; }
    for (const insight of summary.insights) {
      const box = html("div", undefined, container, `insight ${insight.level}`);
      html("strong", `${insight.level === "high" ? "HIGH" : "WARN"} ${insight.id}: `, box);
      html("span", insight.message, box);
      const list = html("ul", undefined, box);
      if (insight.files.length) html("li", `files: ${insight.files.join(", ")}`, list);
      if (insight.ranks.length) html("li", `ranks: ${insight.ranks.join(", ")}`, list);
      if (insight.call_sites.length) html("li", `call sites: ${insight.call_sites.join(", ")}`, list);
      html("li", `what to do: ${insight.recommendation}`, list);
    }
  }

  function drawTables() {
    const command = summary.command.join(" ");
    document.title = `cairn report: ${command}`;
    document.getElementById("command").textContent = command;
    document.getElementById("overview").textContent =
      `${summary.processes} processes, ${summary.ranks} ranks, ${summary.events} calls, ` +
      `${bytes(summary.bytes_read)} read, ${bytes(summary.bytes_written)} written in ${summary.duration.toFixed(3)} s`;
    const rings = document.getElementById("rings");
    rings.textContent = `Outer ring: ${net.grouped > 1 ? `${net.ranks.length} ranges of ${net.grouped} ranks` : `${net.ranks.length} ${summary.ranks ? "ranks" : "processes"}`}; ` +
      `middle ring: ${net.middle.length} ${net.middle_kind === "aggregators" ? "I/O ranks (MPI-IO aggregators and independent I/O)" : "hosts"}; ` +
      `centre: ${net.targets.length} storage targets. ${net.edges.length} links. ` +
      (net.clamped ? `${net.clamped} negative latencies clamped to 0 after clock correction. ` : "") +
      (net.unlinked_calls ? `${net.unlinked_calls} I/O calls on no link (see the tables). ` : "");
    table("layers", [["layer", (r) => r[0]], ["calls", (r) => r[1].count], ["bytes", (r) => bytes(r[1].bytes)], ["time", (r) => secs(r[1].time)], ["failures", (r) => r[1].failures]],
      Object.entries(summary.layers));
    // Phases: the marked ones by name, functions noted, the calls outside them last.
    const phases = summary.phases.filter((p) => p.name).concat(summary.phases.filter((p) => !p.name));
    table("phases", [
      ["phase", (p) => (p.name ? p.name + (p.function ? " (function)" : "") : "(outside phases)")],
      ["times begun", (p) => (p.function || !p.name ? "" : p.occurrences)],
      ["calls", (p) => p.calls], ["read", (p) => bytes(p.bytes_read)], ["written", (p) => bytes(p.bytes_written)],
      ["time in calls", (p) => secs(p.time)],
      ["calls per layer", (p) => Object.entries(p.layers).map(([layer, share]) => `${layer}: ${share.calls}`).join("\n")],
    ], phases);
    // Darshan's job summary, per I/O layer.
    const BIN_NAMES = ["0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M", "10M-100M", "100M-1G", "1G+"];
    const histogram = (bins) => bins.map((c, i) => (c ? `${BIN_NAMES[i]}: ${c}` : "")).filter((x) => x).join("\n");
    const share = (part, whole) => (whole ? `${Math.round((100 * part) / whole)} %` : "");
    const rankTimes = (t) => t.ranks ? `${t.estimated ? "~" : ""}mean ${secs(t.mean)}\nmax ${secs(t.max)} (${summary.ranks ? "rank" : "pid"} ${t.slowest})\nstddev ${secs(Math.sqrt(t.variance))}` : "";
    table("layer-profiles", [
      ["layer", (r) => r[0]],
      ["operations", (r) => Object.entries(r[1].operations).map(([k, v]) => `${k}: ${v}`).join("\n")],
      ["read sizes", (r) => histogram(r[1].read_histogram)],
      ["write sizes", (r) => histogram(r[1].write_histogram)],
      ["most common sizes", (r) => r[1].common_sizes.map((c) => `${bytes(c.size)} × ${c.count}`).join("\n")],
      ["sequential", (r) => share(r[1].sequential, r[1].accesses)],
      ["consecutive", (r) => share(r[1].consecutive, r[1].accesses)],
      ["I/O time per rank", (r) => rankTimes(r[1].time_per_rank)],
    ], Object.entries(summary.layer_profiles));
    table("files", [
      ["path", (f) => f.path], ["ranks", (f) => (f.ranks || []).length], ["opens", (f) => f.opens], ["reads", (f) => f.reads], ["writes", (f) => f.writes],
      ["read", (f) => bytes(f.bytes_read)], ["written", (f) => bytes(f.bytes_written)],
      ["sequential", (f) => { const n = f.reads + f.writes; return n ? `${Math.round((100 * (f.sequential_reads + f.sequential_writes)) / n)} %` : ""; }],
      ["consecutive", (f) => { const n = f.reads + f.writes; return n ? `${Math.round((100 * (f.consecutive_reads + f.consecutive_writes)) / n)} %` : ""; }],
      ["read time", (f) => (f.time_estimated ? "~" : "") + secs(f.read_time)], ["write time", (f) => (f.time_estimated ? "~" : "") + secs(f.write_time)],
      ["meta time", (f) => secs(f.meta_time)],
    ], summary.files);
    if (summary.files_omitted) html("p", `and ${summary.files_omitted} more files, which moved fewer bytes (cairn summary lists every file)`, document.getElementById("files"));
    table("mpiio", [["call", (r) => r[0]], ["calls", (r) => r[1].count], ["bytes", (r) => bytes(r[1].bytes)], ["mean latency", (r) => secs(r[1].mean_latency)],
      ["POSIX calls", (r) => r[1].posix_subcalls], ["fragmentation", (r) => r[1].fragmentation.toFixed(2)], ["POSIX time", (r) => secs(r[1].posix_time)],
      ["slowest call", (r) => secs(r[1].max_latency)], ["slowest rank", (r) => r[1].slowest_rank]], Object.entries(summary.mpiio_calls));
    table("libraries", [["call", (r) => r[0]], ["layer", (r) => r[1].layer], ["calls", (r) => r[1].count], ["bytes", (r) => bytes(r[1].bytes)],
      ["mean latency", (r) => secs(r[1].mean_latency)], ["MPI-IO calls", (r) => r[1].mpiio_subcalls], ["MPI-IO bytes", (r) => bytes(r[1].mpiio_bytes)],
      ["POSIX calls", (r) => r[1].posix_subcalls], ["POSIX bytes", (r) => bytes(r[1].posix_bytes)], ["MPI calls", (r) => r[1].mpi_subcalls],
      ["slowest call", (r) => secs(r[1].max_latency)], ["slowest rank", (r) => r[1].slowest_rank]], Object.entries(summary.library_calls));
    table("call-sites", [["stack", (c) => c.stack], ["at", (c) => c.location], ["calls", (c) => c.count], ["bytes", (c) => bytes(c.bytes)], ["time", (c) => secs(c.time)]],
      summary.call_sites.slice(0, 50));
    const kinds = summary.rank_table ? [["rank 0", summary.rank_table.rank_0], [`other ranks (mean of ${summary.rank_table.other_ranks})`, summary.rank_table.other_ranks_average]] : [];
    table("kinds", [["", (r) => r[0]], ["I/O", (r) => r[1].io], ["collective", (r) => r[1].collective], ["blocking", (r) => r[1].blocking], ["non-blocking", (r) => r[1].non_blocking], ["completion", (r) => r[1].completion]], kinds);
  }

  // ---- Controls ----
  for (const input of document.querySelectorAll("input[name=metric]")) {
    input.addEventListener("change", () => { state.metric = input.value; colourEdges(); });
  }
  // `#t=0.25:0.5` selects that part of the run (fractions), for links and tests.
  const hash = /t=([0-9.]+):([0-9.]+)/.exec(location.hash);
  if (hash) {
    state.from = Math.max(0, Math.floor(parseFloat(hash[1]) * net.time_bins));
    state.to = Math.min(net.time_bins, Math.max(state.from + 1, Math.ceil(parseFloat(hash[2]) * net.time_bins)));
  }
  drawTables();
  drawInsights();
  drawNetwork();
  drawTimeline();
  document.body.dataset.ready = "yes";
})();
