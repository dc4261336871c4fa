// The inspector page: the connection, lists and calls through the CLI's API (relative
// URLs under /t/<token>/), the server's requests to answer, and the live frame log.
"use strict";

const base = location.pathname.endsWith("/") ? location.pathname : location.pathname + "/";
const $ = id => document.getElementById(id);
const MAX_ROWS = 2000;

async function api(path, body) {
  const init = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(base + path, init);
  const text = await response.text();
  let value;
  try { value = JSON.parse(text); } catch (e) { throw new Error(text || response.statusText); }
  if (!response.ok) throw new Error(value.error || response.statusText);
  return value;
}

async function request(method, params) {
  return (await api("api/request", { method, params })).result;
}

// --- connection ---------------------------------------------------------------------
let connected = false;
function showState(s) {
  const status = $("status");
  status.textContent = s.status + (s.protocolVersion ? " · " + s.protocolVersion : "");
  status.className = "status " + s.status;
  $("target").textContent = s.target + (s.transport ? " · " + s.transport : "") + (s.error ? " · " + s.error : "");
  const info = s.serverInfo || {};
  $("server-summary").textContent = "server: " + (info.name || "?") + " " + (info.version || "") + (s.protocolVersion ? " · revision " + s.protocolVersion : "");
  const details = $("server-details");
  details.replaceChildren(
    el("div", {}, "revision: ", el("code", { id: "revision" }, s.protocolVersion || "-")),
    el("div", {}, "era: ", el("code", { id: "era" }, s.era === "stateless"
      ? "stateless (no initialize; capabilities from server/discover)"
      : s.era === "stateful" ? "stateful (initialize)" : "-")),
    s.instructions ? el("p", { class: "desc" }, s.instructions) : null,
    jsonView(s.capabilities || {}, "capabilities"), jsonView(s, "connection"));
  if (s.status === "connected" && !connected) { connected = true; listTools(); }
}

// --- tabs ---------------------------------------------------------------------------
for (const b of document.querySelectorAll("#tabs button")) {
  b.addEventListener("click", () => {
    for (const o of document.querySelectorAll("#tabs button")) o.classList.toggle("active", o === b);
    for (const t of document.querySelectorAll(".tab")) t.classList.toggle("hidden", t.id !== "tab-" + b.dataset.tab);
  });
}

function selectIn(list, li) {
  for (const o of list.children) o.classList.toggle("selected", o === li);
}

async function guarded(errorId, f) {
  $(errorId).textContent = "";
  try { await f(); } catch (e) { $(errorId).textContent = e.message; }
}

// --- tools --------------------------------------------------------------------------
function listTools() {
  return guarded("tools-error", async () => {
    const result = await request("tools/list");
    const list = $("tools");
    list.replaceChildren(...(result.tools || []).map(tool => {
      const li = el("li", { "data-tool": tool.name, title: tool.description || "" }, tool.title || tool.name);
      li.addEventListener("click", () => { selectIn(list, li); showTool(tool); });
      return li;
    }));
  });
}

function showTool(tool) {
  const form = objectForm(tool.inputSchema || {}, "");
  const out = el("div", { id: "tool-output" });
  const call = el("button", { id: "call-tool" }, "Call " + tool.name);
  call.addEventListener("click", async () => {
    let args;
    try { args = form.read(); } catch (e) { out.replaceChildren(el("div", { class: "error" }, e)); return; }
    out.replaceChildren(el("div", { class: "desc" }, "calling…"));
    try { out.replaceChildren(renderToolResult(await request("tools/call", { name: tool.name, arguments: args }))); }
    catch (e) { out.replaceChildren(el("div", { class: "error", id: "tool-result" }, e.message)); }
  });
  $("tool").replaceChildren(el("h3", {}, tool.name), el("p", { class: "desc" }, tool.description || ""),
    form.node, call, jsonView(tool, "tool definition"), out);
}
$("list-tools").addEventListener("click", listTools);

