// The tick archive's routes (docs/archive.md): a selection's or a market's full price
// history, opening and closing lines with the no-vig close, closing-line value, and a
// day's Parquet export. Every query runs in DuckDB on its own threads; the handler
// answers 'pending' and the envelope is written when the rows come back. Without
// ARCHIVE_DIR every route answers 503 archive_unavailable.
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEVIG_METHODS, type DevigMethod } from '../../engine/signals/devig.ts';
import { closingLines, clvOf, marketGroupOf, pointAt, pricePaths, type ClosingSelection, type PricePoint } from '../../engine/signals/tickHistory.ts';
import { americanToDecimal } from '../../engine/model.ts';
import { isoMillis } from '../../engine/timeFormat.ts';
import { isDay } from '../../persistence/archive/archiveFiles.ts';
import type { ArchiveRow } from '../../persistence/archive/archiveSchema.ts';
import type { ArchiveRows, TickArchive } from '../../persistence/archive/tickArchive.ts';
import { fingerprintOf } from '../cursor.ts';
import { archiveUnavailable, invalidCursor, invalidParameter, notFound } from '../errors.ts';
import type { DataResult, RouteResult, StreamResult } from '../request.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import { COMMON_PARAMS, type ParamDef } from '../schemas.ts';
import { BASE_URL, CURSOR_RULES, curlExample, KEY_HEADER, KEY_RULES, PARAMETER_ERRORS } from './routeDocs.ts';
import type { Services } from './services.ts';

const TICKS_PATH = '/api/v1/history/ticks';
const MARKET_PATH = '/api/v1/history/market';
const CLOSING_PATH = '/api/v1/history/closing';
const CLV_PATH = '/api/v1/history/clv';
const EXPORT_PATH = '/api/v1/history/export';

const ODDS_ID = {
  name: 'id',
  kind: 'string',
  required: true,
  maxLength: 400,
  pattern: '^[^:]+:[^:]+:[^:]+:[^:]+$',
  patternText: 'an odds id: {eventId}:{sportsbook}:{marketSubtype}:{selectionId}, four non-empty parts',
  description: 'Required: an odds id ({eventId}:{sportsbook}:{marketSubtype}:{selectionId}). Missing: 400 missing_parameter; not four parts: 400 invalid_parameter.',
} as const satisfies ParamDef;
const FROM = { name: 'from', kind: 'instant', description: 'Start of the range (ISO-8601 or epoch ms), inclusive; default: the oldest archived change.' } as const satisfies ParamDef;
const TO = { name: 'to', kind: 'instant', description: 'End of the range (ISO-8601 or epoch ms), inclusive; default now. Before from: 400 invalid_parameter.' } as const satisfies ParamDef;
const EVENT = { name: 'event_id', kind: 'string', required: true, maxLength: 200, description: 'Required: the event.' } as const satisfies ParamDef;
const MARKET_SUBTYPE = { name: 'market_subtype', kind: 'string', required: true, maxLength: 200, description: 'Required: the market subtype (the third part of an odds id, e.g. TOTAL).' } as const satisfies ParamDef;
const BOOKS = { name: 'sportsbook', kind: 'list', case: 'lower', maxItems: 50, description: 'Comma-separated sportsbook ids, any-of; omitted: every book.' } as const satisfies ParamDef;
const DEVIG = {
  name: 'devig',
  kind: 'enum',
  values: DEVIG_METHODS,
  default: 'multiplicative',
  description: 'How the closing vig is removed: multiplicative (default), additive, power, shin or worst. Another value: 400 invalid_parameter with validValues.',
} as const satisfies ParamDef;

const TICKS_QUERY = [ODDS_ID, FROM, TO, COMMON_PARAMS.cursor, COMMON_PARAMS.limit] as const;
const MARKET_QUERY = [EVENT, MARKET_SUBTYPE, BOOKS, FROM, TO, COMMON_PARAMS.cursor, COMMON_PARAMS.limit] as const;
const CLOSING_QUERY = [EVENT, MARKET_SUBTYPE, BOOKS, DEVIG] as const;
const CLV_QUERY = [
  ODDS_ID,
  { name: 'taken_at', kind: 'instant', description: 'When the price was taken (ISO-8601 or epoch ms); default now. The price in force then is the taken price unless price is given.' },
  { name: 'price', kind: 'integer', minimum: -1_000_000, maximum: 1_000_000, description: 'The American price taken (at most 1000000 in size, not between -100 and 100); default: the price in force at taken_at.' },
  { name: 'closing_book', kind: 'string', maxLength: 100, description: "The book whose close is the reference (a sharp book such as pinnacle); default: the id's own book." },
  DEVIG,
] as const satisfies readonly ParamDef[];
const EXPORT_QUERY = [
  { name: 'day', kind: 'string', required: true, maxLength: 10, pattern: '^\\d{4}-\\d{2}-\\d{2}$', patternText: 'a UTC day, YYYY-MM-DD', description: 'Required: the UTC day, YYYY-MM-DD.' },
  { name: 'league', kind: 'string', maxLength: 100, description: "Only this league's rows (e.g. nfl); default: every league." },
] as const satisfies readonly ParamDef[];

