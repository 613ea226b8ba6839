// The MCP endpoint on the public port: POST /mcp, the SDK's Streamable HTTP transport in
// its stateless JSON mode (a fresh Server and transport per request, JSON answers, no
// session id). It is mounted as an ordinary POST route of the facade (http/router.ts),
// with no change to http/: a route gets the whole body and answers one JSON document
// later ('pending'), which is all a JSON-mode exchange needs. What the route interface
// cannot carry, and so what this endpoint does not offer: the optional GET stream for
// server-initiated messages (GET answers 405, which the spec allows and the SDK's
// client expects), SSE answers, and the exact statuses 202 (a POST of notifications
// only is answered 200 with an empty body, which the SDK's client accepts) and 4xx on
// a malformed JSON-RPC message (answered as the facade's 400 error body). These tools
// never stream, so nothing is lost for them.
//
// Keys and limits: the route does not count the POST itself (authenticate: false);
// each tool call is an API request made with the caller's key (X-Api-Key or Bearer on
// the POST), counted, limited and refused exactly like that request.
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { HttpError } from '../http/errors.ts';
import type { DocumentResult } from '../http/request.ts';
import { defineRoute, type AnyRoute } from '../http/router.ts';
import { HttpApiClient } from './apiClient.ts';
import type { ToolSet } from './mcpServer.ts';
import { buildTools, maxAnswerBytesFrom } from './tools.ts';
import http from 'node:http';

export const MCP_PATH = '/mcp';
const MAX_BODY = 1024 * 1024;

interface McpSdk {
  Transport: typeof WebStandardStreamableHTTPServerTransport;
  ToolSet: typeof ToolSet;
}

// The MCP SDK (and the Ajv build it brings) is loaded at the first MCP request, not at
// every start: importing it took ~1 s of a start's module loading (bench/start.bench.ts's
// "modules" phase) for a door most deployments never open.
let sdk: Promise<McpSdk> | null = null;
function loadSdk(): Promise<McpSdk> {
  sdk ??= Promise.all([import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), import('./mcpServer.ts')]).then(
    ([transport, server]) => ({ Transport: transport.WebStandardStreamableHTTPServerTransport, ToolSet: server.ToolSet }),
    (error: unknown) => {
      sdk = null;
      throw error;
    },
  );
  return sdk;
}

/** The /mcp route; `publicPort` is read at the first request (the server listens after the routes are built); env: MCP_MAX_ANSWER_BYTES. */
export function mcpRoute(publicPort: () => number, env: NodeJS.ProcessEnv): AnyRoute {
  const maxBytes = maxAnswerBytesFrom(env);
  const base = () => `http://127.0.0.1:${publicPort()}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  // the tools' argument schemas come from the API's own OpenAPI document, read once
  let tools: Promise<ToolSet> | null = null;
  const toolSet = (): Promise<ToolSet> => {
    tools ??= Promise.all([loadSdk(), new HttpApiClient(base, null, agent).get('/api/v1/openapi.json')])
      .then(([{ ToolSet }, reply]) => {
        if (reply.status !== 200) throw new Error(`GET /api/v1/openapi.json answered ${reply.status}`);
        return new ToolSet(buildTools(JSON.parse(reply.body), maxBytes));
      })
      .catch((error: unknown) => {
        tools = null;
        throw error;
      });
    return tools;
  };

  return defineRoute({
    path: MCP_PATH,
    method: 'POST',
    contentTypes: ['application/json'],
    maxBodyBytes: MAX_BODY,
    auth: 'key',
    authenticate: false,
    query: [],
    response: 'McpMessage',
    documented: false,
    handle(req) {
      const body = Promise.all([toolSet(), loadSdk()]).then(async ([set, { Transport }]): Promise<DocumentResult> => {
        const server = set.server(new HttpApiClient(base, req.apiKey, agent));
        const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        try {
          await server.connect(transport);
          const response = await transport.handleRequest(
            new Request(`http://127.0.0.1${MCP_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: req.body!.toString('utf8') }),
          );
          const text = await response.text();
          if (response.status >= 400) throw new HttpError('bad_request', `not a valid MCP message: ${text.slice(0, 500)}`);
          return { kind: 'document', body: Buffer.from(text) };
        } finally {
          await server.close();
        }
      });
      return { kind: 'pending', body };
    },
  });
}
