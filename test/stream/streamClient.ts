// A stream client for the tests: a real WebSocket to /api/v1/stream that keeps each
// subscription's rows the way a consumer would (image segments, then deltas: rows
// upserted by id, tombstones deleted), and records every break of the prev chain, so a
// test can assert on what a client ends up holding and on whether it missed anything.
import assert from 'node:assert/strict';
import { unpack } from 'msgpackr';
import { WebSocket } from 'ws';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { httpRequest } from '../helpers/server.ts';

export type Row = Record<string, unknown> & { id: string };
export type Message = Record<string, any>;

export interface SubscriptionState {
  rows: Map<string, Row>;
  /** Image segments still arriving. */
  imaging: Row[] | null;
  /** The clk of the last image end or delta applied. */
  clk: string | null;
  images: number;
  deltas: number;
  resyncs: number;
  /** Every delta whose prev was not the clk held, as text. */
  breaks: string[];
}

export class StreamTestClient {
  readonly messages: Message[] = [];
  readonly subs = new Map<string, SubscriptionState>();
  closed: { code: number; reason: string } | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const message = (isBinary ? unpack(data) : JSON.parse(data.toString('utf8'))) as Message;
      if (isBinary) message.__binary = true;
      this.messages.push(message);
      this.apply(message);
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static async open(port: number, options: { query?: string; headers?: Record<string, string> } = {}): Promise<StreamTestClient> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/stream${options.query ?? ''}`, { headers: options.headers, perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new StreamTestClient(ws);
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  subscribe(id: string, fields: Record<string, unknown> = {}): void {
    if (!this.subs.has(id)) this.subs.set(id, { rows: new Map(), imaging: null, clk: null, images: 0, deltas: 0, resyncs: 0, breaks: [] });
    this.send({ op: 'subscribe', id, ...fields });
  }

  state(id: string): SubscriptionState {
    const state = this.subs.get(id);
    assert.ok(state, `no subscription ${id}`);
    return state;
  }

  /** Waits until a message passes `match`; returns it. */
  async next(match: (message: Message) => boolean, timeoutMs = 10_000, from = 0): Promise<Message> {
    let found: Message | undefined;
    const ok = await eventually(() => {
      found = this.messages.slice(from).find(match);
      return found !== undefined;
    }, timeoutMs);
    assert.ok(ok, `no matching message within ${timeoutMs} ms; last: ${JSON.stringify(this.messages.slice(-3)).slice(0, 500)}`);
    return found!;
  }

  /** Asks for a heartbeat and waits for it: every message sent before it has arrived. */
  async sync(): Promise<Message> {
    const from = this.messages.length;
    this.send({ op: 'heartbeat' });
    return this.next((m) => m.op === 'heartbeat', 10_000, from);
  }

  close(): void {
    this.ws.close();
  }

  private apply(message: Message): void {
    const state = message.id === undefined ? undefined : this.subs.get(message.id);
    if (state === undefined) return;
    if (message.op === 'image') {
      if (message.segment !== 'more' && message.segment !== 'end') state.imaging = [];
      if (message.segment === 'more' && state.imaging === null) state.breaks.push(`image segment 'more' without a start`);
      state.imaging ??= [];
      state.imaging.push(...(message.rows as Row[]));
      if (message.segment === 'end') {
        state.rows = new Map(state.imaging.map((row) => [row.id, row]));
        state.imaging = null;
        state.clk = message.clk;
        state.images++;
        if (message.resync === true) state.resyncs++;
      }
    } else if (message.op === 'delta') {
      if (message.prev !== state.clk) state.breaks.push(`delta prev ${message.prev} after clk ${state.clk}`);
      for (const row of message.rows as Row[]) {
        if (row.removed === true) state.rows.delete(row.id);
        else state.rows.set(row.id, row);
      }
      state.clk = message.clk;
      state.deltas++;
    }
  }
}

/** Every row /odds serves for `query` (all pages), in its order. */
export async function oddsRows(port: number, query: string): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  for (;;) {
    const path: string = `/api/v1/odds?${query}${query === '' ? '' : '&'}limit=1000${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const reply = await httpRequest(port, path);
    assert.equal(reply.status, 200, `${path}: ${reply.body.toString()}`);
    const body = JSON.parse(reply.body.toString("utf8")) as { data: Row[]; nextCursor: string | null };
    rows.push(...body.data);
    cursor = body.nextCursor;
    if (cursor === null) return rows;
  }
}

/** The /odds query string of a stream filter. */
export function oddsQuery(filter: Record<string, string[] | undefined>, oddsFormat?: string): string {
  const names: Record<string, string> = { league: 'league', sportsbook: 'sportsbook', market: 'market', eventId: 'event_id', playerId: 'player_id' };
  const parts: string[] = [];
  for (const [field, values] of Object.entries(filter)) if (values !== undefined && values.length > 0) parts.push(`${names[field]}=${encodeURIComponent(values.join(','))}`);
  if (oddsFormat !== undefined) parts.push(`odds_format=${oddsFormat}`);
  return parts.join('&');
}

/** Sorted by id, for comparing a client's map with /odds. */
export function byId(rows: Iterable<Row>): Row[] {
  return [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
