// The WebSocket stream against /odds: the image is what /odds serves with the same
// filter, a client applying image + deltas while the simulator runs holds exactly what
// /odds holds (random filters, formats and conflation), MessagePack frames carry the
// same messages as JSON ones, bad subscriptions get status errors, keys are checked,
// and the AsyncAPI document validates against the AsyncAPI 3.0 JSON schema.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { httpRequest } from '../helpers/server.ts';
import { StreamTestClient, byId, oddsQuery, oddsRows, type Message } from './streamClient.ts';

describe('WebSocket stream', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small' });
  });
  after(async () => {
    await t.close();
  });

  it('the image is /odds with the same filter, in its order, in segments of at most 1,000 rows', async () => {
    const client = await StreamTestClient.open(t.port);
    try {
      const filters: Array<Record<string, string[]>> = [{}, { league: ['nba'] }, { league: ['NFL', 'nba'], market: ['total'] }, { sportsbook: ['pinnacle', 'draftkings'], market: ['spread'] }];
      for (const [i, filter] of filters.entries()) {
        const id = `img${i}`;
        const from = client.messages.length;
        client.subscribe(id, { filter, oddsFormat: i % 2 === 0 ? 'all' : 'probability' });
        await client.next((m) => m.id === id && m.op === 'image' && m.segment === 'end', 20_000, from);
        const segments = client.messages.slice(from).filter((m) => m.id === id);
        const expected = await oddsRows(t.port, oddsQuery(filter, i % 2 === 0 ? 'all' : 'probability'));
        assert.deepEqual(segments.flatMap((m) => m.rows), expected, `image of ${JSON.stringify(filter)}`);
        for (const segment of segments) assert.ok(segment.rows.length <= 1000);
        assert.deepEqual(segments.map((m) => m.segment), segments.length === 1 ? ['end'] : ['start', ...Array(segments.length - 2).fill('more'), 'end']);
        assert.equal(new Set(segments.map((m) => m.clk)).size, 1, 'one clk for the whole image');
        if (i === 0) assert.ok(segments.length > 1, 'the whole small board takes several segments');
      }
    } finally {
      client.close();
    }
  });

  it('an image cut short by unsubscribe sends no more segments: the next subscription with the same id gets one whole image', async () => {
    const client = await StreamTestClient.open(t.port);
    try {
      const from = client.messages.length;
      // Sent together: the first image's later segments would come after the unsubscribe.
      client.send({ op: 'subscribe', id: 'x', filter: {} });
      client.send({ op: 'unsubscribe', id: 'x' });
      client.send({ op: 'subscribe', id: 'x', filter: {}, oddsFormat: 'decimal' });
      const end = await client.next((m) => m.id === 'x' && m.op === 'image' && m.segment === 'end', 20_000, from);
      await client.sync();
      const images = client.messages.slice(from).filter((m) => m.id === 'x' && m.op === 'image');
      const starts = images.flatMap((m, i) => (m.segment === 'start' ? [i] : []));
      assert.equal(images.filter((m) => m.segment === 'end').length, 1, 'one image ends');
      const last = images.slice(starts.at(-1));
      assert.deepEqual(last.flatMap((m) => m.rows), await oddsRows(t.port, oddsQuery({}, 'decimal')), 'the last image is whole and alone');
      assert.ok(last.every((m) => m.clk === end.clk));
      // Before it, at most the first image's opening segment (sent with the subscribe itself).
      assert.ok(starts.at(-1)! <= 1, `segments of the unsubscribed image before the new one: ${starts.at(-1)}`);
    } finally {
      client.close();
    }
  });

  it('invalid subscriptions get status errors with the HTTP routes\' validation', async () => {
    const client = await StreamTestClient.open(t.port);
    try {
      const cases: Array<[unknown, string | null]> = [
        ['not json', null],
        [{ op: 'subscribe' }, 'id'],
        [{ op: 'dance', id: 'x' }, 'op'],
        [{ op: 'subscribe', id: 'a', filter: { sportsbook: Array.from({ length: 21 }, (_, i) => `b${i}`) } }, 'filter.sportsbook'],
        [{ op: 'subscribe', id: 'b', filter: { team: ['x'] } }, 'filter.team'],
        [{ op: 'subscribe', id: 'c', oddsFormat: 'fractional' }, 'oddsFormat'],
        [{ op: 'subscribe', id: 'd', heartbeatMs: 10 }, 'heartbeatMs'],
        [{ op: 'subscribe', id: 'e', conflateMs: -1 }, 'conflateMs'],
        [{ op: 'subscribe', id: 'f', format: 'xml' }, 'format'],
        [{ op: 'subscribe', id: 'g', filter: { league: [3] } }, 'filter.league'],
        [{ op: 'subscribe', id: 'h', filter: { playerId: ['p1', 'p2'] } }, 'filter.playerId'],
        [{ op: 'unsubscribe', id: 'never' }, 'id'],
      ];
      for (const [message, param] of cases) {
        const from = client.messages.length;
        client.send(message);
        const status = await client.next((m) => m.op === 'status', 5000, from);
        assert.equal(status.code, 'invalid_subscription', JSON.stringify(message));
        assert.equal(status.param ?? null, param, JSON.stringify(status));
        assert.equal(typeof status.detail, 'string');
      }
      // The /odds sentence for the same limit.
      const odds = await httpRequest(t.port, `/api/v1/odds?sportsbook=${Array.from({ length: 21 }, (_, i) => `b${i}`).join(',')}`);
      const statusOfLimit = client.messages.find((m) => m.param === 'filter.sportsbook');
      assert.equal(statusOfLimit?.detail, JSON.parse(odds.body.toString()).detail);
      // A second subscribe with an open id is refused; the first keeps working.
      client.subscribe('dup', { filter: { league: ['nba'] } });
      await client.next((m) => m.id === 'dup' && m.segment === 'end');
      const from = client.messages.length;
      client.send({ op: 'subscribe', id: 'dup' });
      const refused = await client.next((m) => m.op === 'status', 5000, from);
      assert.equal(refused.code, 'invalid_subscription');
      // The connection survived all of it.
      await client.sync();
      assert.equal(client.closed, null);
    } finally {
      client.close();
    }
  });

  it('msgpack frames decode to the same messages as JSON frames', async () => {
    const client = await StreamTestClient.open(t.port);
    try {
      const filter = { league: ['nba', 'nhl'] };
      client.subscribe('j', { filter, format: 'json' });
      client.subscribe('m', { filter, format: 'msgpack' });
      await client.next((m) => m.id === 'm' && m.segment === 'end');
      for (let i = 0; i < 20; i++) t.app.simulator.step(25);
      await client.sync();
      const of = (id: string) => client.messages.filter((m) => m.id === id).map(({ id: _id, __binary: _b, ...rest }) => rest);
      assert.ok(client.messages.filter((m) => m.id === 'm').every((m) => m.__binary === true), 'msgpack subscription gets binary frames');
      assert.ok(of('j').some((m) => m.op === 'delta'), 'deltas arrived');
      assert.deepEqual(of('m'), of('j'));
    } finally {
      client.close();
    }
  });

  it('keys: an invalid key is refused with 401 on the handshake, in a header or the key parameter', async () => {
    for (const options of [{ headers: { 'X-Api-Key': 'nope' } }, { query: '?key=nope' }]) {
      await assert.rejects(StreamTestClient.open(t.port, options), /401/);
    }
    const sse = await httpRequest(t.port, '/api/v1/stream/sse?key=nope');
    assert.equal(sse.status, 401);
    assert.equal(JSON.parse(sse.body.toString()).code, 'invalid_api_key');
  });

  it('the AsyncAPI document validates against the AsyncAPI 3.0 schema and is mentioned in the OpenAPI description', async () => {
    const reply = await httpRequest(t.port, '/api/v1/asyncapi.json');
    assert.equal(reply.status, 200);
    const doc: any = JSON.parse(reply.body.toString());
    const require = createRequire(import.meta.url);
    const schema = require('@asyncapi/specs/schemas/3.0.0-without-$id.json');
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const validate = ajv.compile(schema) as ((data: unknown) => boolean) & { errors?: unknown[] | null };
    assert.ok(validate(doc), JSON.stringify(validate.errors?.slice(0, 5)));
    assert.equal(doc.asyncapi, '3.0.0');
    assert.deepEqual(Object.values(doc.channels).map((c: any) => c.address).sort(), ['/api/v1/stream', '/api/v1/stream/signals', '/api/v1/stream/signals/ws', '/api/v1/stream/sse']);
    // A broken document does not validate (the check can fail).
    assert.equal(validate({ ...doc, channels: { stream: { address: 5 } } }), false);
    const openapi = JSON.parse((await httpRequest(t.port, '/api/v1/openapi.json')).body.toString());
    assert.ok(openapi.paths['/api/v1/stream/sse'], 'the SSE route is in the OpenAPI description');
    assert.match(openapi.info.description, /asyncapi\.json/);
  });
});

