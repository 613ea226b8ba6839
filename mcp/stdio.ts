// The MCP server over stdio, for agents that start their tools as a child process
// (Claude Desktop, IDEs): `npm run mcp`, reading the API of a running service at
// MCP_API_URL (default http://127.0.0.1:8080) with the key in MCP_API_KEY (optional
// while the service does not require keys). The same tools as POST /mcp on the public
// port; each call is an API request with that key. Nothing but MCP goes to stdout.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { HttpApiClient } from './apiClient.ts';
import { ToolSet } from './mcpServer.ts';
import { buildTools, maxAnswerBytesFrom } from './tools.ts';

const base = process.env.MCP_API_URL || 'http://127.0.0.1:8080';
const key = process.env.MCP_API_KEY || null;

async function main(): Promise<void> {
  try {
    new URL(base);
  } catch {
    throw new Error('ODDS_API_URL must be an absolute URL such as http://127.0.0.1:8080');
  }
  const api = new HttpApiClient(() => base, key);
  const document = await api.get('/api/v1/openapi.json');
  if (document.status !== 200) throw new Error(`${base}/api/v1/openapi.json answered ${document.status}; is the service running there?`);
  const server = new ToolSet(buildTools(JSON.parse(document.body), maxAnswerBytesFrom(process.env))).server(api);
  await server.connect(new StdioServerTransport());
}

main().catch((error: unknown) => {
  process.stderr.write(`odds-engine MCP server: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
