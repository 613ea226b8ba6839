// Test helpers for the HTTP facade: a real server on an ephemeral port (on the transport
// TRANSPORT names; test/run.ts runs every HTTP test file on uWS and on node:http), a raw
// node:http client (no transparent decompression, so variants are visible), and an
// ajv validator compiled from the OpenAPI document the server itself serves.
import http, { type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { unpack } from 'msgpackr';
import { createServer, type RunningServer, type ServerOptions } from '../../http/server.ts';
import { OPENAPI_PATH, openApiPath } from '../../http/openapi.ts';

export interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  /** Raw bytes as sent (still gzip-compressed if Content-Encoding says so). */
  body: Buffer;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
}

export function httpRequest(port: number, path: string, options: RequestOptions = {}): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The decoded body: gunzipped if needed, then MessagePack or JSON by Content-Type. */
export function decodeBody(reply: HttpReply): unknown {
  const bytes = reply.headers['content-encoding'] === 'gzip' ? gunzipSync(reply.body) : reply.body;
  if (String(reply.headers['content-type']).startsWith('application/msgpack')) return unpack(bytes);
  return JSON.parse(bytes.toString('utf8'));
}

export interface ApiValidator {
  /**
   * Asserts the reply matches the served OpenAPI document for the route template
   * (e.g. '/api/v1/events/:eventId/odds'): 200 bodies against the route's schema for
   * its content type, errors against Error, 304 and HEAD without a body.
   * Returns the decoded body (undefined when there is none).
   */
  check(routePath: string, reply: HttpReply, method?: string): unknown;
}

export async function loadValidator(port: number): Promise<ApiValidator> {
  const reply = await httpRequest(port, OPENAPI_PATH);
  assert.equal(reply.status, 200, 'openapi.json must be served');
  const doc = JSON.parse(reply.body.toString('utf8')) as { paths: Record<string, { get: { responses: Record<string, unknown> } }> };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => Number.isFinite(Date.parse(text)) });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addSchema(doc, 'openapi');
  const schemaAt = (pointer: string) => {
    const validate = ajv.getSchema(`openapi#${pointer}`);
    assert.ok(validate, `no schema at ${pointer}`);
    return validate;
  };
  return {
    check(routePath, received, method = 'GET') {
      if (received.status === 304 || method === 'HEAD') {
        assert.equal(received.body.length, 0, `${received.status} ${method} must have no body`);
        return undefined;
      }
      const body = decodeBody(received);
      let pointer: string;
      if (received.status === 200) {
        const template = openApiPath(routePath);
        const operation = doc.paths[template]?.get;
        assert.ok(operation, `the document has no GET ${template}`);
        const contentType = String(received.headers['content-type']).split(';')[0]!;
        pointer = `/paths/${escapePointer(template)}/get/responses/200/content/${escapePointer(contentType)}/schema`;
      } else {
        pointer = '/components/schemas/Error';
      }
      const validate = schemaAt(pointer);
      if (!validate(body)) assert.fail(`body does not match ${pointer}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
      return body;
    },
  };
}

function escapePointer(segment: string): string {
  return encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'));
}

export interface TestServer {
  server: RunningServer;
  port: number;
  api: ApiValidator;
  /** GET (or options.method) and validate against the route template. */
  call(routePath: string, path: string, options?: RequestOptions): Promise<{ reply: HttpReply; body: any }>;
  close(): Promise<void>;
}

export async function startTestServer(options: Omit<ServerOptions, 'host' | 'port'>): Promise<TestServer> {
  const server = await createServer({ ...options, host: '127.0.0.1', port: 0 });
  const api = await loadValidator(server.port);
  return {
    server,
    port: server.port,
    api,
    async call(routePath, path, requestOptions = {}) {
      const reply = await httpRequest(server.port, path, requestOptions);
      const body = api.check(routePath, reply, requestOptions.method ?? 'GET');
      return { reply, body };
    },
    close: () => server.close(),
  };
}
