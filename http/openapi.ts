// The OpenAPI 3.1 document (served at /api/v1/openapi.json), generated from the route table: every
// path, its query parameters with the constraints the validator enforces, its
// response schema by component name, and the error responses it can give.
import { COMPONENT_SCHEMAS } from './openapiSchemas.ts';
import { constraintSentence, paramSchema, type ParamDef } from './schemas.ts';
import type { AnyRoute } from './router.ts';
import type { DocumentResult } from './request.ts';
import { BASE_URL, curlExample } from './routes/routeDocs.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

const INFO_DESCRIPTION = [
  'Read-only sportsbook and DFS odds service. This document is the contract: every route, parameter, record and error.',
  'Every path answers GET and HEAD (HEAD: same headers, no body); OPTIONS answers a 204 CORS preflight; other methods 405 method_not_allowed with Allow: GET, HEAD, OPTIONS.',
  'Every response carries Access-Control-Allow-Origin: * and exposes ETag, X-RateLimit-*, Retry-After and X-Board-Seq.',
  'Every data response (200 and 304) carries X-Board-Seq, the board sequence it reflects. A writer and its read replicas serve the same bytes and ETags at the same X-Board-Seq, so a client behind a load balancer keeps its ETags, cursors and stream position when it lands on another node; a client that must not see the board go back waits for an X-Board-Seq at least the last one it saw.',
  'JSON is application/json; charset=utf-8. Accept: application/msgpack returns the same envelope as MessagePack (ETag suffix -mp); Accept-Encoding: gzip compresses bodies over 1 KiB (ETag suffix -gz). Error bodies are always JSON.',
  'ETags are strong and change exactly when the body bytes change; a matching If-None-Match answers 304 without a body.',
  'Query parameters: unknown names are ignored and listed in meta.warnings; a repeated parameter: the last one wins; an empty value counts as absent; + decodes to a space.',
  'Booleans accept true/false/1/0 (case-insensitive). Instants accept ISO-8601 (a date-time without zone is UTC) or epoch milliseconds.',
  'Push: GET /api/v1/stream (WebSocket) and GET /api/v1/stream/sse (Server-Sent Events) deliver an image of the filtered rows and then deltas, each with a board clock token for gap checking and resume (also across restarts); the messages are described in the AsyncAPI 3.0 document at /api/v1/asyncapi.json.',
  'Times: row updated and meta.updated are ISO-8601 UTC with milliseconds; odds eventStartTime is minute precision without zone; event startTime minute precision with Z.',
].join('\n\n');

export function buildOpenApi(routes: readonly AnyRoute[], extraSchemas: Record<string, unknown> = {}): Record<string, unknown> {
  const schemas: Record<string, unknown> = { ...COMPONENT_SCHEMAS, ...extraSchemas };
  const paths: Record<string, unknown> = {};
  for (const route of routes) {
    if (route.documented === false) continue;
    if (!(route.response in schemas)) throw new Error(`route ${route.path}: unknown response schema ${route.response}`);
    paths[openApiPath(route.path)] = { get: operationOf(route) };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Sports odds data service', version: '1.0.0', description: INFO_DESCRIPTION },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas,
      responses: ERROR_RESPONSES,
      headers: HEADERS,
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        BearerKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>, same key as X-Api-Key.' },
      },
    },
  };
}

/** '/api/v1/events/:eventId/odds' -> '/api/v1/events/{eventId}/odds' */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operationOf(route: AnyRoute): Record<string, unknown> {
  const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string', minLength: 1 },
  }));
  const responses: Record<string, unknown> = {
    '200': successResponse(route),
    '304': { description: 'If-None-Match matched the current ETag: no body.', headers: { ETag: { $ref: '#/components/headers/ETag' }, 'X-Board-Seq': { $ref: '#/components/headers/X-Board-Seq' } } },
  };
  // Every operation can get a malformed request (400 bad_request), a method other than
  // GET/HEAD/OPTIONS on its path (405), an oversized target or head (414, 431) or a
  // version other than HTTP/1.x (505): the transport answers these before any route.
  responses['400'] = { $ref: route.query.length > 0 ? '#/components/responses/BadRequest' : '#/components/responses/MalformedRequest' };
  const authenticated = route.authenticate !== false;
  if (authenticated) responses['401'] = { $ref: '#/components/responses/Unauthorized' };
  if (pathParams.length > 0 || route.notFoundParam !== undefined) responses['404'] = { $ref: '#/components/responses/NotFound' };
  responses['405'] = { $ref: '#/components/responses/MethodNotAllowed' };
  responses['414'] = { $ref: '#/components/responses/UriTooLong' };
  if (authenticated) responses['429'] = { $ref: '#/components/responses/RateLimited' };
  responses['431'] = { $ref: '#/components/responses/HeadersTooLarge' };
  responses['500'] = { $ref: '#/components/responses/InternalError' };
  responses['505'] = { $ref: '#/components/responses/HttpVersionNotSupported' };
  return {
    operationId: operationIdOf(route.path),
    summary: route.summary ?? route.path,
    ...(route.description !== undefined && { description: route.description }),
    'x-auth-designation': route.auth,
    security: route.auth === 'key' ? [{ ApiKeyHeader: [] }, { BearerKey: [] }, {}] : [{}],
    parameters: [
      ...pathParams,
      ...route.query.map(queryParameter),
      { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'A prior ETag: 304 when unchanged.' },
    ],
    responses,
  };
}

