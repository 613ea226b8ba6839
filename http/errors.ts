// Every failure the facade answers is an HttpError with a named code.
// Route handlers throw these; the server turns them into the one error body shape:
// {"success":false,"code":"...","detail":"...","param":null|"name","validValues"?:[...]}.

/**
 * Every code an error body can carry, with the HTTP status it answers with and what it means:
 * the one place a code meets its status (call sites name the code only, as fastify's
 * lib/errors.js keeps code, message and status together). The OpenAPI ErrorBody schema lists
 * the codes in this order.
 */
export const ERRORS = {
  invalid_parameter: { status: 400, means: 'a query parameter is malformed or out of range' },
  missing_parameter: { status: 400, means: 'a required query parameter is absent' },
  invalid_cursor: { status: 400, means: 'the cursor is not one this server issued for this query' },
  not_found: { status: 404, means: 'no such route or resource' },
  method_not_allowed: { status: 405, means: 'the route does not answer this method (the Allow header lists those it does)' },
  invalid_api_key: { status: 401, means: 'the API key is unknown or revoked' },
  missing_api_key: { status: 401, means: 'the route needs an API key and none was sent' },
  rate_limited: { status: 429, means: "the key's usage window is exhausted (Retry-After says when to retry)" },
  internal_error: { status: 500, means: 'an unexpected failure, logged with the request id' },
  // what the transport answers before a route runs
  bad_request: { status: 400, means: 'the request could not be parsed' },
  uri_too_long: { status: 414, means: 'the request target is too long' },
  headers_too_large: { status: 431, means: 'the header fields are too large' },
  http_version_not_supported: { status: 505, means: 'only HTTP/1.1 and HTTP/1.0 are served' },
  payload_too_large: { status: 413, means: "the request body is over the route's cap" },
  not_ready: { status: 503, means: 'the service (or the part asked for) is not ready yet' },
  // what the ingest listener answers (the write path, on its own port)
  invalid_token: { status: 401, means: 'the ingest bearer token is missing or wrong' },
  invalid_batch: { status: 400, means: 'a change of the batch is invalid; nothing of it was applied' },
  batch_too_large: { status: 413, means: 'the batch is over INGEST_MAX_BATCH_BYTES' },
  unsupported_media_type: { status: 415, means: "the Content-Type is not one the route reads" },
  log_unavailable: { status: 503, means: 'the batch was not written to the log; nothing of it was applied' },
  // a write sent to a read replica's ingest port
  read_only: { status: 403, means: 'this node is a read replica and takes no writes' },
  // a push-stream handshake past STREAM_MAX_ANONYMOUS_CONNECTIONS for its address
  too_many_connections: { status: 429, means: 'too many push-stream connections without a key from this address' },
  // a tick archive route on a service without ARCHIVE_DIR, or while the archive cannot be read
  archive_unavailable: { status: 503, means: 'the tick archive is not configured (ARCHIVE_DIR) or cannot be read now' },
} as const satisfies Record<string, { status: number; means: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** Every code, in the table's order (the OpenAPI ErrorBody enum). */
export const ERROR_CODES = Object.keys(ERRORS) as readonly ErrorCode[];

export class HttpError extends Error {
  /** ERRORS[code].status. */
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail: string;
  readonly param: string | null;
  readonly validValues: readonly string[] | undefined;
  /** Per-item problems of a refused batch ({index, code, field, detail}); in the body as "errors" when set. */
  readonly errors: readonly unknown[] | undefined;
  /** Bad items of a refused batch beyond those in `errors` (which lists the first ones); in the body as "errorsOmitted" when above 0. */
  readonly errorsOmitted: number;
  /** More fields for the body, after the standard ones (a not_ready answer's checks and their figures). */
  extra: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, detail: string, param: string | null = null, validValues?: readonly string[], errors?: readonly unknown[], errorsOmitted = 0) {
    super(detail);
    this.errors = errors;
    this.errorsOmitted = errorsOmitted;
    this.name = 'HttpError';
    this.status = ERRORS[code].status;
    this.code = code;
    this.detail = detail;
    this.param = param;
    this.validValues = validValues;
  }

  /** Adds `fields` to the body (never replacing a standard field). */
  with(fields: Record<string, unknown>): this {
    this.extra = { ...this.extra, ...fields };
    return this;
  }
}

export function invalidParameter(param: string, detail: string, validValues?: readonly string[]): HttpError {
  return new HttpError('invalid_parameter', detail, param, validValues);
}

export function missingParameter(param: string, detail = `${param} is required`): HttpError {
  return new HttpError('missing_parameter', detail, param);
}

export function invalidCursor(detail: string): HttpError {
  return new HttpError('invalid_cursor', detail, 'cursor');
}

export function notFound(detail: string, param: string | null = null): HttpError {
  return new HttpError('not_found', detail, param);
}

export function archiveUnavailable(detail: string): HttpError {
  return new HttpError('archive_unavailable', detail);
}

/** `allowed`: the methods the route answers, as the detail names them. */
export function methodNotAllowed(method: string, allowed = 'GET, HEAD or OPTIONS'): HttpError {
  return new HttpError('method_not_allowed', `method ${method.toUpperCase()} is not allowed; use ${allowed}`);
}

export function internalError(requestId: string): HttpError {
  return new HttpError('internal_error', `unexpected error while answering request ${requestId}; it has been logged`);
}

export function errorBody(error: HttpError): Buffer {
  const body: Record<string, unknown> = { success: false, code: error.code, detail: error.detail, param: error.param };
  if (error.validValues !== undefined) body.validValues = error.validValues;
  if (error.errors !== undefined) body.errors = error.errors;
  if (error.errorsOmitted > 0) body.errorsOmitted = error.errorsOmitted;
  if (error.extra !== undefined) for (const [key, value] of Object.entries(error.extra)) if (!(key in body)) body[key] = value;
  return Buffer.from(JSON.stringify(body));
}

/** Status lines uWS writes verbatim. */
export const STATUS_LINE: Readonly<Record<number, string>> = {
  200: '200 OK',
  204: '204 No Content',
  304: '304 Not Modified',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};
