// The stream as Server-Sent Events: the same image and deltas (event: image|delta, id:
// the clk of an image end or delta), resumed from Last-Event-ID with only the changes
// after it, parameters validated as on /odds.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { httpRequest } from '../helpers/server.ts';
import { byId, oddsRows, type Row } from './streamClient.ts';

interface SseEvent {
  event: string;
  id: string | null;
  data: Record<string, any>;
}

/** An EventSource-like reader over node:http: events parsed as they arrive. */
class SseReader {
  readonly events: SseEvent[] = [];
  status = 0;
  contentType = '';
  private buffer = '';
  private req: http.ClientRequest | null = null;

  constructor(port: number, path: string, headers: Record<string, string> = {}) {
    this.req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      this.status = res.statusCode ?? 0;
      this.contentType = String(res.headers['content-type']);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => this.feed(chunk));
    });
    this.req.on('error', () => {});
  }

  close(): void {
    this.req?.destroy();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = 'message';
      let id: string | null = null;
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data !== '') this.events.push({ event, id, data: JSON.parse(data) });
    }
  }
}

function applyEvents(rows: Map<string, Row>, events: SseEvent[]): void {
  for (const { data } of events) {
    if (data.op === 'image' && data.segment !== 'more' && data.segment !== 'end') rows.clear();
    for (const row of (data.rows ?? []) as Row[]) {
      if (row.removed === true) rows.delete(row.id);
      else rows.set(row.id, row);
    }
  }
}

describe('SSE stream', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', simulatorSeed: 3 });
  });
  after(async () => {
    await t.close();
  });

  it('image then deltas with ids; a reconnect with Last-Event-ID gets only the changes after it', async () => {
    const first = new SseReader(t.port, '/api/v1/stream/sse?league=nba,nhl&odds_format=decimal');
    const rows = new Map<string, Row>();
    try {
      assert.ok(await eventually(() => first.events.some((e) => e.data.segment === 'end'), 20_000));
      assert.equal(first.status, 200);
      assert.match(first.contentType, /^text\/event-stream/);
      const image = first.events.filter((e) => e.event === 'image');
      assert.deepEqual(image.flatMap((e) => e.data.rows), await oddsRows(t.port, 'league=nba,nhl&odds_format=decimal'));
      assert.ok(image.slice(0, -1).every((e) => e.id === null), 'only the image end is a resume point');
      assert.equal(image.at(-1)!.id, image.at(-1)!.data.clk);
      for (let i = 0; i < 5; i++) t.app.simulator.step(40);
      // Caught up when the last delta names the board's clk (a socket that pushed back gets them conflated).
      assert.ok(await eventually(() => first.events.at(-1)?.data.clk === t.app.stream.currentClk(), 10_000));
      const deltas = first.events.filter((e) => e.event === 'delta');
      let prev = image.at(-1)!.id;
      for (const delta of deltas) {
        assert.equal(delta.data.prev, prev);
        assert.equal(delta.id, delta.data.clk);
        prev = delta.id;
      }
      applyEvents(rows, first.events);
    } finally {
      first.close();
    }
    const lastEventId = first.events.filter((e) => e.id !== null).at(-1)!.id!;
    assert.ok(await eventually(() => t.app.stream.stats().clients === 0, 5000), 'the closed SSE client left the hub');
    // Away: changes go on.
    for (let i = 0; i < 6; i++) t.app.simulator.step(40);
    const second = new SseReader(t.port, '/api/v1/stream/sse?league=nba,nhl&odds_format=decimal', { 'Last-Event-ID': lastEventId });
    try {
      assert.ok(await eventually(() => second.events.at(-1)?.data.clk === t.app.stream.currentClk(), 10_000));
      assert.ok(second.events.every((e) => e.event !== 'image'), 'resumed: no image');
      assert.equal(second.events[0]!.data.prev, lastEventId);
      applyEvents(rows, second.events);
      assert.deepEqual(byId(rows.values()), byId(await oddsRows(t.port, 'league=nba,nhl&odds_format=decimal')));
    } finally {
      second.close();
    }
  });

  it('a Last-Event-ID this board did not issue gets a resync image; bad parameters answer 400 as on /odds', async () => {
    const reader = new SseReader(t.port, '/api/v1/stream/sse?league=nba', { 'Last-Event-ID': 'zz.1.1.000000000000' });
    try {
      assert.ok(await eventually(() => reader.events.some((e) => e.data.segment === 'end'), 20_000));
      assert.equal(reader.events[0]!.event, 'status');
      assert.equal(reader.events[0]!.data.code, 'resync');
      assert.ok(reader.events.filter((e) => e.event === 'image').every((e) => e.data.resync === true));
    } finally {
      reader.close();
    }
    for (const [query, param] of [['odds_format=fractional', 'odds_format'], ['heartbeat_ms=1', 'heartbeat_ms'], [`league=${Array(21).fill('x').join(',')}`, 'league']]) {
      const reply = await httpRequest(t.port, `/api/v1/stream/sse?${query}`);
      assert.equal(reply.status, 400, query);
      const body = JSON.parse(reply.body.toString());
      assert.equal(body.code, 'invalid_parameter');
      assert.equal(body.param, param);
    }
  });
});
