// Forms generated from a JSON Schema (a tool's inputSchema, an elicitation's
// requestedSchema): strings, enums (a select), numbers and integers, booleans, arrays and
// nested objects, with required fields marked; local references ("#/$defs/x", "#anchor") are
// followed, a recursive schema down to MAX_DEPTH levels (deeper ones are a JSON field). Each
// builder returns { node, read }, where read() gives the value (undefined when left empty) or
// throws a message.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function schemaType(schema) {
  if (!schema || typeof schema !== "object") return "json";
  if (Array.isArray(schema.enum) || Array.isArray(schema.oneOf) && schema.oneOf.every(o => "const" in o)) return "enum";
  let t = schema.type;
  if (Array.isArray(t)) t = t.find(x => x !== "null");
  if (!t && schema.properties) t = "object";
  return ["string", "number", "integer", "boolean", "array", "object"].includes(t) ? t : "json";
}

const MAX_DEPTH = 6;

// The schema a local "$ref" names within root (a JSON pointer or an "$anchor"), followed
// through at most 16 references; the schema itself when it has no "$ref" or names no local one.
function deref(schema, root) {
  for (let hops = 0; hops < 16 && schema && typeof schema.$ref === "string"; hops++) {
    const ref = schema.$ref;
    if (!ref.startsWith("#")) break;
    const target = ref.startsWith("#/") || ref === "#" ? pointer(root, ref.slice(1)) : anchor(root, ref.slice(1), 0);
    if (!target) break;
    schema = target;
  }
  return schema;
}

function pointer(root, path) {
  let node = root;
  for (const raw of path.split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!node || typeof node !== "object" || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

function anchor(node, name, depth) {
  if (!node || typeof node !== "object" || depth > 32) return undefined;
  if (node.$anchor === name) return node;
  for (const child of Object.values(node)) {
    const found = anchor(child, name, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function buildField(schema, path, required, root, depth) {
  schema = deref(schema, root);
  const type = depth > MAX_DEPTH ? "json" : schemaType(schema);
  const id = "f-" + path.replace(/[^A-Za-z0-9_-]/g, "_");
  const builder = { string: stringField, number: numberField, integer: numberField, boolean: boolField,
    enum: enumField, array: arrayField, object: objectField, json: jsonField }[type];
  return builder(schema || {}, path, required, id, type, root, depth);
}

function label(text, required, schema, id) {
  return el("label", { for: id }, text, required ? el("span", { class: "required", title: "required" }, " *") : null,
    schema.description ? el("span", { class: "hint" }, " " + schema.description) : null);
}

function stringField(schema, path, required, id) {
  const multiline = (schema.maxLength || 0) > 200;
  const input = multiline ? el("textarea", { id, "data-field": path, rows: 3 })
    : el("input", { id, type: schema.format === "email" ? "email" : "text", "data-field": path });
  if (typeof schema.default === "string") input.value = schema.default;
  return { input, read() {
    if (input.value === "") { if (required) throw path + " is required"; return undefined; }
    return input.value;
  } };
}

function numberField(schema, path, required, id, type) {
  const input = el("input", { id, type: "number", "data-field": path, step: type === "integer" ? "1" : "any" });
  if (typeof schema.default === "number") input.value = String(schema.default);
  return { input, read() {
    if (input.value === "") { if (required) throw path + " is required"; return undefined; }
    const n = Number(input.value);
    if (!Number.isFinite(n) || type === "integer" && !Number.isInteger(n)) throw path + " must be " + (type === "integer" ? "an integer" : "a number");
    return n;
  } };
}

function boolField(schema, path, required, id) {
  if (required) {
    const input = el("input", { id, type: "checkbox", "data-field": path });
    input.checked = schema.default === true;
    return { input, read: () => input.checked };
  }
  const input = el("select", { id, "data-field": path }, el("option", { value: "" }, "(unset)"),
    el("option", { value: "true" }, "true"), el("option", { value: "false" }, "false"));
  if (typeof schema.default === "boolean") input.value = String(schema.default);
  return { input, read: () => input.value === "" ? undefined : input.value === "true" };
}

function enumField(schema, path, required, id) {
  const options = Array.isArray(schema.enum) ? schema.enum.map((v, i) => [v, (schema.enumNames || [])[i] || String(v)])
    : schema.oneOf.map(o => [o.const, o.title || String(o.const)]);
  const input = el("select", { id, "data-field": path }, required ? null : el("option", { value: "" }, "(unset)"),
    options.map(([v, name], i) => el("option", { value: String(i) }, name)));
  const at = options.findIndex(([v]) => v === schema.default);
  if (at >= 0) input.value = String(at);
  return { input, read() {
    if (input.value === "") { if (required) throw path + " is required"; return undefined; }
    return options[Number(input.value)][0];
  } };
}

function jsonField(schema, path, required, id) {
  const input = el("textarea", { id, "data-field": path, rows: 2, placeholder: "JSON" });
  if (schema.default !== undefined) input.value = JSON.stringify(schema.default);
  return { input, read() {
    if (input.value.trim() === "") { if (required) throw path + " is required"; return undefined; }
    try { return JSON.parse(input.value); } catch (e) { throw path + " is not valid JSON"; }
  } };
}

function arrayField(schema, path, required, id, type, root, depth) {
  const items = [];
  const list = el("div", { class: "array", id, "data-field": path });
  const add = () => {
    const item = buildField(schema.items, path + "[" + items.length + "]", true, root, depth + 1);
    const row = el("div", { class: "array-item" }, item.input,
      el("button", { type: "button", onclick: () => { row.remove(); items.splice(items.indexOf(item), 1); } }, "−"));
    items.push(item);
    list.insertBefore(row, addButton);
  };
  const addButton = el("button", { type: "button", "data-add": path, onclick: add }, "+ item");
  list.append(addButton);
  return { input: list, read() {
    if (items.length === 0) { if (required) return []; return undefined; }
    return items.map(i => i.read());
  } };
}

function objectField(schema, path, required, id, type, root, depth) {
  const form = objectForm(schema, path, root, depth + 1);
  const box = el("fieldset", { id }, form.node);
  return { input: box, read() {
    const value = form.read();
    if (!required && Object.keys(value).length === 0) return undefined;
    return value;
  } };
}

// The fields of an object schema; read() gives the object (empty fields left out). `root`
// (the schema itself at the top) is where local references are looked up.
function objectForm(schema, prefix, root, depth) {
  root = root || schema;
  depth = depth || 0;
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = [];
  const node = el("div", { class: "form" });
  for (const [name, sub] of Object.entries(props)) {
    const path = prefix ? prefix + "." + name : name;
    const field = buildField(sub, path, required.has(name), root, depth);
    const shown = deref(sub, root) || {};
    fields.push([name, field]);
    node.append(el("div", { class: "field" }, label((sub && sub.title) || shown.title || name, required.has(name), shown, field.input.id), field.input));
  }
  if (fields.length === 0) node.append(el("p", { class: "desc" }, "No arguments."));
  return { node, read() {
    const out = {};
    for (const [name, field] of fields) {
      const v = field.read();
      if (v !== undefined) out[name] = v;
    }
    return out;
  } };
}