// --- resources and templates --------------------------------------------------------
async function readResource(uri) {
  const out = $("resource");
  out.replaceChildren(el("h3", {}, uri), el("div", { class: "desc" }, "reading…"));
  try { out.replaceChildren(el("h3", {}, uri), renderReadResult(await request("resources/read", { uri }))); }
  catch (e) { out.replaceChildren(el("h3", {}, uri), el("div", { class: "error" }, e.message)); }
}

// Fills `{name}` and `{+name}` style variables (RFC 6570, simple and reserved expansion).
function fillTemplate(template, values) {
  return template.replace(/\{([+#./;?&]?)([^}]*)\}/g, (_, op, names) => {
    const parts = names.split(",").map(n => n.replace(/\*$/, "")).filter(n => values[n] !== undefined && values[n] !== "");
    const enc = v => op === "+" || op === "#" ? encodeURI(v) : encodeURIComponent(v);
    const joined = parts.map(n => enc(values[n])).join(",");
    if (!joined) return "";
    return { "": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&" }[op] + joined;
  });
}

function showTemplate(t) {
  const names = [...t.uriTemplate.matchAll(/\{[+#./;?&]?([^}]*)\}/g)].flatMap(m => m[1].split(",").map(n => n.replace(/\*$/, "")));
  const inputs = names.map(n => [n, el("input", { type: "text", "data-var": n, id: "var-" + n })]);
  const go = el("button", { id: "read-template" }, "Read");
  go.addEventListener("click", () => readResource(fillTemplate(t.uriTemplate, Object.fromEntries(inputs.map(([n, i]) => [n, i.value])))));
  $("resource").replaceChildren(el("h3", {}, t.uriTemplate), el("p", { class: "desc" }, t.description || ""),
    ...inputs.map(([n, i]) => el("div", { class: "field" }, el("label", { for: i.id }, n), i)), go);
}

$("list-resources").addEventListener("click", () => guarded("resources-error", async () => {
  const [res, tpl] = await Promise.all([request("resources/list"), request("resources/templates/list")]);
  const list = $("resources");
  list.replaceChildren(...(res.resources || []).map(r => {
    const li = el("li", { "data-uri": r.uri, title: r.uri }, r.name || r.uri);
    li.addEventListener("click", () => { selectIn(list, li); readResource(r.uri); });
    return li;
  }));
  const tlist = $("templates");
  tlist.replaceChildren(...(tpl.resourceTemplates || []).map(t => {
    const li = el("li", { "data-template": t.uriTemplate }, t.name || t.uriTemplate);
    li.addEventListener("click", () => { selectIn(tlist, li); showTemplate(t); });
    return li;
  }));
}));

// --- prompts ------------------------------------------------------------------------
function showPrompt(p) {
  const schema = { type: "object", properties: {}, required: [] };
  for (const a of p.arguments || []) {
    schema.properties[a.name] = { type: "string", description: a.description };
    if (a.required) schema.required.push(a.name);
  }
  const form = objectForm(schema, "");
  const out = el("div", {});
  const get = el("button", { id: "get-prompt" }, "Get " + p.name);
  get.addEventListener("click", async () => {
    let args;
    try { args = form.read(); } catch (e) { out.replaceChildren(el("div", { class: "error" }, e)); return; }
    try { out.replaceChildren(renderPromptResult(await request("prompts/get", { name: p.name, arguments: args }))); }
    catch (e) { out.replaceChildren(el("div", { class: "error" }, e.message)); }
  });
  $("prompt").replaceChildren(el("h3", {}, p.name), el("p", { class: "desc" }, p.description || ""), form.node, get, out);
}

$("list-prompts").addEventListener("click", () => guarded("prompts-error", async () => {
  const result = await request("prompts/list");
  const list = $("prompts");
  list.replaceChildren(...(result.prompts || []).map(p => {
    const li = el("li", { "data-prompt": p.name }, p.title || p.name);
    li.addEventListener("click", () => { selectIn(list, li); showPrompt(p); });
    return li;
  }));
}));

// --- roots --------------------------------------------------------------------------
$("set-roots").addEventListener("click", async () => {
  const roots = $("roots").value.split("\n").map(s => s.trim()).filter(Boolean);
  try { await api("api/roots", { roots }); $("roots-note").textContent = "sent " + roots.length + " root(s)"; }
  catch (e) { $("roots-note").textContent = e.message; }
});

// --- the server's requests ----------------------------------------------------------
async function answer(id, body) {
  try { await api("api/answer", Object.assign({ id }, body)); } catch (e) { /* already answered or timed out */ }
  refreshPending();
}

function elicitationCard(p) {
  const params = p.params || {};
  const card = el("div", { class: "card", "data-pending": p.id, "data-kind": "elicitation" }, el("h3", {}, "The server asks: ", params.message || ""));
  if (params.mode === "url") {
    card.append(el("p", {}, "Open this address yourself: ", el("code", {}, params.url || "")));
    const ok = el("button", { "data-action": "accept" }, "Accept");
    ok.addEventListener("click", () => answer(p.id, { result: { action: "accept" } }));
    card.append(ok);
  } else {
    const form = objectForm(params.requestedSchema || {}, "elicit-" + p.id);
    const err = el("div", { class: "error" });
    const ok = el("button", { "data-action": "accept" }, "Accept");
    ok.addEventListener("click", () => {
      try { answer(p.id, { result: { action: "accept", content: form.read() } }); } catch (e) { err.textContent = e; }
    });
    card.append(form.node, err, ok);
  }
  for (const action of ["decline", "cancel"]) {
    const b = el("button", { "data-action": action }, action[0].toUpperCase() + action.slice(1));
    b.addEventListener("click", () => answer(p.id, { result: { action } }));
    card.append(" ", b);
  }
  return card;
}

function samplingCard(p) {
  const params = p.params || {};
  const card = el("div", { class: "card", "data-pending": p.id, "data-kind": "sampling" }, el("h3", {}, "The server asks for a model reply (sampling)"));
  if (params.systemPrompt) card.append(el("p", { class: "desc" }, "system: " + params.systemPrompt));
  for (const m of params.messages || []) card.append(el("div", {}, el("strong", {}, m.role + ":")), ...[].concat(m.content || []).map(renderContent));
  card.append(el("div", { class: "desc" }, "max tokens: " + params.maxTokens));
  const text = el("textarea", { rows: 3, placeholder: "the reply to send", "data-reply": p.id });
  const send = el("button", { "data-action": "send" }, "Send reply");
  send.addEventListener("click", () => answer(p.id, { result: { role: "assistant", content: { type: "text", text: text.value }, model: "mcp-sansio-inspect", stopReason: "endTurn" } }));
  const refuse = el("button", { "data-action": "refuse" }, "Refuse");
  refuse.addEventListener("click", () => answer(p.id, { error: "refused by the person at the inspector" }));
  card.append(text, send, " ", refuse);
  return card;
}

function rootsCard(p) {
  const offered = (p.params || {}).offered || [];
  const card = el("div", { class: "card", "data-pending": p.id, "data-kind": "roots" }, el("h3", {}, "The server asks for your roots (roots/list)"));
  card.append(el("p", { class: "desc" }, "The roots offered now (from the Roots tab); edit them for this answer, one file:// URI per line:"));
  const text = el("textarea", { rows: 3, "data-roots": p.id });
  text.value = offered.map(r => r.uri).join("\n");
  const byUri = new Map(offered.map(r => [r.uri, r]));
  const send = el("button", { "data-action": "send" }, "Send roots");
  send.addEventListener("click", () => {
    const roots = text.value.split("\n").map(s => s.trim()).filter(Boolean).map(uri => byUri.get(uri) || { uri });
    answer(p.id, { result: { roots } });
  });
  const refuse = el("button", { "data-action": "refuse" }, "Refuse");
  refuse.addEventListener("click", () => answer(p.id, { error: "refused by the person at the inspector" }));
  card.append(text, send, " ", refuse);
  return card;
}

const cards = { sampling: samplingCard, roots: rootsCard, elicitation: elicitationCard };

async function refreshPending() {
  let list;
  try { list = await api("api/pending"); } catch (e) { return; }
  const box = $("pending");
  const shown = new Set([...box.children].map(c => c.dataset.pending));
  const wanted = new Set(list.map(p => String(p.id)));
  for (const c of [...box.children]) if (!wanted.has(c.dataset.pending)) c.remove();
  for (const p of list) if (!shown.has(String(p.id))) box.append((cards[p.kind] || elicitationCard)(p));
}

// --- the frame log ------------------------------------------------------------------
function frameSummary(r) {
  const arrow = r.dir === "send" ? "→" : "←";
  const t = el("span", { class: "t" }, r.t_ms.toFixed(1) + " ms");
  if (r.http) return [t, " ", arrow, " ", r.transport, "  ", r.http.start, " ", Object.entries(r.http.headers || {}).map(([k, v]) => k + ": " + v).join("  ")];
  if (r.sse) return [t, " ", arrow, " sse event", r.sse.id ? " id: " + r.sse.id : "", r.sse.retry != null ? " retry: " + r.sse.retry : ""];
  const what = r.kind + (r.method ? " " + r.method : "") + (r.id != null ? " id=" + r.id : "") + (r.error_code != null ? " code=" + r.error_code : "");
  return [t, " ", arrow, " ", r.transport, el("span", { class: "b" }, r.bytes + " B"), "  ", what];
}

function matchesFilter(row) {
  const f = $("filter").value.trim().toLowerCase();
  if (row.classList.contains("head") && !$("show-http").checked) return false;
  return !f || (row.dataset.method || "").toLowerCase().includes(f);
}

const methodsById = new Map();
function addFrame(r) {
  let method = r.method || "";
  if (r.message && r.id != null) {
    if (r.kind === "request") methodsById.set(r.dir + r.id, method);
    else if (!method) method = methodsById.get((r.dir === "send" ? "recv" : "send") + r.id) || "";
  }
  const head = r.http || r.sse;
  const row = el("details", { class: "frame " + r.dir + (head ? " head" : ""), "data-method": method, "data-kind": r.kind || "" },
    el("summary", {}, ...frameSummary(r)));
  if (r.message !== undefined) row.append(el("pre", {}, JSON.stringify(r.message, null, 2)));
  else row.append(el("pre", {}, JSON.stringify(r, null, 2)));
  row.hidden = !matchesFilter(row);
  const frames = $("frames");
  const atEnd = frames.scrollTop + frames.clientHeight >= frames.scrollHeight - 20;
  frames.append(row);
  while (frames.children.length > MAX_ROWS) frames.firstChild.remove();
  if (atEnd) frames.scrollTop = frames.scrollHeight;
  $("frame-count").textContent = frames.children.length + " shown";
}

// A transport event (an oversized SSE event dropped, the session lost, ...): one line.
function addTransportEvent(r) {
  const row = el("div", { class: "frame transport" }, el("span", { class: "t" }, r.t_ms.toFixed(1) + " ms"), " ", r.data.text);
  const frames = $("frames");
  frames.append(row);
  while (frames.children.length > MAX_ROWS) frames.firstChild.remove();
  $("frame-count").textContent = frames.children.length + " shown";
}

function applyFilter() { for (const row of $("frames").children) row.hidden = !matchesFilter(row); }
$("filter").addEventListener("input", applyFilter);
$("show-http").addEventListener("change", applyFilter);
$("clear").addEventListener("click", () => { $("frames").replaceChildren(); $("frame-count").textContent = ""; });

const feed = new EventSource(base + "api/frames");
feed.addEventListener("message", e => {
  let r;
  try { r = JSON.parse(e.data); } catch (err) { return; }
  if (r.event === "state") showState(r.data);
  else if (r.event === "pending" || r.event === "answered") refreshPending();
  else if (r.event === "transport") addTransportEvent(r);
  else if (!r.event) addFrame(r);
});
feed.addEventListener("missed", e => { $("frames").append(el("div", { class: "frame" }, "… " + e.data + " frames dropped by the buffer")); });

api("api/state").then(showState).catch(e => { $("target").textContent = e.message; });
refreshPending();
