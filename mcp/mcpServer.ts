// An MCP server (the official TypeScript SDK's Server) over the API tools (tools.ts):
// tools/list gives each tool with its JSON Schema arguments; tools/call checks the
// arguments against that schema (ajv) and answers the API's JSON as text, or the
// API's error body with isError. The low-level Server, not McpServer: McpServer takes
// zod shapes, and these schemas already exist as JSON Schema in the API document; a
// conversion would be a second definition of each parameter.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { ApiClient } from './apiClient.ts';
import type { BuiltTool } from './tools.ts';

export const SERVER_INFO = { name: 'odds-engine', version: '1.0.0' };

const INSTRUCTIONS =
  'Read-only tools over a live sports odds board (sportsbooks and DFS). Lists page with cursor: pass nextCursor back as cursor. ' +
  'Start with snapshot_summary, then get_odds / list_events with filters. Prices: priceAmerican and priceDecimal; edges and arbitrage are screening signals, not guarantees.';

/** The tools with their argument checks compiled once (the HTTP route builds a Server per request from these). */
export class ToolSet {
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly tools: readonly BuiltTool[]) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    for (const tool of tools) this.validators.set(tool.name, ajv.compile(tool.inputSchema));
  }

  /** A Server whose tool calls read through `api` (bound to one caller's key). */
  server(api: ApiClient): Server {
    const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: this.tools.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: { readOnlyHint: true, openWorldHint: false } })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
      const tool = this.tools.find((t) => t.name === request.params.name);
      if (tool === undefined) return errorResult({ code: 'unknown_tool', detail: `no tool ${request.params.name}; tools/list names them` });
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const validate = this.validators.get(tool.name)!;
      if (!validate(args)) {
        const problems = (validate.errors ?? []).map((e) => `${e.instancePath === '' ? 'arguments' : e.instancePath.slice(1)} ${e.message ?? 'is invalid'}${e.params && 'allowedValues' in e.params ? ` (${(e.params.allowedValues as unknown[]).join(', ')})` : ''}`);
        return errorResult({ code: 'invalid_parameter', detail: problems.join('; ') });
      }
      try {
        const answer = await tool.call(api, args);
        return { content: [{ type: 'text', text: answer.text }], isError: answer.isError };
      } catch (error) {
        return errorResult({ code: 'api_unavailable', detail: `the API could not be read: ${error instanceof Error ? error.message : String(error)}` });
      }
    });
    return server;
  }
}

function errorResult(body: { code: string; detail: string }): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify({ success: false, ...body }) }], isError: true };
}
