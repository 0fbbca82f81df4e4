// navd's lineage page: search -> entity page -> lineage diagram, from navd's own API only
// (/api/entities, /api/entities/{name}, /api/lineage, /api/executions: the JSON the CLI prints).
//
// Rules this file keeps:
// - everything shown is text: the DOM is built with textContent (never innerHTML with data), the
//   diagram's labels are cytoscape canvas text. Event logs carry names like <img src=x onerror=...>.
// - the URL is the state: #/search?q=, #/entity/<id>, #/lineage/<id>?direction=&depth=&operations=1
//   &deleted=1&columns=1&control=1&as_of=<UTC time> (absent flags are off, no as_of: now); the
//   controls only rewrite the hash.
// - no request leaves navd: relative URLs to navd's API, the libraries vendored in static/vendor.
(function () {
  "use strict";

  const NODE_CAP = 400; // Navigator's lineage cap
  const DEFAULT_DEPTH = 3;
  const FLAGS = ["operations", "deleted", "columns", "control"];
  const OPERATION_TYPES = new Set(["OPERATION", "OPERATION_EXECUTION"]);
  const FIELD = "FIELD";

  // What tests and the benchmark read: the cytoscape instance, the graph shown, and per drawing
  // the performance marks (navd:fetch -> navd:data -> navd:layout -> navd:drawn).
  const navdPage = { cy: null, generation: 0, drawn: 0, busy: false, graph: null, timings: [], error: null };
  window.navdPage = navdPage;

  // -- DOM helpers: text only ---------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function view() { return document.getElementById("view"); }

  function show(...children) {
    if (navdPage.cy) { navdPage.cy.destroy(); navdPage.cy = null; }
    view().replaceChildren(...children);
  }

  // -- routes -------------------------------------------------------------------------------

  const enc = encodeURIComponent;

  function entityHash(id) { return "#/entity/" + enc(id); }

  function lineageHash(id, options) {
    const params = new URLSearchParams();
    params.set("direction", (options && options.direction) || "both");
    params.set("depth", String((options && options.depth) || DEFAULT_DEPTH));
    for (const flag of FLAGS) if (options && options[flag]) params.set(flag, "1");
    if (options && options.asOf) params.set("as_of", options.asOf);
    return "#/lineage/" + enc(id) + "?" + params.toString();
  }

  function parseHash() {
    const hash = location.hash.replace(/^#/, "") || "/search";
    const mark = hash.indexOf("?");
    const path = mark >= 0 ? hash.slice(0, mark) : hash;
    const params = new URLSearchParams(mark >= 0 ? hash.slice(mark + 1) : "");
    const parts = path.split("/"); // ["", "lineage", "<encoded id>"]
    return { route: parts[1] || "search", arg: parts.length > 2 ? decodeURIComponent(parts.slice(2).join("/")) : "",
             params };
  }

  function lineageOptions(params) {
    const direction = ["upstream", "downstream", "both"].includes(params.get("direction"))
      ? params.get("direction") : "both";
    const depth = Math.max(1, parseInt(params.get("depth") || String(DEFAULT_DEPTH), 10) || DEFAULT_DEPTH);
    const options = { direction, depth };
    for (const flag of FLAGS) options[flag] = params.get(flag) === "1";
    options.asOf = params.get("as_of") || ""; // the server checks it: a bad one is its 400, shown
    return options;
  }

  // -- navd's API ---------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.error) || ("HTTP " + status));
      this.status = status;
      this.body = body || {};
    }
  }

  const cache = new Map(); // URL -> JSON: toggling back and forth asks navd once
  const early = new Map(); // URL -> the answer asked before the page's other scripts ran (prefetch), taken once

  function apiUrl(path, params) {
    const query = params ? "?" + new URLSearchParams(params).toString() : "";
    return "api/" + path + query; // relative: works behind a path-prefixing proxy too
  }

  async function ask(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    return { status: response.status, ok: response.ok, body };
  }

  async function api(path, params, { cached = false } = {}) {
    const url = apiUrl(path, params);
    if (cached && cache.has(url)) return cache.get(url);
    const asked = early.get(url);
    early.delete(url);
    const { status, ok, body } = await (asked || ask(url));
    if (!ok && status !== 300) throw new ApiError(status, body);
    if (status === 300) throw new ApiError(300, body);
    if (cached) cache.set(url, body);
    return body;
  }

  function errorBox(error) {
    const box = el("div", { class: "error", role: "alert", text: error.message || String(error) });
    if (error.status === 300 && error.body.candidates) {
      return el("div", {}, box, resultList(error.body.candidates));
    }
    return box;
  }

  // -- search -------------------------------------------------------------------------------

  // A raw Solr query names a field (`type:TABLE`, `originalName:*x*`) or uses the operators;
  // `hdfs://...` and `db.table@cluster` are names.
  function looksLikeQuery(text) {
    return /^\s*\(?\s*[A-Za-z_][\w.]*\s*:(?!\/\/)/.test(text) || /\s(AND|OR|NOT)\s/.test(text) || text.trim() === "*:*";
  }

  function escapeLucene(text) {
    return text.replace(/[\\+\-!():^[\]"{}~*?|&/\s]/g, (c) => "\\" + c);
  }

  async function renderSearch(params) {
    const q = (params.get("q") || "").trim();
    document.getElementById("search-input").value = q;
    const title = el("h1", { text: q ? "Search" : "Search navd" });
    if (!q) {
      show(title, el("p", { class: "muted", text: "Type a name (a table, a path, an application id) or a Solr query "
        + "(the Lucene syntax, e.g. type:TABLE AND originalName:*order*)." }));
      return;
    }
    const status = el("p", { class: "muted", text: "Searching…" });
    show(title, status);
    const found = new Map();
    const notes = [];
    let total = 0;
    try {
      if (looksLikeQuery(q)) {
        const page = await api("entities", { query: q, rows: "50" });
        total = page.numFound;
        for (const doc of page.docs) found.set(doc.identity, doc);
      } else {
        try {
          const exact = await api("entities/" + enc(q));
          found.set(exact.identity, exact);
        } catch (error) {
          if (error.status === 300) for (const doc of error.body.candidates || []) found.set(doc.identity, doc);
          else if (error.status !== 404 && error.status !== 400) throw error;
        }
        const page = await api("entities", { query: "originalName:*" + escapeLucene(q) + "*", rows: "50" });
        total = Math.max(page.numFound, found.size);
        for (const doc of page.docs) if (!found.has(doc.identity)) found.set(doc.identity, doc);
      }
    } catch (error) {
      status.replaceWith(errorBox(error));
      return;
    }
    if (total > found.size) notes.push("showing " + found.size + " of " + total + " matches");
    status.textContent = found.size ? (found.size + " found" + (notes.length ? " (" + notes.join("; ") + ")" : ""))
      : "Nothing found.";
    view().append(resultList([...found.values()]));
  }

  function resultList(docs) {
    return el("ul", { class: "results" }, ...docs.map((doc) => {
      const name = doc.originalName || doc.name || doc.qualifiedName || doc.identity;
      return el("li", { class: "result" },
        el("a", { class: "result-link" + (doc.deleted ? " deleted-name" : ""), href: entityHash(doc.identity), text: name }),
        " ", el("span", { class: "tag", text: doc.sourceType || "" }), el("span", { class: "tag", text: doc.type || "" }),
        doc.deleted ? el("span", { class: "tag deleted", text: "deleted" }) : null,
        " ", el("a", { href: lineageHash(doc.identity), text: "lineage" }),
        el("div", { class: "qn", text: doc.qualifiedName || "" }));
    }));
  }

  // -- entity page --------------------------------------------------------------------------

  function shownValue(value) {
    if (value === null || value === undefined) return "";
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  }

  const LONG_FIELDS = ["queryText", "executionPlan"];

  async function renderEntity(name) {
    show(el("p", { class: "muted", text: "Loading…" }));
    let doc;
    try {
      doc = await api("entities/" + enc(name));
    } catch (error) {
      show(el("h1", { text: name }), errorBox(error));
      return;
    }
    const title = el("h1", { class: doc.deleted ? "deleted-name" : "", text: doc.originalName || doc.qualifiedName });
    const links = el("p", { class: "links" },
      el("a", { id: "lineage-link", href: lineageHash(doc.identity), text: "Lineage" }),
      el("span", { class: "tag", text: doc.sourceType || "" }), el("span", { class: "tag", text: doc.type || "" }),
      doc.deleted ? el("span", { class: "tag deleted", text: "deleted" }) : null);
    const rows = [];
    for (const key of Object.keys(doc).sort()) {
      if (LONG_FIELDS.includes(key) || key === "annotations") continue;
      if (key === "properties" && doc.properties && typeof doc.properties === "object") {
        for (const prop of Object.keys(doc.properties).sort()) {
          rows.push(el("tr", {}, el("th", { text: "properties." + prop }), el("td", { text: shownValue(doc.properties[prop]) })));
        }
        continue;
      }
      rows.push(el("tr", {}, el("th", { text: key }), el("td", { text: shownValue(doc[key]) })));
    }
    const parts = [title, links];
    if (doc.annotations) parts.push(el("h2", { text: "Annotations" }), annotationsBox(doc.annotations, "annotations"));
    for (const key of LONG_FIELDS) {
      if (doc[key]) parts.push(el("h2", { text: key }), el("pre", { class: "code", id: key, text: doc[key] }));
    }
    parts.push(el("h2", { text: "Properties" }), el("table", { class: "props", id: "properties" }, el("tbody", {}, ...rows)));
    show(...parts);
    if (OPERATION_TYPES.has(doc.type)) view().append(await runHistory(doc));
  }

  // What people wrote on an entity (navd annotate, Hue, Atlas): tags, description, display
  // name, properties; the entity page and the lineage panel show it.
  function annotationsBox(annotations, id) {
    const rows = [];
    if (annotations.name) rows.push(["name", annotations.name]);
    for (const [key, value] of Object.entries(annotations.properties || {})) rows.push(["properties." + key, value]);
    for (const [namespace, values] of Object.entries(annotations.customProperties || {})) {
      for (const [key, value] of Object.entries(values)) rows.push([namespace + "." + key, value]);
    }
    return el("div", { class: "annotations", id },
      el("p", { class: "annotation-tags" }, ...(annotations.tags || []).map((t) => el("span", { class: "tag user-tag", text: t }))),
      annotations.description ? el("p", { class: "annotation-description", text: annotations.description }) : null,
      rows.length ? el("table", { class: "props" }, el("tbody", {},
        ...rows.map(([k, v]) => el("tr", {}, el("th", { text: k }), el("td", { text: shownValue(v) }))))) : null);
  }

  async function runHistory(doc) {
    const rows = 20;
    const section = el("section", { id: "run-history" }, el("h2", { text: "Run history" }));
    const body = el("tbody");
    const table = el("table", { class: "props" },
      el("thead", {}, el("tr", {}, ...["Started", "Ended", "Execution", "Principal", "Outcome"].map((h) => el("th", { text: h })))),
      body);
    const more = el("button", { type: "button", text: "Older runs" });
    const status = el("p", { class: "muted" });
    section.append(status, table);
    let start = 0;
    async function load() {
      let page;
      try {
        page = await api("executions", { operation: doc.identity, rows: String(rows), start: String(start) });
      } catch (error) {
        status.replaceChildren(errorBox(error));
        return;
      }
      for (const run of page.executions) {
        const props = run.properties || {};
        body.append(el("tr", { class: "run" + (run.identity === doc.identity ? " current" : "") },
          el("td", { text: run.started || "" }), el("td", { text: run.ended || "" }),
          el("td", {}, el("a", { href: entityHash(run.identity), text: run.originalName || run.qualifiedName })),
          el("td", { text: run.principal || "" }), el("td", { text: shownValue(props.outcome) })));
      }
      start += page.executions.length;
      status.textContent = page.numFound + " executions, newest first";
      if (start < page.numFound) section.append(more); else more.remove();
    }
    more.addEventListener("click", load);
    await load();
    return section;
  }

  // -- lineage ------------------------------------------------------------------------------

  // What is loaded for the current view: the graphs navd answered (without and with columns),
  // the graphs "show more" added, the tables expanded while the columns toggle is off, and the
  // column whose path is highlighted. Clicks change the diagram in place; the toggles go
  // through the hash (a URL reproduces the view).
  const state = { key: null, name: null, options: null, base: null, columnGraph: null, extra: [],
                  expanded: new Set(), highlighted: null, pinned: false, status: null, panel: null, tainted: null };

  function lineageParams(entity, options, columns) {
    const params = { entity, direction: options.direction, depth: String(options.depth), operations: String(options.operations),
                     deleted: String(options.deleted), columns: String(columns), max_nodes: String(NODE_CAP) };
    if (options.asOf) params.as_of = options.asOf;
    return params;
  }

  async function fetchLineage(entity, options, columns) {
    try {
      return await api("lineage", lineageParams(entity, options, columns), { cached: true });
    } catch (error) {
      // The server's own cap is lower than the page's: ask with the server's default.
      if (error.status === 400 && error.body.parameter === "max_nodes") {
        const params = lineageParams(entity, options, columns);
        delete params.max_nodes;
        return api("lineage", params, { cached: true });
      }
      throw error;
    }
  }

  function needColumns() {
    return state.options.columns || state.expanded.size > 0;
  }

  function merge(graphs) {
    const nodes = new Map();
    const edges = new Map();
    const walkedFrom = new Set(graphs.slice(1).map((g) => g.root)); // their own lineage was fetched
    let truncated = false;
    for (const graph of graphs) {
      truncated = truncated || Boolean(graph.truncated);
      for (const node of graph.nodes) {
        const known = nodes.get(node.id);
        nodes.set(node.id, { ...(known || node), cut: Boolean((known ? known.cut && node.cut : node.cut) && !walkedFrom.has(node.id)) });
      }
      for (const edge of graph.edges) edges.set([edge.source, edge.target, edge.type, edge.dependencyType || ""].join("\u0000"), edge);
    }
    return { root: graphs[0].root, nodes: [...nodes.values()], edges: [...edges.values()], truncated };
  }

  const TAINTS = { rows: "1000" };

  // The graphs the view needs now (the one with columns once a table is expanded).
  async function loaded() {
    // The taints (navd taint: few, made by people) mark their nodes; asked once per view, at the
    // same time as the lineage (one after the other, the diagram waited for both round trips).
    const asked = [];
    if (!state.tainted) {
      asked.push(api("taints", TAINTS).then((answer) => { state.tainted = new Set(answer.taints.map((t) => t.target)); }));
    }
    if (!state.base) asked.push(fetchLineage(state.name, state.options, false).then((graph) => { state.base = graph; }));
    if (needColumns() && !state.columnGraph) {
      asked.push(fetchLineage(state.name, state.options, true).then((graph) => { state.columnGraph = graph; }));
    }
    await Promise.all(asked);
  }

  function currentGraph() {
    const first = needColumns() ? state.columnGraph : state.base;
    return merge([first, ...state.extra.filter((g) => g.columns === needColumns()).map((g) => g.graph)]);
  }

  async function renderLineage(name, params) {
    const options = lineageOptions(params);
    const key = name + "\u0000" + JSON.stringify({ ...options, columns: false, control: false });
    // A control changed on the diagram shown (same entity): redrawn in place. The diagram keeps
    // its instance, its viewport until the new layout is ready, and the nodes both drawings show;
    // the panel keeps the selected node's details.
    const inPlace = state.name === name && navdPage.cy !== null && !navdPage.cy.destroyed()
      && navdPage.cy.container() === document.getElementById("cy");
    if (state.key !== key) {
      Object.assign(state, { key, base: null, columnGraph: null, extra: [], expanded: new Set(), highlighted: null, pinned: false,
                             tainted: null });
    }
    Object.assign(state, { name, options });
    const generation = begin();
    if (inPlace) {
      document.getElementById("controls").replaceWith(lineageControls(name, options));
      for (const box of view().querySelectorAll(".error")) box.remove();
      state.status.textContent = "Loading lineage…";
      await repaint(generation);
      return;
    }
    // Asked before the view is built: navd answers while the page builds it and the layout worker starts.
    const pending = loaded();
    const controls = lineageControls(name, options);
    state.status = el("p", { id: "lineage-status", class: "muted", text: "Loading lineage…" });
    state.panel = el("aside", { id: "panel" }, el("p", { class: "muted", text: "Click a node for its details and links; "
      + "click a table to show or hide its columns; hover or click a column to see its path." }));
    const title = el("h1", {}, "Lineage of ", el("a", { id: "entity-link", href: entityHash(name), text: name }));
    show(title, controls, state.status, el("div", { class: "lineage-body" }, el("div", { id: "cy" }), state.panel),
      el("div", { id: "legend", text: "Flows left to right: upstream on the left of the root, downstream on its right. "
        + "Dashed edges: control flow. Dashed outline: a placeholder for an input navd has not indexed (unlinked). "
        + "Struck through and grey: deleted. Red fill: tainted (navd taint: reprocess what is downstream). "
        + "⊕: the node cap cut this node's lineage (select it: Show more)." }));
    // The layout worker and the (empty) diagram are made while navd answers: neither needs the data.
    elk();
    const cy = cytoscape({ container: document.getElementById("cy"), style: STYLE, wheelSensitivity: 0.3,
                           minZoom: 0.02, maxZoom: 3, boxSelectionEnabled: false });
    navdPage.cy = cy;
    wire(cy);
    try {
      await pending;
    } catch (error) {
      fail(generation, error);
      return;
    }
    if (generation !== navdPage.generation) return; // a newer view replaced this one
    answered(generation);
    const graph = currentGraph();
    title.lastChild.textContent = displayName(graph.nodes.find((n) => n.id === graph.root)) || name;
    paint(generation, graph);
  }

  // One drawing: marks navd:fetch (asked) -> navd:data (answered, JSON parsed) -> navd:layout -> navd:drawn.
  function begin() {
    const generation = ++navdPage.generation;
    if (generation > 1) early.clear(); // what prefetch asked and the first view did not take is not used later
    navdPage.busy = true;
    navdPage.error = null;
    // The first drawing's request may have left before the page's scripts ran (prefetch): its mark is then that moment.
    if (!performance.getEntriesByName("navd:fetch:" + generation).length) performance.mark("navd:fetch:" + generation);
    return generation;
  }

  // The data is in (navd answered, its JSON parsed): what follows is drawing.
  function answered(generation) {
    performance.mark("navd:data:" + generation);
  }

  function fail(generation, error) {
    if (generation !== navdPage.generation) return;
    (state.status || view()).after(errorBox(error));
    navdPage.error = error.message;
    navdPage.busy = false;
  }

  function displayName(node) {
    return node ? (node.name || node.qualifiedName) : "";
  }

  function lineageControls(name, options) {
    function go(change) {
      location.hash = lineageHash(name, { ...options, ...change });
    }
    const direction = el("select", { id: "direction", onchange: (e) => go({ direction: e.target.value }) },
      ...["both", "upstream", "downstream"].map((d) => el("option", { value: d, text: d, selected: d === options.direction })));
    const depth = el("input", { id: "depth", type: "number", min: "1", max: "20", value: String(options.depth),
                                onchange: (e) => go({ depth: Math.max(1, parseInt(e.target.value, 10) || DEFAULT_DEPTH) }) });
    const toggles = [["operations", "operations"], ["deleted", "deleted entities"], ["control", "control flow"],
                     ["columns", "columns"]].map(([flag, text]) => el("label", {},
      el("input", { id: "toggle-" + flag, type: "checkbox", checked: options[flag], onchange: (e) => go({ [flag]: e.target.checked }) }),
      text));
    // The lineage as it stood at a moment (UTC; empty: now). A datetime-local input shows minutes.
    const asOf = el("input", { id: "as-of", type: "datetime-local", value: options.asOf ? options.asOf.slice(0, 16) : "",
                               onchange: (e) => go({ asOf: e.target.value }) });
    return el("div", { id: "controls" }, el("label", {}, "direction", direction), el("label", {}, "depth", depth), ...toggles,
              el("label", {}, "as of (UTC)", asOf));
  }

  // Canvas text width, for node sizes (cytoscape draws labels on a canvas; ELK needs the sizes).
  const measure = document.createElement("canvas").getContext("2d");
  measure.font = "12px system-ui, sans-serif";

  function strike(text) { // a struck-through label: canvas text has no text-decoration
    return Array.from(text).map((c) => c + "\u0336").join("");
  }

  // How a type reads under a node's name where its enum value reads badly ("S3 S3BUCKET"), and
  // what an Oozie operation is (its qualifiedName says: oozie://workflow/..., oozie://coordinator/..., oozie://bundle/...).
  const TYPE_LABELS = { S3BUCKET: "bucket" };
  const OOZIE_KIND = /^oozie:\/\/(workflow|coordinator|bundle)\//;

  function typeLabel(node) {
    const oozie = node.type === "OPERATION" && OOZIE_KIND.exec(node.qualifiedName || "");
    return oozie ? oozie[1] : TYPE_LABELS[node.type] || node.type;
  }

  function label(node) {
    const name = displayName(node);
    return (node.deleted ? strike(name) : name) + (node.cut ? "  ⊕" : "") + "\n" + node.sourceType + " " + typeLabel(node);
  }

  // What the diagram shows of the graph: columns of expanded tables (all with the toggle),
  // control-flow edges only with their toggle.
  function visibleGraph(graph, options) {
    const byId = new Map(graph.nodes.map((n) => [n.id, n]));
    const nodes = graph.nodes.filter((node) => {
      if (node.type !== FIELD || node.id === graph.root) return true;
      if (node.parent && byId.has(node.parent)) return options.columns || state.expanded.has(node.parent);
      return options.columns;
    });
    const types = new Map(nodes.map((n) => [n.id, n.type]));
    const edges = graph.edges.filter((e) => types.has(e.source) && types.has(e.target)
      && (options.control || e.type !== "CONTROL_FLOW"));
    return { nodes, edges, types };
  }

  function elementsOf(graph, shown) {
    const nodes = shown.nodes.map((node) => {
      const text = label(node);
      const width = Math.max(...text.split("\n").map((line) => measure.measureText(line).width)) + 22;
      const classes = [node.type === FIELD ? "column" : "entity", OPERATION_TYPES.has(node.type) ? "operation" : "",
                       node.type === "S3BUCKET" ? "bucket" : "",
                       node.deleted ? "deleted" : "", node.unlinked ? "unlinked" : "", node.cut ? "cut" : "",
                       node.id === graph.root ? "root" : "", state.tainted && state.tainted.has(node.id) ? "tainted" : ""]
                       .filter(Boolean).join(" ");
      const data = { id: node.id, label: text, w: Math.ceil(width), h: node.type === FIELD ? 30 : 40, node };
      if (node.type === FIELD && node.parent && shown.types.has(node.parent)) data.parent = node.parent;
      return { group: "nodes", data, classes };
    });
    const edges = shown.edges.map((edge, i) => ({
      group: "edges",
      data: { id: "e" + i, source: edge.source, target: edge.target, edge },
      classes: [edge.type === "CONTROL_FLOW" ? "control" : "flow",
                shown.types.get(edge.source) === FIELD && shown.types.get(edge.target) === FIELD ? "column-edge" : ""]
        .filter(Boolean).join(" "),
    }));
    return [...nodes, ...edges];
  }

  const STYLE = [
    { selector: "node", style: {
      shape: "round-rectangle", width: "data(w)", height: "data(h)", label: "data(label)", "text-wrap": "wrap",
      "text-valign": "center", "text-halign": "center", "font-size": 12, "font-family": "system-ui, sans-serif",
      "background-color": "#e8eef9", "border-width": 1, "border-color": "#6a7fa8", color: "#1d2433",
      // A label under 6 px on screen is not drawn (the whole of a 400-node diagram puts 12 px at about
      // 1 px: a grey smear), and drawing the labels was most of the first frame; zooming in shows them.
      "min-zoomed-font-size": 6 } },
    { selector: "node.operation", style: { shape: "ellipse", "background-color": "#fdf0d8", "border-color": "#b8862b" } },
    { selector: "node.bucket", style: { shape: "barrel", "background-color": "#e3f1e6", "border-color": "#4f8a5b" } },
    { selector: "node.root", style: { "border-width": 3, "border-color": "#1d2433", "font-weight": "bold" } },
    { selector: "node.deleted", style: { color: "#888", "background-color": "#eeeeee", "border-color": "#aaa" } },
    { selector: "node.unlinked", style: { "border-style": "dashed", "border-width": 2, "background-color": "#fafafa" } },
    { selector: "node.tainted", style: { "background-color": "#f9d6d5", "border-color": "#a93226", "border-width": 2 } },
    { selector: "node.cut", style: { "border-color": "#c0392b", "border-width": 2 } },
    { selector: "node.column", style: { "background-color": "#f7f9fc", "font-size": 11, "border-color": "#9aa9c6" } },
    { selector: ":parent", style: { "text-valign": "top", "text-halign": "center", "background-color": "#eef2fa",
                                    padding: 10 } },
    { selector: "edge", style: { width: 1.5, "line-color": "#7c8aa5", "target-arrow-color": "#7c8aa5",
                                 "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.9 } },
    { selector: "edge.column-edge", style: { "line-color": "#a9b6cf", "target-arrow-color": "#a9b6cf" } },
    { selector: "edge.control", style: { "line-style": "dashed" } },
    { selector: ".dimmed", style: { opacity: 0.15 } },
    { selector: "node.highlighted", style: { "border-color": "#e67e22", "border-width": 3, "background-color": "#fdebd0" } },
    { selector: "edge.highlighted", style: { "line-color": "#e67e22", "target-arrow-color": "#e67e22", width: 3 } },
    { selector: "node:selected", style: { "overlay-opacity": 0.12, "overlay-color": "#1d2433" } },
  ];

  // ELK's layered layout, left to right; columns inside their tables (INCLUDE_CHILDREN lets a
  // column edge cross from one table to another).
  const LAYOUT_OPTIONS = { algorithm: "layered", "elk.direction": "RIGHT", "elk.hierarchyHandling": "INCLUDE_CHILDREN",
                           "elk.layered.spacing.nodeNodeBetweenLayers": 60, "elk.spacing.nodeNode": 18 };
  const PADDING = 20;

  // ELK runs in a web worker (elkjs's own worker build), as Marquez's UI does: a 400-node layout
  // takes most of a second, which on the page's one thread froze scrolling and typing and held
  // back the lineage answer's handling. The worker is made (and parses its 1.6 MB of compiled
  // Java) while the lineage request is in flight, and pays ELK's one-time start (~100-200 ms, the
  // algorithms registering) on a two-node graph then, off the time from data received to drawn.
  let layoutEngine = null;
  function elk() {
    if (!layoutEngine) {
      // Only the layered algorithm is registered: ELK's first layout registers every algorithm it
      // was given (all nine by default) with their options, work the page's one algorithm never needs.
      layoutEngine = new ELK({ workerUrl: "static/vendor/elk-worker.min.js", algorithms: ["layered"] });
      const node = (id) => ({ id, width: 10, height: 10 });
      layoutEngine.layout({ id: "warm-up", layoutOptions: LAYOUT_OPTIONS, children: [node("a"), node("b")],
                            edges: [{ id: "e", sources: ["a"], targets: ["b"] }] }).catch(() => {});
    }
    return layoutEngine;
  }

  // The diagram's elements as ELK's graph: tables hold their shown columns; every edge at the top
  // (ELK routes edges between nested nodes there under INCLUDE_CHILDREN). A node with children
  // gets no size: ELK sizes it around them.
  function elkGraph(elements, aspectRatio) {
    const parents = new Set(elements.filter((e) => e.group === "nodes" && e.data.parent).map((e) => e.data.parent));
    const nodes = new Map();
    for (const e of elements) {
      if (e.group !== "nodes") continue;
      nodes.set(e.data.id, parents.has(e.data.id) ? { id: e.data.id, children: [] }
                                                 : { id: e.data.id, width: e.data.w, height: e.data.h });
    }
    const graph = { id: "root", layoutOptions: { ...LAYOUT_OPTIONS, aspectRatio }, children: [], edges: [] };
    for (const e of elements) {
      if (e.group === "nodes") (e.data.parent ? nodes.get(e.data.parent).children : graph.children).push(nodes.get(e.data.id));
      else graph.edges.push({ id: e.data.id, sources: [e.data.source], targets: [e.data.target] });
    }
    return graph;
  }

  // ELK's answer as cytoscape positions: ELK places a node's top-left corner relative to its
  // parent, cytoscape a node's centre on the page. Nodes with children follow theirs.
  function positionsOf(laidOut) {
    const positions = new Map();
    (function place(nodes, x, y) {
      for (const node of nodes || []) {
        if (node.children && node.children.length) place(node.children, x + node.x, y + node.y);
        else positions.set(node.id, { x: x + node.x + node.width / 2, y: y + node.y + node.height / 2 });
      }
    }(laidOut.children, 0, 0));
    return positions;
  }

  // Replace the diagram's elements with what `graph` shows now and lay it out again.
  async function paint(generation, graph) {
    const cy = navdPage.cy;
    // The answer came after the reader left the diagram (another entity or search): nothing to draw.
    if (!cy || generation !== navdPage.generation) return;
    const shown = visibleGraph(graph, state.options);
    navdPage.graph = graph;
    state.status.textContent = shown.nodes.length + " nodes, " + shown.edges.length + " edges";
    const notice = document.getElementById("truncated");
    if (graph.truncated && !notice) {
      state.status.after(el("p", { id: "truncated", class: "notice", text: "More than the node cap (" + NODE_CAP + "): "
        + "the lineage was cut. Nodes marked ⊕ have more: select one and choose Show more." }));
    } else if (!graph.truncated && notice) notice.remove();
    const elements = elementsOf(graph, shown);
    let laidOut;
    try {
      laidOut = await elk().layout(elkGraph(elements, cy.width() / Math.max(1, cy.height())));
    } catch (error) {
      fail(generation, new Error("The diagram's layout failed: " + (error && error.message || error)));
      return;
    }
    // The reader moved on while the worker laid this out: a newer drawing (or none) owns the diagram.
    if (cy.destroyed() || generation !== navdPage.generation) return;
    const positions = positionsOf(laidOut);
    for (const element of elements) {
      if (element.group === "nodes" && positions.has(element.data.id)) element.position = positions.get(element.data.id);
    }
    redraw(cy, elements);
    cy.fit(undefined, PADDING);
    performance.mark("navd:layout:" + generation);
    if (state.highlighted && cy.getElementById(state.highlighted).nonempty()) highlight(cy, cy.getElementById(state.highlighted));
    else state.highlighted = null;
    cy.one("render", () => requestAnimationFrame(() => {
      if (generation !== navdPage.generation) return;
      performance.mark("navd:drawn:" + generation);
      const at = (mark) => performance.getEntriesByName(mark + ":" + generation)[0].startTime;
      navdPage.timings.push({ generation, nodes: shown.nodes.length, edges: shown.edges.length, fetch: at("navd:fetch"),
                              data: at("navd:data"), layout: at("navd:layout"), drawn: at("navd:drawn") });
      navdPage.drawn = generation;
      navdPage.busy = false;
    }));
    cy.forceRender();
  }

  // Bring the diagram to `elements` (positions set): a node both drawings show is moved and
  // restyled, not rebuilt; a node gone, moved to another table, or a table whose columns were
  // shown or hidden is removed and added again (cytoscape hit-tests a leaf turned compound node
  // by its old shape: a click on the table then found nothing). Edges are all replaced: their
  // ids are positions in the list, not identities.
  function redraw(cy, elements) {
    const wanted = new Map(elements.map((e) => [e.data.id, e]));
    const parents = new Set(elements.filter((e) => e.group === "nodes" && e.data.parent).map((e) => e.data.parent));
    cy.batch(() => {
      cy.edges().remove();
      cy.nodes().filter((n) => {
        const element = wanted.get(n.id());
        return !element || (element.data.parent || null) !== (n.data("parent") || null)
          || parents.has(n.id()) !== n.isParent();
      }).remove(); // a removed table takes its columns with it: they are added again below if shown
      const added = [];
      for (const element of elements) {
        const existing = element.group === "nodes" ? cy.getElementById(element.data.id) : null;
        if (!existing || existing.empty()) {
          added.push(element);
          continue;
        }
        existing.data(element.data);
        existing.classes(element.classes);
        if (element.position) existing.position(element.position);
      }
      cy.add(added);
    });
  }

  // A column's path: its upstream and downstream column edges, transitively (a column has no
  // other edges in the diagram), and the columns they join.
  function columnPath(column) {
    return column.union(column.predecessors()).union(column.successors());
  }

  function highlight(cy, column) {
    const path = columnPath(column);
    cy.batch(() => {
      cy.elements().removeClass("highlighted").addClass("dimmed");
      path.removeClass("dimmed").addClass("highlighted");
      path.nodes().parents().removeClass("dimmed"); // the tables the path runs through stay readable
    });
    state.highlighted = column.id();
  }

  function clearHighlight(cy) {
    cy.elements().removeClass("highlighted dimmed");
    state.highlighted = null;
    state.pinned = false;
  }

  function wire(cy) {
    cy.on("tap", "node", (event) => {
      const node = event.target;
      const data = node.data("node");
      details(data);
      if (data.type === FIELD) {
        highlight(cy, node);
        state.pinned = true;
      } else if (!OPERATION_TYPES.has(data.type) && !data.unlinked && !state.options.columns) {
        toggleColumns(data.id);
      }
    });
    cy.on("mouseover", "node.column", (event) => { if (!state.pinned) highlight(cy, event.target); });
    cy.on("mouseout", "node.column", () => { if (!state.pinned) clearHighlight(cy); });
    cy.on("tap", (event) => { if (event.target === cy) clearHighlight(cy); });
  }

  async function toggleColumns(tableId) {
    if (state.expanded.has(tableId)) state.expanded.delete(tableId); else state.expanded.add(tableId);
    state.highlighted = null;
    state.pinned = false;
    await repaint(begin());
  }

  // Load what the diagram now needs (the graphs answered are kept) and draw it, unless a newer
  // drawing began meanwhile.
  async function repaint(generation) {
    try {
      await loaded();
    } catch (error) {
      fail(generation, error);
      return;
    }
    if (generation !== navdPage.generation) return;
    answered(generation);
    paint(generation, currentGraph());
  }

  function details(node) {
    const options = state.options;
    const parts = [
      el("h2", { class: node.deleted ? "deleted-name" : "", text: displayName(node) }),
      el("div", {}, el("span", { class: "tag", text: node.sourceType }), el("span", { class: "tag", text: node.type }),
        node.deleted ? el("span", { class: "tag deleted", text: "deleted" }) : null,
        node.unlinked ? el("span", { class: "tag", text: "unlinked (not indexed)" }) : null),
      el("p", { class: "qn", text: node.qualifiedName }),
      el("p", { class: "links" },
        node.unlinked ? null : el("a", { class: "node-entity", href: entityHash(node.id), text: "Entity page" }),
        el("a", { class: "node-lineage", href: lineageHash(node.id, options), text: "Its lineage" })),
    ];
    if (node.cut) {
      parts.push(el("button", { id: "show-more", type: "button", text: "Show more", onclick: () => showMore(node) }));
    }
    state.panel.replaceChildren(...parts);
    if (!node.unlinked) panelFromElement(node, state.panel, OPERATION_TYPES.has(node.type) ? showQueryText : showAnnotations);
  }

  // What the panel shows from a node's element (its tags and description; an operation's or
  // execution's query text, as Navigator's details pane shows it: the lineage JSON carries
  // neither), read once, unless another node was selected meanwhile.
  async function panelFromElement(node, panel, show) {
    const shownFor = panel.firstChild;
    let doc;
    try {
      doc = await api("entities/" + enc(node.id), null, { cached: true });
    } catch (error) {
      return;  // the entity page says why; the panel keeps its links
    }
    if (panel.firstChild === shownFor) show(doc, panel);
  }

  function showAnnotations(doc, panel) {
    if (doc.annotations) panel.append(annotationsBox(doc.annotations, "panel-annotations"));
  }

  function showQueryText(doc, panel) {
    if (doc.queryText) {
      panel.append(el("h3", { text: "queryText" }), el("pre", { class: "code", id: "panel-queryText", text: doc.queryText }));
    }
  }

  // "Show more" on a node the cap cut: its own lineage (same options), merged into the diagram.
  async function showMore(node) {
    const generation = begin();
    const columns = needColumns();
    try {
      const more = await fetchLineage(node.id, state.options, columns);
      state.extra.push({ columns, graph: more });
      await loaded();
    } catch (error) {
      fail(generation, error);
      return;
    }
    if (generation !== navdPage.generation) return;
    answered(generation);
    const graph = currentGraph();
    paint(generation, graph);
    const now = graph.nodes.find((n) => n.id === node.id);
    if (now) details(now);
  }

  // -- wiring -------------------------------------------------------------------------------

  async function route() {
    const { route: name, arg, params } = parseHash();
    try {
      if (name === "entity" && arg) await renderEntity(arg);
      else if (name === "lineage" && arg) await renderLineage(arg, params);
      else await renderSearch(params);
    } catch (error) {
      navdPage.error = String(error && error.message || error);
      navdPage.busy = false;
      show(errorBox(error));
    }
  }

  function start() {
    if (typeof cytoscape === "undefined" || typeof ELK === "undefined") {
      show(el("p", { class: "error", text: "The page's scripts did not load (static/vendor)." }));
      return;
    }
    document.getElementById("search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      location.hash = "#/search?q=" + enc(document.getElementById("search-input").value.trim());
    });
    window.addEventListener("hashchange", route);
    route();
  }

  // A lineage URL's requests leave as soon as this script runs: page.html loads it before cytoscape
  // (435 kB) and elk-api, which are deferred, so navd answers while the browser loads and compiles
  // them. What is asked is what the first drawing asks (loaded(): the taints, the lineage, with
  // columns when the toggle is on), under the same URLs; api() takes each answer once. The fetch
  // mark is set here: the request left now. The layout worker is not started here: compiling its
  // 1.6 MB then competed with the libraries' and navd's work (on a shared 2-core host the request
  // took ~150 ms longer and the diagram came no sooner); it starts when the view is built, as before.
  function prefetch() {
    const { route: name, arg, params } = parseHash();
    if (name !== "lineage" || !arg) return;
    const options = lineageOptions(params);
    performance.mark("navd:fetch:1");
    const urls = [apiUrl("taints", TAINTS), apiUrl("lineage", lineageParams(arg, options, false))];
    if (options.columns) urls.push(apiUrl("lineage", lineageParams(arg, options, true)));
    for (const url of urls) early.set(url, ask(url).catch((error) => ({ status: 0, ok: false, body: { error: String(error) } })));
  }

  prefetch();
  document.addEventListener("DOMContentLoaded", start);
}());
