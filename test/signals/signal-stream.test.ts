// The signal stream over the real app: a steam move arrives on topic=steam as soon as
// the apply that made it returns, equal to the /steam record; a tick on a market
// arrives on topic=best_price as its group's records, equal to /best-prices; a bad
// topic is refused before the stream opens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { decimalToAmerican } from '../../engine/model.ts';
import type { OddsRowJson } from '../helpers/bruteForce.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

/** An open SSE connection: its parsed events as they come. */
function openEvents(path: string): Promise<{ next(): Promise<{ event: string; data: unknown }>; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: t.port, path }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`status ${res.statusCode}`)); return; }
      let buffer = '';
      const queue: { event: string; data: unknown }[] = [];
      const waiting: ((e: { event: string; data: unknown }) => void)[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === undefined || data === undefined) continue;
          const item = { event, data: JSON.parse(data) };
          const w = waiting.shift();
          if (w !== undefined) w(item); else queue.push(item);
        }
      });
      resolve({
        next: () => new Promise((r) => { const item = queue.shift(); if (item !== undefined) r(item); else waiting.push(r); }),
        close: () => req.destroy(),
      });
    });
    req.on('error', () => {});
    req.end();
  });
}

const rows = (): OddsRowJson[] => boardRows(t.app.engine, 'all') as OddsRowJson[];

test('topic=steam pushes each move as its apply returns, equal to /steam', async () => {
  const sharp = rows().find((r) => r.sportsbook === 'pinnacle' && r.market === 'MONEYLINE' && r.marketScope === undefined && !r.suspended && r.priceDecimal !== undefined && r.priceDecimal > 1.6 && r.priceDecimal < 2.4)!;
  const events = await openEvents(`/api/v1/stream/signals?topic=steam&event_id=${sharp.eventId}`);
  t.clock.advance(1000);
  const engine = t.app.engine;
  engine.apply([{ op: 'price', slot: engine.slotOf(sharp.id), priceAmerican: decimalToAmerican(1 / (1 / sharp.priceDecimal! + 0.04)), suspended: false }]);
  const message = await events.next();
  events.close();
  assert.equal(message.event, 'steam');
  const { body } = await t.call('/api/v1/steam', `/api/v1/steam?event_id=${sharp.eventId}&limit=1`);
  assert.deepEqual(message.data, { topic: 'steam', move: body.data[0] });
});

test('topic=best_price pushes the changed groups and their records, equal to /best-prices', async () => {
  const row = rows().find((r) => r.sportsbook === 'draftkings' && r.market === 'TOTAL' && r.marketScope === undefined && !r.suspended && r.priceDecimal !== undefined)!;
  const events = await openEvents(`/api/v1/stream/signals?topic=best_price&event_id=${row.eventId}`);
  // a read settles what earlier changes marked (the board's load marks every group): that is pushed first
  await t.call('/api/v1/best-prices', '/api/v1/best-prices?limit=1');
  const backlog = (await events.next()).data as { groups: string[] };
  assert.ok(backlog.groups.length > 1);
  t.clock.advance(1000);
  const engine = t.app.engine;
  engine.apply([{ op: 'price', slot: engine.slotOf(row.id), priceAmerican: decimalToAmerican(row.priceDecimal! + 0.5), suspended: false }]);
  const message = await events.next();
  events.close();
  assert.equal(message.event, 'best_price');
  const data = message.data as { topic: string; groups: string[]; records: { id: string }[] };
  assert.equal(data.groups.length, 1);
  const { body } = await t.call('/api/v1/best-prices', `/api/v1/best-prices?event_id=${row.eventId}&limit=1000`);
  assert.deepEqual(data.records, body.data.filter((r: { id: string }) => data.groups.includes(r.id)));
  assert.equal(data.records.length, 1, 'the ticked group has a complete best-price market');
});

test('a bad topic is a 400 before the stream opens', async () => {
  const { reply, body } = await t.call('/api/v1/stream/signals', '/api/v1/stream/signals?topic=nope');
  assert.equal(reply.status, 400);
  assert.ok(body.validValues.includes('steam'));
});