describe('WebSocket stream while the simulator runs', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', simulatorSeed: 7 });
  });
  after(async () => {
    await t.close();
  });

  it('property: a client applying image + deltas holds exactly what /odds holds (random filters, formats, conflation)', async () => {
    const engine = t.app.engine;
    const leagues = engine.knownLeagues();
    const books = engine.bookCounts().map((b) => b.id);
    const markets = ['spread', 'total', 'moneyline', 'player', 'TEAM_TOTAL'];
    const events = engine.eventIdsWithLiveRows();
    const filterArb = fc.record(
      {
        league: fc.subarray(leagues, { minLength: 1, maxLength: 3 }),
        sportsbook: fc.subarray(books, { minLength: 1, maxLength: 4 }),
        market: fc.subarray(markets, { minLength: 1, maxLength: 2 }),
        eventId: fc.subarray(events.slice(0, 40), { minLength: 1, maxLength: 5 }),
      },
      { requiredKeys: [] },
    );
    const subArb = fc.record({ filter: filterArb, conflateMs: fc.constantFrom(0, 0, 150), format: fc.constantFrom('json', 'msgpack'), oddsFormat: fc.constantFrom('all', 'american', 'decimal', 'probability') });
    await fc.assert(
      fc.asyncProperty(fc.array(subArb, { minLength: 1, maxLength: 4 }), fc.integer({ min: 5, max: 30 }), async (subs, ticks) => {
        const client = await StreamTestClient.open(t.port);
        try {
          subs.forEach((sub, i) => client.subscribe(`p${i}`, sub));
          await eventually(() => subs.every((_, i) => client.state(`p${i}`).images === 1), 20_000);
          // The simulator runs (inserts, price moves, pulls, status changes) while the client reads.
          for (let i = 0; i < ticks; i++) {
            t.app.simulator.step(40);
            if (i % 5 === 0) await new Promise((resolve) => setImmediate(resolve));
          }
          assert.ok(await eventually(() => t.app.stream.stats().conflating === 0, 10_000), 'conflated deltas flushed');
          await client.sync();
          for (const [i, sub] of subs.entries()) {
            const state = client.state(`p${i}`);
            assert.deepEqual(state.breaks, []);
            const expected = await oddsRows(t.port, oddsQuery(sub.filter as Record<string, string[]>, sub.oddsFormat));
            assert.deepEqual(byId(state.rows.values()), byId(expected), `subscription ${JSON.stringify(sub)}`);
          }
        } finally {
          client.close();
        }
      }),
      { numRuns: 12, seed: 1414 },
    );
  });

  it('a subscription with conflateMs gets a bounded number of deltas holding each row\'s latest state', async () => {
    const client = await StreamTestClient.open(t.port);
    try {
      client.subscribe('c', { conflateMs: 400 });
      client.subscribe('n', {});
      await eventually(() => client.state('c').images === 1 && client.state('n').images === 1, 20_000);
      for (let i = 0; i < 30; i++) t.app.simulator.step(20);
      assert.ok(await eventually(() => t.app.stream.stats().conflating === 0, 10_000));
      await client.sync();
      const conflated = client.state('c');
      const every = client.state('n');
      assert.equal(every.deltas, 30, 'one delta per applied batch without conflation');
      assert.ok(conflated.deltas >= 1 && conflated.deltas < every.deltas, `conflated: ${conflated.deltas} deltas`);
      assert.deepEqual(conflated.breaks, []);
      assert.deepEqual(byId(conflated.rows.values()), byId(every.rows.values()));
    } finally {
      client.close();
    }
  });

  it('a large image goes out segment by segment: other subscribers\' deltas pass between its segments, and image + deltas stay exact', async () => {
    const other = await StreamTestClient.open(t.port);
    const client = await StreamTestClient.open(t.port);
    // Arrival order across both connections, as this process reads them.
    const arrivals: string[] = [];
    other.ws.on('message', () => {
      if (other.messages.at(-1)!.op === 'delta') arrivals.push('other delta');
    });
    client.ws.on('message', () => {
      const m = client.messages.at(-1)!;
      arrivals.push(m.op === 'image' ? `${m.id} image ${m.segment}` : `${m.id} ${m.op}`);
    });
    try {
      other.subscribe('o', {});
      client.subscribe('same', {});
      await eventually(() => other.state('o').images === 1 && client.state('same').images === 1, 20_000);
      // The simulator applies a batch in every turn of the event loop until the image has arrived.
      client.subscribe('big', {});
      let steps = 0;
      const stepping = (async () => {
        while (client.state('big').images === 0 && steps < 20_000) {
          t.app.simulator.step(5);
          steps++;
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      await stepping;
      assert.equal(client.state('big').images, 1, `the image arrived within ${steps} batches`);
      const start = arrivals.indexOf('big image start');
      const end = arrivals.indexOf('big image end');
      assert.ok(start >= 0 && end > start, 'the whole board takes several segments');
      const between = arrivals.slice(start, end);
      assert.ok(between.filter((a) => a === 'other delta').length > 0, `another connection's deltas arrive while the image is sent: ${between.length} messages between`);
      // On one connection the order is the server's own: its other subscription's deltas go between the segments.
      assert.ok(between.filter((a) => a === 'same delta').length > 0, 'the same connection\'s other subscription gets its deltas between the segments');
      // The changes made while the image was sent follow it as deltas chained from its clk.
      assert.ok(await eventually(() => client.state('big').deltas > 0 && t.app.stream.stats().conflating === 0, 10_000));
      await client.sync();
      await other.sync();
      for (const [c, id] of [[client, 'big'], [client, 'same'], [other, 'o']] as const) {
        const state = c.state(id);
        assert.deepEqual(state.breaks, [], id);
        assert.deepEqual(byId(state.rows.values()), byId(await oddsRows(t.port, '')), `${id} holds what /odds holds`);
      }
    } finally {
      client.close();
      other.close();
    }
  });

  it('heartbeats arrive after heartbeatMs without other traffic and leave the prev chain alone', async () => {
    const client = await StreamTestClient.open(t.port);
    try {
      client.subscribe('h', { heartbeatMs: 500, filter: { eventId: ['no-such-event'] } });
      await client.next((m) => m.id === 'h' && m.segment === 'end');
      const from = client.messages.length;
      const beat: Message = await client.next((m) => m.op === 'heartbeat', 5000, from);
      assert.equal(typeof beat.clk, 'string');
      assert.equal(client.state('h').deltas, 0);
    } finally {
      client.close();
    }
  });
});
