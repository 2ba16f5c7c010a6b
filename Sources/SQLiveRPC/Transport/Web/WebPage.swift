// swift-format-ignore-file
// (The page inside is HTML, laid out as HTML.)
/// The live page of `sqlive --web` (docs/web.md): one document, its
/// scripts and styles inline, system fonts only, so that not one request
/// leaves the machine. It is a client of the JSON-RPC server over the
/// WebSocket `/rpc`: the same methods and notifications as `--rpc`.
///
/// Elements a test or a user script needs carry `data-sqlive`
/// (`editor`, `run`, `watch`, `result`, `live` with `data-name`, `chart`,
/// `plan`, `schema`, and `status`, `diagnostics`, `explain`, `trace`).
enum WebPage {
    /// The page's `Content-Security-Policy`, sent as a header (the
    /// `<meta>` in the page says the same but for `frame-ancestors`, which
    /// browsers read only from a header): nothing but the page's own
    /// inline script and styles and its WebSocket, no frame may hold it.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
        + "img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:">
<title>sqlive</title>
<style>
:root { color-scheme: light dark; --bg:#fbfbfa; --fg:#1d1d1f; --muted:#6b6b70; --line:#dcdcde; --panel:#ffffff;
  --accent:#0b63c7; --bad:#b3261e; --good:#1b7a3a; --changed:#fff2b3; --bar:#0b63c7; }
@media (prefers-color-scheme: dark) { :root { --bg:#161618; --fg:#e9e9ec; --muted:#9a9aa2; --line:#34343a;
  --panel:#1f1f23; --accent:#6aa9ff; --bad:#ff8a80; --good:#7ddc9a; --changed:#5a4a00; --bar:#6aa9ff; } }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--fg); }
header { display:flex; gap:12px; align-items:center; padding:8px 14px; border-bottom:1px solid var(--line); flex-wrap:wrap; }
header h1 { font-size:16px; margin:0; }
header .db { font-family:ui-monospace, "DejaVu Sans Mono", monospace; color:var(--muted); overflow-wrap:anywhere; }
[data-sqlive=status] { margin-left:auto; font-size:12px; padding:2px 8px; border-radius:10px; border:1px solid var(--line); }
[data-sqlive=status].up { color:var(--good); } [data-sqlive=status].down { color:var(--bad); }
main { display:grid; grid-template-columns: minmax(0, 1fr) 260px; gap:12px; padding:12px; }
@media (max-width: 800px) { main { grid-template-columns: minmax(0, 1fr); } }
section { background:var(--panel); border:1px solid var(--line); border-radius:8px; padding:10px; margin-bottom:12px; min-width:0; }
h2 { font-size:13px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); margin:0 0 8px; }
textarea { width:100%; min-height:90px; font:13px/1.45 ui-monospace, "DejaVu Sans Mono", monospace; padding:8px;
  background:var(--bg); color:var(--fg); border:1px solid var(--line); border-radius:6px; resize:vertical; }
textarea.has-errors { border-color:var(--bad); }
.row { display:flex; gap:8px; align-items:center; flex-wrap:wrap; margin-top:8px; }
button, input[type=text] { font:inherit; padding:4px 10px; border-radius:6px; border:1px solid var(--line); background:var(--bg); color:var(--fg); }
button { cursor:pointer; } button:hover { border-color:var(--accent); }
button.primary { background:var(--accent); color:#fff; border-color:var(--accent); }
.muted { color:var(--muted); font-size:12px; }
[data-sqlive=diagnostics] { font:12px ui-monospace, monospace; color:var(--bad); white-space:pre-wrap; min-height:1em; margin-top:6px; }
.grid-wrap { overflow:auto; max-height:420px; border:1px solid var(--line); border-radius:6px; }
table { border-collapse:collapse; font:12.5px ui-monospace, "DejaVu Sans Mono", monospace; width:max-content; min-width:100%; }
th, td { border-bottom:1px solid var(--line); padding:3px 8px; text-align:left; white-space:nowrap; max-width:480px; overflow:hidden; text-overflow:ellipsis; }
th { position:sticky; top:0; background:var(--panel); }
td.num { text-align:right; } td.null { color:var(--muted); font-style:italic; }
td.changed { background:var(--changed); transition: background 1.5s; }
.error { color:var(--bad); white-space:pre-wrap; font:12.5px ui-monospace, monospace; }
.live-head { display:flex; gap:8px; align-items:center; flex-wrap:wrap; }
.live-head b { font-family:ui-monospace, monospace; }
svg { display:block; width:100%; height:160px; margin-top:8px; }
svg .axis { stroke:var(--line); } svg .line { fill:none; stroke:var(--accent); stroke-width:2; }
svg .dot { fill:var(--accent); } svg .bar { fill:var(--bar); } svg text { fill:var(--muted); font:11px system-ui, sans-serif; }
ul.tree { list-style:none; padding-left:16px; margin:4px 0; font:12.5px ui-monospace, monospace; }
ul.tree > li::before { content:"└ "; color:var(--muted); }
[data-sqlive=schema] details { margin:4px 0; } [data-sqlive=schema] summary { cursor:pointer; font-family:ui-monospace, monospace; }
[data-sqlive=schema] ul { margin:2px 0 6px 14px; padding:0; list-style:none; font:12px ui-monospace, monospace; color:var(--muted); }
[data-sqlive=trace] { font:11.5px ui-monospace, monospace; max-height:260px; overflow:auto; }
[data-sqlive=trace] div { border-bottom:1px solid var(--line); padding:2px 0; overflow-wrap:anywhere; }
.completions { position:absolute; background:var(--panel); border:1px solid var(--line); border-radius:6px; max-height:200px; overflow:auto;
  font:12.5px ui-monospace, monospace; z-index:5; min-width:180px; }
.completions div { padding:2px 8px; cursor:pointer; } .completions div.on { background:var(--accent); color:#fff; }
.pager { display:flex; gap:6px; align-items:center; margin-top:6px; }
</style>
</head>
<body>
<header>
  <h1>sqlive</h1><span class="db" data-sqlive="database">{{DATABASE}}</span><span class="muted" data-sqlive="mode">{{MODE}}</span>
  <span data-sqlive="status" class="down">connecting…</span>
</header>
<main>
  <div>
    <section>
      <h2>SQL</h2>
      <div style="position:relative">
        <textarea data-sqlive="editor" spellcheck="false" aria-label="SQL editor">SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name</textarea>
        <div class="completions" hidden></div>
      </div>
      <div data-sqlive="diagnostics" role="status"></div>
      <div class="row">
        <button class="primary" data-sqlive="run" title="Ctrl-Enter">Run</button>
        <input type="text" data-sqlive="watch-name" placeholder="live query name" size="16" aria-label="live query name">
        <button data-sqlive="watch" title="Ctrl-Shift-Enter">Watch</button>
        <button data-sqlive="explain" title="Ctrl-E">Explain</button>
        <span class="muted">Ctrl-Enter runs · Ctrl-Space completes</span>
      </div>
    </section>
    <div data-sqlive="lives"></div>
    <section><h2>Result</h2><div data-sqlive="result" class="muted">Run a statement to see its rows.</div></section>
    <section><h2>Query plan</h2><div data-sqlive="plan" class="muted">Explain a statement to see its plan.</div></section>
  </div>
  <aside>
    <section><h2>Schema</h2><div data-sqlive="schema" class="muted">…</div></section>
    <section><h2>Statements <label class="muted"><input type="checkbox" data-sqlive="trace-toggle"> trace</label></h2>
      <div data-sqlive="trace" class="muted">Turn on the trace to see every statement run.</div></section>
  </aside>
</main>
<script>
"use strict";
const $ = (selector, root = document) => root.querySelector(selector);
const el = (tag, attributes = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value; else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value); else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
};
const params = new URLSearchParams(location.search);
const token = params.get("token") || sessionStorage.getItem("sqlive-token") || "";
if (params.get("token")) { sessionStorage.setItem("sqlive-token", token); history.replaceState(null, "", location.pathname); }
const documentURI = "sqlive-web://editor.sql";
const editor = $("[data-sqlive=editor]");
const lives = new Map();     // name -> {sql, section, rows, columns, points}
const initialWatches = {{WATCHES}};
let socket = null, nextID = 1, pending = new Map(), documentVersion = 1, everConnected = false, reconnectDelay = 250;

function send(message) { if (socket && socket.readyState === 1) socket.send(JSON.stringify(message)); }
function request(method, params) {
  return new Promise((resolve, reject) => {
    const id = nextID++;
    pending.set(id, { resolve, reject });
    send({ jsonrpc: "2.0", id, method, params });
  });
}
function notify(method, params) { send({ jsonrpc: "2.0", method, params }); }
function setStatus(text, up) { const s = $("[data-sqlive=status]"); s.textContent = text; s.className = up ? "up" : "down"; }

function connect() {
  socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/rpc?token=${encodeURIComponent(token)}`);
  socket.onopen = async () => {
    reconnectDelay = 250;
    await request("initialize", { clientInfo: { name: "sqlive-web" }, capabilities: {} });
    notify("initialized", {});
    notify("textDocument/didOpen", { textDocument: { uri: documentURI, languageId: "sql", version: documentVersion, text: editor.value } });
    refreshSchema();
    if ($("[data-sqlive=trace-toggle]").checked) request("trace/set", { enabled: true, profile: true });
    // Live queries registered before a drop are registered again.
    // The session's live queries (the REPL's, with .web): shown as they are.
    const existing = await request("liveQuery/list", { rows: true }).catch(() => ({ liveQueries: [] }));
    for (const q of existing.liveQueries) {
      if (!lives.has(q.name)) addLive(q.name, q.sql);
      liveChanged({ name: q.name, version: q.version, columns: q.columns || [], rows: q.rows || [], total: q.total, cause: "listed" });
    }
    const listed = new Set(existing.liveQueries.map(q => q.name));
    for (const [name, live] of lives) if (!listed.has(name)) registerLive(name, live.sql, true);
    if (!everConnected) for (const w of initialWatches) if (!listed.has(w.name)) registerLive(w.name, w.sql);
    setStatus(everConnected ? "reconnected" : "live", true);
    everConnected = true;
  };
  socket.onmessage = (event) => handle(JSON.parse(event.data));
  socket.onclose = () => {
    for (const [, waiter] of pending) waiter.reject(new Error("the connection dropped"));
    pending.clear();
    setStatus(`disconnected — reconnecting…`, false);
    setTimeout(connect, reconnectDelay);
    reconnectDelay = Math.min(reconnectDelay * 2, 4000);
  };
}

function handle(message) {
  if (message.id != null && !message.method) {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (!waiter) return;
    if (message.error) waiter.reject(Object.assign(new Error(message.error.message), { rpc: message.error }));
    else waiter.resolve(message.result);
    return;
  }
  switch (message.method) {
    case "liveQuery/changed": liveChanged(message.params); break;
    case "liveQuery/error": liveFailed(message.params); break;
    case "textDocument/publishDiagnostics": showDiagnostics(message.params); break;
    case "trace/statement": traced(message.params); break;
    case "database/fileChanged": refreshSchema(); break;
  }
}

// Values in the contract's JSON form: null, numbers, text, {"$blob": base64}.
function cell(value, changed) {
  if (value === null) return el("td", { class: "null" + (changed ? " changed" : ""), text: "NULL" });
  if (typeof value === "object" && value.$blob != null) return el("td", { class: changed ? "changed" : "", text: `x'${[...atob(value.$blob)].slice(0, 16).map(c => c.charCodeAt(0).toString(16).padStart(2, "0")).join("")}${value.$blob.length > 20 ? "…" : ""}'` });
  const numeric = typeof value === "number";
  return el("td", { class: (numeric ? "num" : "") + (changed ? " changed" : ""), text: String(value) });
}
function grid(columns, rows, previous, page = 0, pageSize = 100) {
  const table = el("table", {}, el("thead", {}, el("tr", {}, ...columns.map(c => el("th", { text: c })))));
  const body = el("tbody");
  const start = page * pageSize;
  for (let r = start; r < Math.min(rows.length, start + pageSize); r++) {
    const before = previous?.[r];
    body.append(el("tr", {}, ...rows[r].map((v, c) => cell(v, previous && (!before || JSON.stringify(before[c]) !== JSON.stringify(v))))));
  }
  table.append(body);
  return el("div", { class: "grid-wrap" }, table);
}

async function run() {
  const target = $("[data-sqlive=result]");
  target.className = ""; target.textContent = "running…";
  try {
    const result = await request("query/execute", { sql: editor.value, maxRows: 10000 });
    target.textContent = "";
    result.results.forEach((r, i) => target.append(resultView(r, i === result.results.length - 1)));
  } catch (error) { target.textContent = ""; target.append(el("div", { class: "error", text: error.message })); }
}
function resultView(r, last) {
  const view = el("div", { "data-sqlive": "result-set" });
  const summary = r.columns.length ? `${r.rows.length}${r.truncated ? "+" : ""} row${r.rows.length === 1 ? "" : "s"}` : `${r.changes} row${r.changes === 1 ? "" : "s"} changed`;
  view.append(el("div", { class: "muted", text: `${summary} · ${r.elapsedMs} ms${r.truncated ? " · first rows only" : ""}` }));
  if (r.columns.length) {
    let page = 0; const pages = Math.max(1, Math.ceil(r.rows.length / 100));
    const holder = el("div");
    const pager = el("div", { class: "pager" });
    const draw = () => {
      holder.replaceChildren(grid(r.columns, r.rows, null, page));
      pager.replaceChildren(el("button", { text: "‹", onclick: () => { if (page > 0) { page--; draw(); } } }),
        el("span", { class: "muted", text: `page ${page + 1} of ${pages}` }),
        el("button", { text: "›", onclick: () => { if (page < pages - 1) { page++; draw(); } } }));
    };
    draw(); view.append(holder); if (pages > 1) view.append(pager);
  }
  return view;
}

function watchName() {
  const input = $("[data-sqlive=watch-name]");
  let name = input.value.trim();
  if (!name) { let n = 1; while (lives.has(`q${n}`)) n++; name = `q${n}`; }
  input.value = "";
  return name;
}
function addLive(name, sql) {
  const live = { sql, rows: null, columns: [], points: [], paused: false };
  live.section = el("section", { "data-sqlive": "live", "data-name": name });
  $("[data-sqlive=lives]").prepend(live.section);
  lives.set(name, live);
  return live;
}
async function registerLive(name, sql, again = false) {
  removed.delete(name);
  const live = lives.get(name) || addLive(name, sql);
  try {
    const first = await request("liveQuery/register", { name, sql, maxRows: 1000 });
    liveChanged({ ...first, cause: again ? "reconnected" : "registered" });
  } catch (error) {
    if (error.rpc?.code === -32012 && again) return; // still registered on the server's side
    live.section.replaceChildren(el("div", { class: "error", text: `${name}: ${error.message}` }));
  }
}
const removed = new Set();
function liveChanged(p) {
  // A live query someone else registered (the REPL's, with .web) joins the page.
  const live = lives.get(p.name) || (removed.has(p.name) ? null : addLive(p.name, ""));
  if (!live) return;
  const previous = live.rows;
  live.columns = p.columns; live.rows = p.rows || [];
  live.version = p.version;
  const numeric = live.rows.length === 1 ? live.rows[0].findIndex(v => typeof v === "number") : -1;
  if (numeric >= 0) { live.points.push(live.rows[0][numeric]); if (live.points.length > 200) live.points.shift(); }
  const head = el("div", { class: "live-head" },
    el("b", { text: p.name }),
    el("span", { class: "muted", "data-sqlive": "version", text: `version ${p.version}` }),
    el("span", { class: "muted", "data-sqlive": "cause", text: p.cause ? `· ${p.cause}` : "" }),
    el("span", { class: "muted", text: p.total != null && p.total > live.rows.length ? `· first ${live.rows.length} of ${p.total}` : "" }),
    el("button", { text: live.paused ? "Resume" : "Pause", onclick: () => togglePause(p.name) }),
    el("button", { text: "Remove", onclick: () => removeLive(p.name) }));
  live.section.replaceChildren(head, el("div", { class: "muted", text: live.sql }), grid(live.columns, live.rows.slice(0, 200), previous), chart(live));
}
function liveFailed(p) {
  const live = lives.get(p.name);
  if (live) live.section.append(el("div", { class: "error", text: p.error?.message || "failed" }));
}
async function togglePause(name) {
  const live = lives.get(name);
  live.paused = !live.paused;
  await request(live.paused ? "liveQuery/pause" : "liveQuery/resume", { name }).catch(() => {});
  liveChanged({ name, version: live.version, columns: live.columns, rows: live.rows, cause: live.paused ? "paused" : "resumed" });
}
async function removeLive(name) {
  const live = lives.get(name);
  lives.delete(name);
  removed.add(name);
  live?.section.remove();
  await request("liveQuery/unregister", { name }).catch(() => {});
}

// A line of each version's value for a single-row numeric result; bars for
// a grouped result (a label column, then a number).
function chart(live) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("data-sqlive", "chart"); svg.setAttribute("viewBox", "0 0 400 160"); svg.setAttribute("preserveAspectRatio", "none");
  const add = (tag, attributes) => { const n = document.createElementNS(ns, tag); for (const [k, v] of Object.entries(attributes)) n.setAttribute(k, v); svg.append(n); return n; };
  add("line", { x1: 30, y1: 145, x2: 395, y2: 145, class: "axis" });
  const rows = live.rows;
  const valueColumn = rows.length > 1 ? rows[0].findIndex((v, i) => i > 0 && typeof v === "number") : -1;
  if (rows.length === 1 && live.points.length) {
    svg.setAttribute("data-kind", "line"); svg.setAttribute("data-points", live.points.length);
    const min = Math.min(...live.points), max = Math.max(...live.points), span = max - min || 1;
    const x = i => 30 + (live.points.length === 1 ? 182 : i * 365 / (live.points.length - 1));
    const y = v => 140 - (v - min) / span * 125;
    add("polyline", { class: "line", points: live.points.map((v, i) => `${x(i)},${y(v)}`).join(" ") });
    live.points.forEach((v, i) => add("circle", { class: "dot", cx: x(i), cy: y(v), r: 2.5 }));
    add("text", { x: 2, y: 20, text: "" }).textContent = String(max);
    add("text", { x: 2, y: 143 }).textContent = String(min);
  } else if (valueColumn > 0) {
    const shown = rows.slice(0, 40);
    svg.setAttribute("data-kind", "bars"); svg.setAttribute("data-bars", shown.length);
    const max = Math.max(0, ...shown.map(r => Number(r[valueColumn]) || 0)) || 1;
    const width = 365 / shown.length;
    shown.forEach((r, i) => {
      const h = Math.max(0, (Number(r[valueColumn]) || 0) / max * 125);
      const bar = add("rect", { class: "bar", x: 30 + i * width + 1, y: 145 - h, width: Math.max(1, width - 2), height: h });
      const title = document.createElementNS(ns, "title"); title.textContent = `${r[0]}: ${r[valueColumn]}`; bar.append(title);
      if (shown.length <= 12) add("text", { x: 30 + i * width + 2, y: 158 }).textContent = String(r[0]).slice(0, 10);
    });
    add("text", { x: 2, y: 20 }).textContent = String(max);
  } else { svg.setAttribute("data-kind", "none"); add("text", { x: 40, y: 80 }).textContent = "no chart: a single-row number, or a label and a number per row"; }
  return svg;
}

async function explain() {
  const target = $("[data-sqlive=plan]");
  target.className = ""; target.textContent = "explaining…";
  try {
    const result = await request("explain", { sql: editor.value, advise: true });
    const children = new Map();
    for (const node of result.plan) { if (!children.has(node.parent)) children.set(node.parent, []); children.get(node.parent).push(node); }
    const tree = parent => { const list = el("ul", { class: "tree" }); for (const node of children.get(parent) || []) list.append(el("li", { text: node.detail }, tree(node.id))); return list; };
    target.replaceChildren(tree(0));
    for (const hint of result.hints || []) target.append(el("div", { class: "muted", "data-sqlive": "hint", text: "⚠ " + hint }));
    for (const advice of result.advice || []) target.append(el("div", { "data-sqlive": "advice" }, el("code", { text: advice.sql }), el("span", { class: "muted", text: " → " + advice.planAfter.map(n => n.detail).join("; ") })));
    if ((result.advice || []).length === 0 && (result.hints || []).length) target.append(el("div", { class: "muted", text: "no index would change this plan" }));
  } catch (error) { target.replaceChildren(el("div", { class: "error", text: error.message })); }
}

let schemaTables = [];
async function refreshSchema() {
  const target = $("[data-sqlive=schema]");
  try {
    const schema = await request("database/schema", {});
    schemaTables = schema.tables;
    target.className = "";
    target.replaceChildren(...schema.tables.map(t => el("details", { "data-table": t.name },
      el("summary", { text: `${t.name}${t.type === "view" ? " (view)" : ""}` }),
      el("ul", {}, ...t.columns.map(c => el("li", { text: `${c.name} ${c.type}${c.primaryKey ? " PK" : ""}${c.notNull ? " NOT NULL" : ""}` }))))));
    if (!schema.tables.length) target.textContent = "no tables";
  } catch (error) { target.replaceChildren(el("div", { class: "error", text: error.message })); }
}

function showDiagnostics(p) {
  if (p.uri !== documentURI) return;
  const target = $("[data-sqlive=diagnostics]");
  target.textContent = p.diagnostics.map(d => `${d.range.start.line + 1}:${d.range.start.character + 1} ${d.message}`).join("\n");
  editor.classList.toggle("has-errors", p.diagnostics.some(d => d.severity === 1));
}
let changeTimer = null;
editor.addEventListener("input", () => {
  clearTimeout(changeTimer);
  changeTimer = setTimeout(() => {
    documentVersion++;
    notify("textDocument/didChange", { textDocument: { uri: documentURI, version: documentVersion }, contentChanges: [{ text: editor.value }] });
  }, 120);
  if (!$(".completions").hidden) complete();
});

function position() {
  const before = editor.value.slice(0, editor.selectionStart).split("\n");
  return { line: before.length - 1, character: before[before.length - 1].length };
}
async function complete() {
  clearTimeout(changeTimer);
  documentVersion++;
  notify("textDocument/didChange", { textDocument: { uri: documentURI, version: documentVersion }, contentChanges: [{ text: editor.value }] });
  const box = $(".completions");
  try {
    const result = await request("textDocument/completion", { textDocument: { uri: documentURI }, position: position() });
    const items = (Array.isArray(result) ? result : result?.items || []).slice(0, 50);
    if (!items.length) { box.hidden = true; return; }
    box.replaceChildren(...items.map((item, i) => el("div", { class: i === 0 ? "on" : "", text: item.label, onmousedown: (e) => { e.preventDefault(); accept(item); } })));
    box.items = items; box.hidden = false;
  } catch { box.hidden = true; }
}
function accept(item) {
  const box = $(".completions");
  const text = item.insertText || item.textEdit?.newText || item.label;
  const start = editor.selectionStart;
  let from = start;
  while (from > 0 && /[\w$]/.test(editor.value[from - 1])) from--;
  editor.setRangeText(text, from, start, "end");
  box.hidden = true;
  editor.dispatchEvent(new Event("input"));
}
editor.addEventListener("keydown", (event) => {
  const box = $(".completions");
  if (!box.hidden) {
    const on = [...box.children].findIndex(c => c.classList.contains("on"));
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = (on + (event.key === "ArrowDown" ? 1 : -1) + box.children.length) % box.children.length;
      box.children[on]?.classList.remove("on"); box.children[next].classList.add("on"); return;
    }
    if (event.key === "Enter" || event.key === "Tab") { event.preventDefault(); accept(box.items[Math.max(on, 0)]); return; }
    if (event.key === "Escape") { box.hidden = true; return; }
  }
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); event.shiftKey ? watch() : run(); }
  else if ((event.ctrlKey || event.metaKey) && (event.key === "e" || event.key === "E")) { event.preventDefault(); explain(); }
  else if (event.ctrlKey && event.key === " ") { event.preventDefault(); complete(); }
});
editor.addEventListener("blur", () => { $(".completions").hidden = true; });

function traced(p) {
  const target = $("[data-sqlive=trace]");
  if (target.classList.contains("muted")) { target.className = ""; target.textContent = ""; }
  target.prepend(el("div", { text: `${p.origin} · ${p.elapsedMs != null ? p.elapsedMs + " ms · " : ""}${p.sql}` }));
  while (target.children.length > 100) target.lastChild.remove();
}
$("[data-sqlive=trace-toggle]").addEventListener("change", (event) => request("trace/set", { enabled: event.target.checked, profile: true }).catch(() => {}));
function watch() { registerLive(watchName(), editor.value); }
$("[data-sqlive=run]").addEventListener("click", run);
$("[data-sqlive=watch]").addEventListener("click", watch);
$("[data-sqlive=explain]").addEventListener("click", explain);
connect();
</script>
</body>
</html>
"""#
}
