// Results shown to people: tool results (text, images, audio, embedded resources, resource
// links, structured content), resource contents, prompt messages, and expandable JSON.
"use strict";

function jsonView(value, title) {
  return el("details", { class: "json" }, el("summary", {}, title || "JSON"),
    el("pre", {}, JSON.stringify(value, null, 2)));
}

function dataUrl(mime, base64) {
  const safe = /^[A-Za-z0-9+/=\s]*$/.test(base64 || "") ? base64 : "";
  return "data:" + (mime || "application/octet-stream") + ";base64," + safe;
}

function renderResourceContents(r) {
  const box = el("div", { class: "content" }, el("div", { class: "desc" }, r.uri || "", r.mimeType ? " (" + r.mimeType + ")" : ""));
  if (typeof r.text === "string") box.append(el("pre", {}, r.text));
  else if (typeof r.blob === "string") {
    if ((r.mimeType || "").startsWith("image/")) box.append(el("img", { src: dataUrl(r.mimeType, r.blob), alt: r.uri || "" }));
    else box.append(el("div", {}, "binary, " + Math.floor(r.blob.length * 3 / 4) + " bytes"));
  }
  return box;
}

function renderContent(c) {
  switch (c && c.type) {
    case "text": return el("div", { class: "content text" }, el("pre", {}, c.text));
    case "image": return el("div", { class: "content image" }, el("img", { src: dataUrl(c.mimeType, c.data), alt: "image" }));
    case "audio": return el("div", { class: "content audio" }, el("audio", { controls: true, src: dataUrl(c.mimeType, c.data) }));
    case "resource": return el("div", { class: "content resource" }, el("div", {}, "embedded resource"), renderResourceContents(c.resource || {}));
    case "resource_link": return el("div", { class: "content link" }, "resource link: ", el("code", {}, c.uri || ""), c.name ? " (" + c.name + ")" : "");
    default: return el("div", { class: "content" }, jsonView(c, (c && c.type) || "content"));
  }
}

function renderToolResult(result) {
  const box = el("div", { class: "result" + (result.isError ? " is-error" : ""), id: "tool-result" });
  if (result.isError) box.append(el("div", { class: "error" }, "The tool reported an error (isError)."));
  for (const c of result.content || []) box.append(renderContent(c));
  if (result.structuredContent !== undefined) box.append(el("div", { class: "content structured" }, el("div", {}, "structuredContent"), el("pre", {}, JSON.stringify(result.structuredContent, null, 2))));
  box.append(jsonView(result, "whole result"));
  return box;
}

function renderReadResult(result) {
  const box = el("div", { class: "result", id: "resource-result" });
  for (const r of result.contents || []) box.append(renderResourceContents(r));
  box.append(jsonView(result, "whole result"));
  return box;
}

function renderPromptResult(result) {
  const box = el("div", { class: "result", id: "prompt-result" });
  if (result.description) box.append(el("p", { class: "desc" }, result.description));
  for (const m of result.messages || []) box.append(el("div", {}, el("strong", {}, m.role + ":")), renderContent(m.content));
  box.append(jsonView(result, "whole result"));
  return box;
}