const ARCHIVE_RULES = 'Needs the tick archive (ARCHIVE_DIR); without it: 503 archive_unavailable. The changes acknowledged but not yet written to the archive (at most ARCHIVE_INTERVAL_MS old) are included; meta.note says when the archive is behind the log after a failure and the newest changes may be missing.';

/** The wire form of a price point. */
function pointJson(point: PricePoint): Record<string, unknown> {
  return {
    seq: point.seq,
    pos: point.pos,
    time: isoMillis(point.time),
    kind: point.kind,
    id: point.id,
    sportsbook: point.book,
    selectionId: point.selectionId,
    priceAmerican: point.priceAmerican,
    priceDecimal: point.priceAmerican === null ? null : americanToDecimal(point.priceAmerican),
    dfsMultiplier: point.dfsMultiplier,
    suspended: point.suspended,
    line: point.line,
    removed: point.removed,
  };
}

function closingJson(row: ClosingSelection): Record<string, unknown> {
  return {
    id: row.id,
    sportsbook: row.book,
    selectionId: row.selectionId,
    marketGroup: marketGroupOf(row.selectionId),
    opening: row.opening === null ? null : pointJson(row.opening),
    closing: row.closing === null ? null : pointJson(row.closing),
    noVigProbability: row.noVigProbability,
    noVigDecimal: row.noVigProbability === null ? null : 1 / row.noVigProbability,
  };
}

type SeqKey = [number, number];
const isSeqKey = (key: unknown): key is SeqKey => Array.isArray(key) && key.length === 2 && Number.isInteger(key[0]) && Number.isInteger(key[1]);

function note(rows: ArchiveRows<unknown>): string | null {
  return rows.complete ? null : `the archive is behind the log after a failure (archived through record ${rows.archivedThrough}); the newest changes may be missing until it catches up`;
}