function successResponse(route: AnyRoute): Record<string, unknown> {
  const ref = { $ref: `#/components/schemas/${route.response}` };
  const kind = route.responseKind ?? 'envelope';
  const headers = { ETag: { $ref: '#/components/headers/ETag' }, 'X-Board-Seq': { $ref: '#/components/headers/X-Board-Seq' } };
  if (kind === 'event-stream') {
    return { description: 'Server-Sent Events, one message per event (data: the message as JSON).', headers: { 'X-Board-Seq': headers['X-Board-Seq'] }, content: { 'text/event-stream': { schema: ref } } };
  }
  if (kind === 'parquet') {
    return { description: 'A Parquet file (zstd), streamed; its columns are the schema named here.', headers: { 'X-Board-Seq': headers['X-Board-Seq'] }, content: { 'application/vnd.apache.parquet': { schema: { type: 'string', format: 'binary', description: `Columns: see #/components/schemas/${route.response}` } } } };
  }
  if (kind === 'gzip-json') {
    return { description: 'JSON body, always Content-Encoding: gzip.', headers, content: { 'application/json': { schema: ref } } };
  }
  const schema =
    kind === 'document'
      ? ref
      : { allOf: [{ $ref: '#/components/schemas/Envelope' }], properties: { data: { type: 'array', items: ref } } };
  return { description: 'OK', headers, content: { 'application/json': { schema }, 'application/msgpack': { schema } } };
}

function queryParameter(def: ParamDef): Record<string, unknown> {
  const description = [def.description, `${constraintSentence(def)}.`].filter((part) => part !== undefined).join(' ');
  return {
    name: def.name,
    in: 'query',
    required: def.required === true,
    description,
    schema: paramSchema(def, true),
    ...(def.kind === 'list' && { style: 'form', explode: false }),
  };
}

function operationIdOf(path: string): string {
  return path
    .replace(/^\/api\/v1\/?/, '')
    .split('/')
    .map((segment, i) => {
      const word = segment.startsWith(':') ? `by_${segment.slice(1)}` : segment.replace(/[^A-Za-z0-9]+/g, '_');
      return i === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1);
    })
    .join('') || 'root';
}

const errorResponse = (description: string): Record<string, unknown> => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const ERROR_RESPONSES = {
  BadRequest: errorResponse('invalid_parameter (with validValues for enums), missing_parameter or invalid_cursor; bad_request for a malformed request (the connection is then closed).'),
  MalformedRequest: errorResponse('bad_request: a malformed request (request line, header syntax, framing, or HTTP/1.1 without exactly one Host); the connection is then closed.'),
  MethodNotAllowed: {
    ...errorResponse('method_not_allowed: a method other than GET, HEAD and OPTIONS on this path (any method token, including extension methods such as PROPFIND or QUERY).'),
    headers: { Allow: { description: 'The methods the path answers: GET, HEAD, OPTIONS.', schema: { type: 'string', const: 'GET, HEAD, OPTIONS' } } },
  },
  UriTooLong: errorResponse('uri_too_long: the request target (path and query) is longer than 8 KiB; the connection is then closed.'),
  HeadersTooLarge: errorResponse('headers_too_large: more than 100 request headers, or a request head larger than 16 KiB; the connection is then closed.'),
  HttpVersionNotSupported: errorResponse('http_version_not_supported: a request line naming HTTP/2 or later in text (HTTP/1.0 and HTTP/1.1 are served); the connection is then closed.'),
  Unauthorized: errorResponse('invalid_api_key: a key was sent but is unknown or revoked; missing_api_key: REQUIRE_KEY=1 and a key-designated endpoint got none.'),
  NotFound: errorResponse('not_found: unknown id in the path (or unknown path).'),
  RateLimited: { ...errorResponse('rate_limited, only with RATE_LIMIT_ENFORCE=1; Retry-After gives seconds.'), headers: { 'Retry-After': { schema: { type: 'integer' } } } },
  InternalError: errorResponse('internal_error: logged with the request id given in detail and X-Request-Id; the service keeps serving.'),
};

const HEADERS = {
  ETag: { description: 'Strong ETag of this representation.', schema: { type: 'string' } },
  'X-Board-Seq': {
    description:
      'The board sequence the answer reflects (the seq an ingest acknowledgement reports): the version of a snapshot, else the board as it was when the answer was written. Every node of a replicated deployment (the writer and its read replicas) serves byte-identical bodies and ETags at the same X-Board-Seq.',
    schema: { type: 'integer', minimum: 0 },
  },
};

/** The route serving the document itself; built at start-up (an unknown response schema fails fast). */
export function openApiRoute(routes: readonly AnyRoute[], extraSchemas?: Record<string, unknown>): AnyRoute {
  let body: Buffer = Buffer.alloc(0);
  const self: AnyRoute = {
    path: OPENAPI_PATH,
    auth: 'none',
    query: [],
    response: 'OpenApiDocument',
    responseKind: 'document',
    summary: 'This OpenAPI 3.1 document (version 1.0.0).',
    description:
      'The contract of every route, parameter, record and error; /docs renders it. No key needed. Built once at start-up, so its ETag holds for the life of the process.' +
      curlExample(`curl -s '${BASE_URL}/api/v1/openapi.json' | jq '.paths | keys'`),
    cache: { validity: () => 0, capacity: 4 },
    handle(): DocumentResult {
      return { kind: 'document', body };
    },
  };
  body = Buffer.from(JSON.stringify(buildOpenApi([...routes, self], extraSchemas)));
  return self;
}
