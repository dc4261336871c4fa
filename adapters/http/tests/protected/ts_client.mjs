// The official TypeScript SDK client authorizing against our protected server: connect (401),
// let the SDK discover the metadata, register and build the authorization URL, follow it to the
// in-test authorization server (which approves at once), finish with the code, reconnect and
// call a tool. Prints one JSON line: the tool's text and the granted scope.
import { sdk } from "../../../../tests/interop/ts/sdk.mjs";

const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { UnauthorizedError } = await sdk("client/auth.js");

const url = new URL(process.argv[2]);
const redirect = "http://127.0.0.1:9/callback";
let clientInfo, tokens, verifier, authorizationUrl;
const provider = {
  get redirectUrl() { return redirect; },
  get clientMetadata() {
    return {
      client_name: "ts-sdk-auth-test",
      redirect_uris: [redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  clientInformation() { return clientInfo; },
  saveClientInformation(info) { clientInfo = info; },
  tokens() { return tokens; },
  saveTokens(t) { tokens = t; },
  redirectToAuthorization(u) { authorizationUrl = u; },
  saveCodeVerifier(v) { verifier = v; },
  codeVerifier() { return verifier; },
};

const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
try {
  await new Client({ name: "ts-auth", version: "1" }).connect(first);
  throw new Error("connected without authorization");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
}
const approved = await fetch(authorizationUrl, { redirect: "manual" });
const code = new URL(approved.headers.get("location")).searchParams.get("code");
await first.finishAuth(code);

const client = new Client({ name: "ts-auth", version: "1" });
await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
const result = await client.callTool({ name: "echo", arguments: {} });
console.log(JSON.stringify({ text: result.content[0].text, scope: tokens.scope ?? null }));
await client.close();
