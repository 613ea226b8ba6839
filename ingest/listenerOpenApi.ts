// The ingest listener's own OpenAPI document (GET /ingest/v1/openapi.json on the ingest
// port). The public document (/api/v1/openapi.json) describes the read API only; feeds
// read this one. The change shapes are the JSON Schemas the validator compiles
// (changes.ts), so the document cannot drift from what is checked.

import { CHANGE_OPS, CHANGE_SCHEMAS } from './changes.ts';

export function ingestOpenApi(maxBatchBytes: number): Record<string, unknown> {
  const changeSchemas: Record<string, unknown> = {};
  for (const op of CHANGE_OPS) changeSchemas[`Change_${op}`] = { type: 'object', additionalProperties: false, ...CHANGE_SCHEMAS[op], required: ['op', ...(CHANGE_SCHEMAS[op] as { required: string[] }).required] };
  const error = {
    type: 'object',
    required: ['success', 'code', 'detail'],
    properties: {
      success: { const: false },
      code: { enum: ['invalid_batch', 'invalid_token', 'batch_too_large', 'unsupported_media_type', 'log_unavailable', 'not_ready'] },
      detail: { type: 'string' },
      param: { type: ['string', 'null'] },
      errors: { type: 'array', description: 'The errors of the first 100 bad changes of a refused batch (in index order)', items: { $ref: '#/components/schemas/ChangeError' } },
      errorsOmitted: { type: 'integer', minimum: 1, description: 'Bad changes beyond the first 100 (present only when there are more)' },
    },
  };
  const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/IngestError' } } } });
  return {
    openapi: '3.1.0',
    info: { title: 'odds-engine ingest', version: '1', description: 'The write path: feeds push normalized changes in batches; each batch is atomic and acknowledged once it is durable (fsync of the write-ahead log).' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'INGEST_TOKEN, or the token in DATA_DIR/ingest-token' } },
      schemas: {
        ...changeSchemas,
        Change: { oneOf: CHANGE_OPS.map((op) => ({ $ref: `#/components/schemas/Change_${op}` })) },
        Batch: { type: 'array', items: { $ref: '#/components/schemas/Change' } },
        IngestAck: { type: 'object', required: ['success', 'seq', 'applied'], properties: { success: { const: true }, seq: { type: 'integer', description: 'The board seq after the batch' }, applied: { type: 'integer' } } },
        ChangeError: { type: 'object', required: ['index', 'code', 'field', 'detail'], properties: { index: { type: 'integer' }, code: { type: 'string' }, field: { type: ['string', 'null'] }, detail: { type: 'string' } } },
        IngestError: error,
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/ingest/v1/batches': {
        post: {
          summary: 'Submit one batch',
          description: `One batch: NDJSON (one change per line) or msgpack (an array of changes), at most ${maxBatchBytes} bytes. Answered once durable.`,
          requestBody: {
            required: true,
            content: {
              'application/x-ndjson': { schema: { type: 'string', description: 'one Change as JSON per line' } },
              'application/msgpack': { schema: { $ref: '#/components/schemas/Batch' } },
            },
          },
          responses: {
            200: { description: 'Durable and applied', content: { 'application/json': { schema: { $ref: '#/components/schemas/IngestAck' } } } },
            400: errorResponse('invalid_batch: nothing applied; errors names the first 100 bad changes, errorsOmitted counts the rest'),
            401: errorResponse('invalid_token'),
            413: errorResponse('batch_too_large'),
            415: errorResponse('unsupported_media_type'),
            503: errorResponse('log_unavailable: nothing acknowledged, nothing applied; not_ready: the board is still loading or the process is shutting down, retry later'),
          },
        },
      },
      '/ingest/v1/ws': {
        get: {
          summary: 'WebSocket: one batch per message',
          description:
            'Binary messages are msgpack batches, text messages NDJSON batches. Each is answered, in order, with {"ack": i, "seq", "applied"} or {"nack": i, "code", "detail", "errors"} (i counts the connection\'s messages from 0).',
          responses: { 101: { description: 'Switching protocols' }, 401: errorResponse('invalid_token') },
        },
      },
    },
  };
}
