// The one case where a feed's batch reaches the log twice: the ingest listener took it
// but its answer was lost on the way back. The feed sends the same batch again; that
// changes nothing more on the board: the tick it carried is not a second history entry,
// and the remove it carried (already done) is refused and taken as done. Between the
// feed and the real ingest listener sits a small proxy that can drop one answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpBatchSink } from '../../feeds/batchSink.ts';
import { ProviderClient } from '../../feeds/theOddsApi/providerClient.ts';
import { TheOddsApiFeed } from '../../feeds/theOddsApi/theOddsApiFeed.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { STUB_API_KEY, StubProvider, nudged, providerEventsFrom } from '../../fixtures/harness/stubProvider.ts';

let t: TestApp;
let stub: StubProvider;
let proxy: http.Server;
let proxyPort = 0;
/** Set: the next answer from the listener is dropped (the client's connection is cut instead). */
let dropNextAnswer = false;
let forwarded = 0;

before(async () => {
  t = await startTestApp({ dataDir: true });
  const listener = await t.app.durable!.listen();
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      forwarded++;
      const upstream = http.request({ host: '127.0.0.1', port: listener.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => body.push(chunk));
        answer.on('end', () => {
          if (dropNextAnswer) {
            dropNextAnswer = false;
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(body));
        });
      });
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyPort = (proxy.address() as AddressInfo).port;
  stub = new StubProvider();
  stub.addSport('basketball_nba', providerEventsFrom(t.app.board, 'nba', 1, 'lost'));
  await stub.start();
});

after(async () => {
  await stub?.close();
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await t?.close();
});

test('an answer lost after the batch was logged: the same batch again changes nothing more on the board', async () => {
  const lines: string[] = [];
  const engine = t.app.engine;
  const feed = new TheOddsApiFeed({
    client: new ProviderClient({ baseUrl: stub.url, apiKey: STUB_API_KEY }),
    sink: new HttpBatchSink({ url: `http://127.0.0.1:${proxyPort}`, token: t.app.durable!.token.token }),
    sports: ['basketball_nba'],
    regions: 'us',
    markets: ['h2h', 'totals'],
    intervalMs: 1000,
    retryBaseMs: 10,
    now: () => t.clock.now(),
    log: (line) => lines.push(line),
  });
  assert.ok((await feed.pollOnce()) > 0);
  const [event] = stub.sports.get('basketball_nba')!.events;
  const pinnacle = event.bookmakers.find((b) => b.key === 'pinnacle')!;
  const home = pinnacle.markets.find((m) => m.key === 'h2h')!.outcomes.find((o) => o.name === event.home_team)!;
  const totals = pinnacle.markets.find((m) => m.key === 'totals')!;
  const under = totals.outcomes.find((o) => o.name === 'Under')!;
  const tickId = `${event.id}:pinnacle:MONEYLINE:FULL-HOME`;
  const pulledId = `${event.id}:pinnacle:TOTAL:FULL-UNDER-${under.point}`;
  const tickSlot = engine.slotOf(tickId);
  const historyBefore = [...engine.history(tickSlot)].length;
  const seqBefore = engine.seq;

  home.price = nudged(home.price, 0.02);
  totals.outcomes.splice(totals.outcomes.indexOf(under), 1);
  dropNextAnswer = true;
  const sentBefore = forwarded;
  t.clock.advance(1000);
  assert.equal(await feed.pollOnce(), 1, 'in the end: the tick (the remove was already done)');
  assert.ok(lines.some((l) => /did not take a batch of 2 changes \(ingest_no_answer: /.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /1 of 2 changes refused \(#\d+ unknown_id id: no live row .*UNDER/.test(l)), lines.join('\n'));
  assert.equal(forwarded - sentBefore, 3, 'the batch, the same batch again (refused: its remove was done), the rest');

  assert.equal(engine.store.priceAmerican[tickSlot], home.price);
  assert.equal([...engine.history(tickSlot)].length, historyBefore + 1, 'one history entry for the tick, not two');
  assert.ok(engine.isTombstone(engine.slotOf(pulledId)));
  assert.equal(engine.seq, seqBefore + 3, 'the first batch (2 changes) and the tick again');
  assert.equal(await feed.pollOnce(), 0, 'the mirror agrees with the board: nothing more to send');
});
