// Every failure the facade answers is an HttpError with a named code.
// Route handlers throw these; the server turns them into the one error body shape:
// {"success":false,"code":"...","detail":"...","param":null|"name","validValues"?:[...]}.

/** Every code an error body can carry; the OpenAPI ErrorBody schema lists the same array. */
export const ERROR_CODES = [
  'invalid_parameter',
  'missing_parameter',
  'invalid_cursor',
  'not_found',
  'method_not_allowed',
  'invalid_api_key',
  'missing_api_key',
  'rate_limited',
  'internal_error',
  // what the transport answers before a route runs
  'bad_request',
  'uri_too_long',
  'headers_too_large',
  'http_version_not_supported',
  'payload_too_large',
  'not_ready',
  // what the ingest listener answers (the write path, on its own port)
  'invalid_token',
  'invalid_batch',
  'batch_too_large',
  'unsupported_media_type',
  'log_unavailable',
  // a write sent to a read replica's ingest port
  'read_only',
  // a push-stream handshake past STREAM_MAX_ANONYMOUS_CONNECTIONS for its address (429)
  'too_many_connections',
  // a tick archive route on a service without ARCHIVE_DIR, or while the archive cannot be read (503)
  'archive_unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class HttpError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail: string;
  readonly param: string | null;
  readonly validValues: readonly string[] | undefined;
  /** Per-item problems of a refused batch ({index, code, field, detail}); in the body as "errors" when set. */
  readonly errors: readonly unknown[] | undefined;
  /** Bad items of a refused batch beyond those in `errors` (which lists the first ones); in the body as "errorsOmitted" when above 0. */
  readonly errorsOmitted: number;

  constructor(status: number, code: ErrorCode, detail: string, param: string | null = null, validValues?: readonly string[], errors?: readonly unknown[], errorsOmitted = 0) {
    super(detail);
    this.errors = errors;
    this.errorsOmitted = errorsOmitted;
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.param = param;
    this.validValues = validValues;
  }
}

export function invalidParameter(param: string, detail: string, validValues?: readonly string[]): HttpError {
  return new HttpError(400, 'invalid_parameter', detail, param, validValues);
}

export function missingParameter(param: string, detail = `${param} is required`): HttpError {
  return new HttpError(400, 'missing_parameter', detail, param);
}

export function invalidCursor(detail: string): HttpError {
  return new HttpError(400, 'invalid_cursor', detail, 'cursor');
}

export function notFound(detail: string, param: string | null = null): HttpError {
  return new HttpError(404, 'not_found', detail, param);
}

export function archiveUnavailable(detail: string): HttpError {
  return new HttpError(503, 'archive_unavailable', detail);
}

export function methodNotAllowed(method: string): HttpError {
  return new HttpError(405, 'method_not_allowed', `method ${method.toUpperCase()} is not allowed; use GET, HEAD or OPTIONS`);
}

export function internalError(requestId: string): HttpError {
  return new HttpError(500, 'internal_error', `unexpected error while answering request ${requestId}; it has been logged`);
}

export function errorBody(error: HttpError): Buffer {
  const body: Record<string, unknown> = { success: false, code: error.code, detail: error.detail, param: error.param };
  if (error.validValues !== undefined) body.validValues = error.validValues;
  if (error.errors !== undefined) body.errors = error.errors;
  if (error.errorsOmitted > 0) body.errorsOmitted = error.errorsOmitted;
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

export function statusLine(status: number): string {
  return STATUS_LINE[status] ?? String(status);
}
