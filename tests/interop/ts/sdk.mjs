// Loads modules of the official TypeScript MCP SDK from the directory named by MCP_NODE_MODULES
// (set by .ci-cache/env, written by scripts/install-peers). ES modules ignore NODE_PATH, so the
// interop scripts import the SDK through this helper instead of by bare specifier.

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Imports `@modelcontextprotocol/sdk/<subpath>` (e.g. `client/index.js`) from MCP_NODE_MODULES. */
export async function sdk(subpath) {
  const modules = process.env.MCP_NODE_MODULES;
  if (!modules) return import(`@modelcontextprotocol/sdk/${subpath}`);
  const file = join(modules, '@modelcontextprotocol', 'sdk', 'dist', 'esm', subpath);
  return import(pathToFileURL(file).href);
}