export function historyRoutes(ctx: Services): AnyRoute[] {
  const { engine, cursors } = ctx;
  const archiveOf = (): TickArchive => {
    if (ctx.archive === null) throw archiveUnavailable('the tick archive is not enabled on this service (set ARCHIVE_DIR)');
    return ctx.archive;
  };
  const pending = (work: () => Promise<DataResult>): RouteResult => ({ kind: 'pending', body: work() });

  /** A page of points in [from, to] after the cursor's key. */
  const page = (path: string, filters: Record<string, unknown>, points: PricePoint[], from: number, to: number, cursor: string | undefined, limit: number, rows: ArchiveRows<unknown>): DataResult => {
    const fingerprint = fingerprintOf(path, filters);
    let after: SeqKey | null = null;
    if (cursor !== undefined) {
      const key = cursors.decode(cursor, fingerprint).key;
      if (!isSeqKey(key)) throw invalidCursor('cursor is not a cursor issued by this service');
      after = key;
    }
    const inRange = points.filter((p) => p.time >= from && p.time <= to && (after === null || p.seq > after[0] || (p.seq === after[0] && p.pos > after[1])));
    const items = inRange.slice(0, limit);
    const last = items[items.length - 1];
    const nextCursor = inRange.length > limit && last !== undefined ? cursors.encode({ key: [last.seq, last.pos], fingerprint }) : null;
    return { kind: 'data', data: items.map(pointJson), nextCursor, updated: last?.time ?? to, note: note(rows) };
  };

  const range = (q: { from?: number; to?: number }, now: number): { from: number; to: number } => {
    const to = q.to ?? now;
    const from = q.from ?? 0;
    if (from > to) throw invalidParameter('from', 'from must be at or before to');
    return { from, to };
  };

  const ticks = defineRoute({
    path: TICKS_PATH,
    auth: 'key',
    response: 'ArchivePricePoint',
    query: TICKS_QUERY,
    summary: "One selection's full price history at one book over a time range, from the tick archive.",
    description:
      'Every change of the odds row id between from and to, oldest first: each point is the row as it stood after the change (a tick that only toggles suspension keeps the price before it). seq and pos are the write-ahead log record and the change\'s place in it. Paged with a keyset cursor on (seq, pos) bound to the filters. ' +
      `${ARCHIVE_RULES} ${CURSOR_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`ID=$(curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/odds?market=total&limit=1' | jq -r '.data[0].id')`, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/history/ticks?id=$ID&limit=100"`),
    handle: (req) => {
      const archive = archiveOf();
      const q = req.query;
      const { from, to } = range(q, req.now);
      return pending(async () => {
        const rows = await archive.rowsOfIds([q.id], to);
        return page(TICKS_PATH, { id: q.id, from, to }, pricePaths(rows.rows), from, to, q.cursor, q.limit, rows);
      });
    },
  });

  const market = defineRoute({
    path: MARKET_PATH,
    auth: 'key',
    response: 'ArchivePricePoint',
    query: MARKET_QUERY,
    summary: "A market's full price history across books (every selection of an event's market subtype), from the tick archive.",
    description:
      'Every change of every row of the event\'s market subtype (optionally only some books) between from and to, in log order (seq, pos), each point the row as it stood after the change. Paged with a keyset cursor on (seq, pos) bound to the filters. ' +
      `${ARCHIVE_RULES} ${CURSOR_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`EVENT=$(curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/odds?market=total&limit=1' | jq -r '.data[0].eventId')`, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/history/market?event_id=$EVENT&market_subtype=TOTAL&sportsbook=pinnacle,draftkings"`),
    handle: (req) => {
      const archive = archiveOf();
      const q = req.query;
      const { from, to } = range(q, req.now);
      const books = q.sportsbook === undefined || q.sportsbook.length === 0 ? null : new Set(q.sportsbook);
      return pending(async () => {
        const rows = await archive.rowsOfMarket(q.event_id, q.market_subtype, to);
        const points = pricePaths(books === null ? rows.rows : rows.rows.filter((row) => row.book !== null && books.has(row.book)));
        return page(MARKET_PATH, { event_id: q.event_id, market_subtype: q.market_subtype, sportsbook: q.sportsbook, from, to }, points, from, to, q.cursor, q.limit, rows);
      });
    },
  });

  /** The event's start: the board's, else the last one the archive saw. */
  const startOf = (eventId: string, rows: readonly ArchiveRow[]): number => {
    const event = engine.event(eventId);
    if (event !== undefined) return event.startTime;
    for (let i = rows.length - 1; i >= 0; i--) if (rows[i].event_start_ms !== null) return rows[i].event_start_ms!;
    throw notFound(`no event ${eventId} on the board or in the archive`, 'event_id');
  };

  const closing = defineRoute({
    path: CLOSING_PATH,
    auth: 'key',
    response: 'ClosingLine',
    query: CLOSING_QUERY,
    summary: 'Opening and closing price per selection and book of a market, with the no-vig closing line.',
    description:
      "Per odds row of the event's market subtype: opening (the first price the archive holds), closing (the price in force just before the event's start: the last change strictly before it; null when the row was removed or unpriced then), and the no-vig closing probability: the closing prices of the row's market group at its book (the same selection id without its side, e.g. OVER/UNDER of one line) devigged with devig, when the group has 2 or 3 outcomes all priced at the close. Rows by sportsbook, then selection id; not paginated. " +
      `${ARCHIVE_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`EVENT=$(curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/odds?market=moneyline&limit=1' | jq -r '.data[0].eventId')`, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/history/closing?event_id=$EVENT&market_subtype=MONEYLINE&devig=power"`),
    handle: (req) => {
      const archive = archiveOf();
      const q = req.query;
      const books = q.sportsbook === undefined || q.sportsbook.length === 0 ? null : new Set(q.sportsbook);
      return pending(async () => {
        const start = engine.event(q.event_id)?.startTime;
        const rows = await archive.rowsOfMarket(q.event_id, q.market_subtype, start ?? Number.MAX_SAFE_INTEGER);
        const startMs = startOf(q.event_id, rows.rows);
        const kept = rows.rows.filter((row) => row.time_ms < startMs && (books === null || (row.book !== null && books.has(row.book))));
        const lines = closingLines(pricePaths(kept), startMs, q.devig as DevigMethod);
        return { kind: 'data', data: lines.map(closingJson), updated: startMs, note: note(rows) };
      });
    },
  });

  const clv = defineRoute({
    path: CLV_PATH,
    auth: 'key',
    response: 'ClosingLineValue',
    query: CLV_QUERY,
    summary: 'Closing-line value of a price taken at a time: raw and no-vig.',
    description:
      "CLV of the price taken on the odds row id at taken_at (the price given, or the one in force then): raw clv = taken decimal / closing decimal - 1, against the same selection's close at closing_book (default the row's own book); clvNoVig = taken decimal x no-vig closing probability - 1 (= taken / no-vig closing decimal - 1), the close devigged with devig over the selection's market group at that book. Closing: the price in force just before the event's start. Fields are null when the close (or a complete market group) is missing. One item. " +
      `${ARCHIVE_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`ID=$(curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/odds?market=moneyline&limit=1' | jq -r '.data[0].id')`, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/history/clv?id=$ID&price=-105&closing_book=pinnacle&devig=shin"`),
    handle: (req) => {
      const archive = archiveOf();
      const q = req.query;
      const [eventId, ownBook, subtype, selectionId] = q.id.split(':');
      if (q.price !== undefined && q.price > -100 && q.price < 100) throw invalidParameter('price', 'price must be an American price: at most -100 or at least 100');
      const refBook = q.closing_book ?? ownBook;
      const takenAt = q.taken_at ?? req.now;
      return pending(async () => {
        const rows = await archive.rowsOfMarket(eventId, subtype, Number.MAX_SAFE_INTEGER);
        const startMs = startOf(eventId, rows.rows);
        let taken = q.price ?? null;
        let takenPoint: PricePoint | null = null;
        if (taken === null) {
          takenPoint = pointAt(pricePaths(rows.rows.filter((row) => row.odds_id === q.id)), takenAt);
          if (takenPoint === null || takenPoint.removed || takenPoint.priceAmerican === null) throw notFound(`the archive holds no price of ${q.id} at ${isoMillis(takenAt)}; pass price`, 'id');
          taken = takenPoint.priceAmerican;
        }
        const lines = closingLines(pricePaths(rows.rows.filter((row) => row.book === refBook && row.time_ms < startMs)), startMs, q.devig as DevigMethod);
        const reference = lines.find((line) => line.selectionId === selectionId) ?? null;
        const value = clvOf(taken, reference);
        return {
          kind: 'data',
          data: [
            {
              id: q.id,
              takenAt: isoMillis(takenAt),
              priceAmerican: taken,
              takenDecimal: value.takenDecimal,
              closingBook: refBook,
              closingId: `${eventId}:${refBook}:${subtype}:${selectionId}`,
              eventStart: isoMillis(startMs),
              closing: reference?.closing ? pointJson(reference.closing) : null,
              closingDecimal: value.closingDecimal,
              noVigClosingDecimal: value.noVigClosingDecimal,
              devig: q.devig,
              clv: value.clv,
              clvNoVig: value.clvNoVig,
            },
          ],
          updated: startMs,
          note: note(rows),
        };
      });
    },
  });

  const exportDay = defineRoute({
    path: EXPORT_PATH,
    auth: 'key',
    response: 'ArchiveRow',
    responseKind: 'parquet',
    query: EXPORT_QUERY,
    summary: "One UTC day of the tick archive (optionally one league) as a Parquet file (zstd), streamed.",
    description:
      "The archive rows of the day as application/vnd.apache.parquet: the row schema of docs/archive.md plus event_key (the first 8 hex digits of md5(event_id)), sorted by event_key, odds_id, seq, pos, so each event's rows sit together and each selection's changes are in log order (sort by seq, pos for the whole day's log order). A finished day's parts (split by event_key) are copied into the file in that order, without sorting; today's rows are sorted first. Only changes already written to the archive (today: up to ARCHIVE_INTERVAL_MS behind). A day the archive holds nothing for: 404 not_found. " +
      `Needs the tick archive (ARCHIVE_DIR); without it: 503 archive_unavailable. ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`curl -s ${KEY_HEADER} -o day.parquet -w '%{http_code}: %{size_download} bytes in day.parquet\\n' "${BASE_URL}/api/v1/history/export?day=$(date -u +%Y-%m-%d)&league=nfl"`),
    handle: (req) => {
      const archive = archiveOf();
      const q = req.query;
      if (!isDay(q.day)) throw invalidParameter('day', 'day must be a UTC day that exists, YYYY-MM-DD');
      return {
        kind: 'pending',
        body: (async (): Promise<StreamResult> => {
          const dir = mkdtempSync(join(tmpdir(), 'odds-export-'));
          const file = join(dir, `${q.day}.parquet`);
          try {
            const written = await archive.exportDay(q.day, q.league ?? null, file);
            if (written.files === 0) throw notFound(`the archive holds nothing for ${q.day}`, 'day');
          } catch (error) {
            rmSync(dir, { recursive: true, force: true });
            throw error;
          }
          return parquetStream(file, () => rmSync(dir, { recursive: true, force: true }));
        })(),
      };
    },
  });

  return [ticks, market, closing, clv, exportDay];
}

/** A file streamed with backpressure, then `done` (also when the client leaves). */
function parquetStream(file: string, done: () => void): StreamResult {
  return {
    kind: 'stream',
    contentType: 'application/vnd.apache.parquet',
    open(stream) {
      const input = createReadStream(file, { highWaterMark: 256 * 1024 });
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        input.destroy();
        done();
      };
      input.on('data', (chunk) => {
        if (!stream.write(chunk as Buffer)) input.pause();
      });
      input.on('end', () => {
        stream.end();
        finish();
      });
      input.on('error', () => {
        stream.end();
        finish();
      });
      return {
        drained: () => input.resume(),
        closed: finish,
      };
    },
  };
}
