// The ingest listener over the real server and real files: every change kind sent over
// HTTP (NDJSON and msgpack) and over the WebSocket (binary msgpack and text NDJSON)
// leaves the same board as the engine's own ops applied directly to a twin; a batch
// with bad changes answers 400 naming every bad index and changes nothing; 401 without
// or with a wrong token (HTTP and handshake), 413 over the cap (naming it), 415 for
// another content type; WebSocket answers come in order, acks and nacks alike.
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OddsEngine, type Change } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { decimalToAmerican, oddsId, type EventRecord, type OddsInput } from '../../engine/model.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { oddsRowFields } from '../../ingest/engineFeed.ts';
import { openPersistence } from '../../persistence/persistence.ts';
import { startTestApp, testBoard, type TestApp } from '../helpers/app.ts';
import { referenceDoc } from '../helpers/snapshot-helpers.ts';
import { msgpack, ndjson, openIngestSocket, postBatch, type IngestSocket } from './ingest-client.ts';
import { tempDataDir } from './ingest-helpers.ts';

const board = testBoard('small');
const MAX_BATCH = 64 * 1024;

type Via = 'http-ndjson' | 'http-msgpack' | 'ws-msgpack' | 'ws-ndjson';
const VIAS: readonly Via[] = ['http-ndjson', 'ws-msgpack', 'http-msgpack', 'ws-ndjson'];

describe('ingest listener', () => {
  let t: TestApp;
  let port: number;
  let token: string;
  let socket: IngestSocket;
  const scratch = tempDataDir('ingest-twin-');
  let twin: OddsEngine;
  const twinDb = openPersistence({ path: join(scratch, 'twin.db'), env: {} });

  before(async () => {
    t = await startTestApp({ board, dataDir: true, env: { INGEST_MAX_BATCH_BYTES: String(MAX_BATCH) } });
    const durable = t.app.durable!;
    port = (await durable.listen()).port;
    token = durable.token.token;
    socket = await openIngestSocket(port, token);
    twin = new OddsEngine(t.clock);
    loadBoard(twin, board);
    twinDb.loadCold(board, { eventsWithOdds: new Set(twin.eventIdsWithLiveRows()) });
  });
  after(async () => {
    socket.close();
    await t.close();
    twinDb.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const engine = () => t.app.engine;

  /** Sends one batch the given way; the answer as {ok, seq, applied} or {ok: false, code, errors}. */
  async function send(via: Via, changes: unknown[]): Promise<{ ok: boolean; seq?: number; applied?: number; code?: string; errors?: any[]; status?: number; detail?: string }> {
    if (via.startsWith('http')) {
      const reply = via === 'http-ndjson' ? await postBatch(port, token, ndjson(changes)) : await postBatch(port, token, msgpack(changes), 'application/msgpack');
      if (reply.status === 200) {
        assert.match(reply.contentType, /^application\/json/);
        assert.equal(reply.body.success, true);
        return { ok: true, seq: reply.body.seq, applied: reply.body.applied, status: 200 };
      }
      return { ok: false, code: reply.body.code, errors: reply.body.errors, status: reply.status, detail: reply.body.detail };
    }
    const reply = await socket.send(via === 'ws-msgpack' ? msgpack(changes) : ndjson(changes).toString('utf8'));
    if ('ack' in reply) return { ok: true, seq: reply.seq, applied: reply.applied };
    return { ok: false, code: reply.code, errors: reply.errors, detail: reply.detail };
  }

  let sent = 0;
  /** Sends `changes` over the next way in turn and applies `direct` to the twin at the same clock time; the boards must agree. */
  async function both(changes: unknown[], direct: Change[], via: Via = VIAS[sent++ % VIAS.length]!): Promise<void> {
    t.clock.advance(1000);
    const answer = await send(via, changes);
    assert.ok(answer.ok, `${via}: ${JSON.stringify(answer)}`);
    const direct1 = twin.apply(direct);
    assert.equal(answer.applied, changes.length);
    assert.equal(direct1.applied, direct.length);
    assert.equal(answer.seq, engine().seq, `${via}: the ack names the board seq after the batch`);
    assert.equal(engine().seq, twin.seq, `${via}: seq`);
    assert.equal(engine().asOf(), twin.asOf(), `${via}: asOf`);
    assert.deepEqual(referenceDoc(engine(), true), referenceDoc(twin, true), `${via}: board`);
    assert.deepEqual(engine().sources.list(), twin.sources.list());
  }

  function liveSlot(test: (slot: number) => boolean): number {
    const s = engine().store;
    for (let slot = 0; slot < s.size; slot++) if (s.isLive(slot) && test(slot)) return slot;
    throw new Error('no such row');
  }
  const bookSlot = () => liveSlot((slot) => engine().store.priceAmerican[slot] !== NO_PRICE && engine().store.books.get(engine().store.book[slot]) === 'pinnacle');
  const dfsSlot = () => liveSlot((slot) => engine().store.priceAmerican[slot] === NO_PRICE);

  for (let round = 0; round < 2; round++) {
    // round 1 sends each kind the other way (HTTP <-> WebSocket) than round 0 did
    const way = (i: number): Via => VIAS[(i + round) % VIAS.length]!;

    it(`round ${round}: price ticks (American, decimal, suspension only, DFS multiplier)`, async () => {
      const book = engine().idOf(bookSlot());
      const dfs = engine().idOf(dfsSlot());
      const decimal = 2.25 + round / 4;
      await both([{ op: 'price', id: book, priceAmerican: -137 - round, suspended: false }], [{ op: 'price', slot: twin.slotOf(book), priceAmerican: -137 - round, suspended: false }], way(0));
      await both([{ op: 'price', id: book, priceDecimal: decimal }], [{ op: 'price', slot: twin.slotOf(book), priceAmerican: decimalToAmerican(decimal), suspended: false }], way(1));
      await both([{ op: 'price', id: book, suspended: true }], [{ op: 'price', slot: twin.slotOf(book), priceAmerican: decimalToAmerican(decimal), suspended: true }], way(2));
      await both([{ op: 'price', id: dfs, dfsMultiplier: 1.15 + round / 20, suspended: false }], [{ op: 'price', slot: twin.slotOf(dfs), priceAmerican: null, dfsMultiplier: 1.15 + round / 20, suspended: false }], way(3));
    });

    it(`round ${round}: odds rows (a new line, an upsert over it) and remove`, async () => {
      const s = engine().store;
      const over = liveSlot((slot) => s.priceAmerican[slot] !== NO_PRICE && s.markets.get(s.market[slot]) === 'TOTAL' && s.side[slot] === 3);
      const base = s.rowInput(over);
      const line = base.line! + 10 + round;
      const fresh: OddsInput = { ...base, selectionId: base.selectionId.replace(`-${base.line}`, `-${line}`), selection: base.selection.replace(String(base.line), String(line)), line, priceAmerican: 150, suspended: false, updated: 0 };
      await both([{ op: 'odds', row: oddsRowFields(fresh) }], [{ op: 'upsert', row: fresh }], way(0));
      const moved: OddsInput = { ...fresh, priceAmerican: -120 };
      await both([{ op: 'odds', row: oddsRowFields(moved) }], [{ op: 'upsert', row: moved }], way(1));
      await both([{ op: 'remove', id: oddsId(fresh) }], [{ op: 'remove', id: oddsId(fresh) }], way(2));
      assert.ok(engine().isTombstone(engine().slotOf(oddsId(fresh))));
    });

    it(`round ${round}: an event, odds on it and a status change in one batch; then final`, async () => {
      const teams = board.teams.filter((team) => team.league === 'nba');
      const event: EventRecord = {
        id: `nba-listener-game-${round}`, league: 'nba', homeTeamId: teams[0].id, homeTeamName: teams[0].name, awayTeamId: teams[1].id, awayTeamName: teams[1].name,
        startTime: t.clock.now() - (t.clock.now() % 60_000) + 3 * 3600_000, status: 'scheduled', venueId: null, seasonYear: 2026, context: { from: 'listener' }, isFutures: false,
      };
      const row: OddsInput = {
        eventId: event.id, sportsbook: 'pinnacle', league: 'nba', market: 'MONEYLINE', marketSubtype: 'MONEYLINE', period: 'FULL', selectionId: 'FULL-HOME', selection: teams[0].name,
        side: 'HOME', teamSide: 'HOME', teamName: teams[0].name, priceAmerican: -150, dfsMultiplier: null, line: null, playerId: null, playerName: null, teamId: teams[0].id,
        suspended: false, eventStartTime: event.startTime, updated: 0, marketScope: null, segment: null,
      };
      await both(
        [{ op: 'event', event: { ...event, startTime: new Date(event.startTime).toISOString() } }, { op: 'odds', row: oddsRowFields(row) }, { op: 'status', eventId: event.id, status: 'in_progress' }],
        [{ op: 'event', event }, { op: 'upsert', row }, { op: 'status', eventId: event.id, status: 'in_progress' }],
        way(0),
      );
      assert.deepEqual(t.app.persistence.events.detail(event.id)?.context, { from: 'listener' });
      await both([{ op: 'status', eventId: event.id, status: 'final' }], [{ op: 'status', eventId: event.id, status: 'final' }], way(1));
      assert.ok(engine().isTombstone(engine().slotOf(oddsId(row))));
    });

    it(`round ${round}: a new source with its kind, then a row of it`, async () => {
      const base = engine().store.rowInput(bookSlot());
      const id = `listenerbook${round}`;
      const row: OddsInput = { ...base, sportsbook: id, priceAmerican: 110, updated: 0 };
      const source = { id, name: `Listener Book ${round}`, kind: 'retail' as const };
      await both([{ op: 'source', source }, { op: 'odds', row: oddsRowFields(row) }], [{ op: 'source', source }, { op: 'upsert', row }], way(0));
      assert.equal(engine().sources.kindOf(id), 'retail');
    });

    it(`round ${round}: cold records (team, player, season, box score) land in SQLite as direct upserts do`, async () => {
      const team = { id: `nba-listener-team-${round}`, name: `Listener City ${round}`, abbreviation: 'LST', league: 'nba', conference: 'East', division: null, venueId: null };
      const player = { id: `nba-listener-player-${round}`, name: 'Sock Etson', league: 'nba', teamId: team.id, position: 'F' };
      const season = { id: `nba-${2040 + round}`, league: 'nba', year: 2040 + round, name: `NBA ${2040 + round}`, startDate: `${2040 + round}-10-20`, endDate: `${2041 + round}-06-20`, status: 'upcoming' as const, futuresEventId: null };
      const game = board.events.filter((e) => e.league === 'nba' && !e.isFutures)[round]!;
      const gamePlayer = board.players.find((p) => p.teamId === game.homeTeamId)!;
      const box = { op: 'boxscore', eventId: game.id, teams: [{ teamId: game.homeTeamId, homeScore: 90 + round, awayScore: 88, result: 1, stats: { assists: 20 } }], players: [{ playerId: gamePlayer.id, teamId: game.homeTeamId, data: { points: 12 } }] };
      t.clock.advance(1000);
      const answer = await send(way(0), [{ op: 'team', team }, { op: 'player', player }, { op: 'season', season }, box]);
      assert.ok(answer.ok, JSON.stringify(answer));
      twinDb.applyColdChanges(
        [
          { op: 'team', team },
          { op: 'player', player },
          { op: 'season', season },
          {
            op: 'boxscore', eventId: game.id,
            teams: [{ eventId: game.id, teamId: game.homeTeamId!, homeId: game.homeTeamId!, awayId: game.awayTeamId!, league: 'nba', homeScore: 90 + round, awayScore: 88, result: 1, stats: { assists: 20 } }],
            players: [{ eventId: game.id, playerId: gamePlayer.id, teamId: game.homeTeamId!, date: new Date(game.startTime).toISOString().slice(0, 10), data: { points: 12 } }],
          },
        ],
        t.clock.now(),
      );
      const p = t.app.persistence;
      assert.ok(p.teams.get(team.id) !== null);
      assert.deepEqual(p.teams.get(team.id), twinDb.teams.get(team.id));
      assert.deepEqual(p.players.get(player.id), twinDb.players.get(player.id));
      assert.deepEqual(p.seasons.forYear(2040 + round, t.clock.now()), twinDb.seasons.forYear(2040 + round, t.clock.now()));
      assert.deepEqual(p.events.boxScore(game.id), twinDb.events.boxScore(game.id));
    });
  }

  for (const via of VIAS) {
    it(`${via}: a batch with bad changes is refused whole, naming every bad index; nothing is logged or applied`, async () => {
      const book = engine().idOf(bookSlot());
      const seq = engine().seq;
      const logged = t.app.durable!.durable.log.lastIndex;
      const doc = referenceDoc(engine(), true);
      const batch = [
        { op: 'price', id: book, priceAmerican: -150 },
        { op: 'price', id: book, priceAmerican: 50 },
        { op: 'price', id: `${book}x`, priceAmerican: 120 },
        { op: 'status', eventId: board.events[0]!.id, status: 'exploded' },
        { op: 'remove', id: book },
        { op: 'teleport' },
      ];
      const answer = await send(via, batch);
      assert.equal(answer.ok, false);
      if (via.startsWith('http')) assert.equal(answer.status, 400);
      assert.equal(answer.code, 'invalid_batch');
      assert.deepEqual([...new Set(answer.errors!.map((e) => e.index))], [1, 2, 3, 5]);
      for (const e of answer.errors!) assert.deepEqual(Object.keys(e).sort(), ['code', 'detail', 'field', 'index']);
      assert.equal(engine().seq, seq);
      assert.equal(t.app.durable!.durable.log.lastIndex, logged);
      assert.deepEqual(referenceDoc(engine(), true), doc);
    });
  }

  it('WebSocket answers come in the order the batches were sent, acks and nacks mixed', async () => {
    const book = engine().idOf(bookSlot());
    const replies = await Promise.all([
      socket.send(msgpack([{ op: 'price', id: book, priceAmerican: -111 }])),
      socket.send(msgpack([{ op: 'price', id: book, priceAmerican: 5 }])),
      socket.send(ndjson([{ op: 'price', id: book, priceAmerican: -112 }]).toString('utf8')),
      socket.send('this is not json'),
      socket.send(msgpack([{ op: 'price', id: book, priceAmerican: -113 }])),
    ]);
    const first = replies[0].ack as number;
    assert.deepEqual(replies.map((r) => r.ack ?? r.nack), [first, first + 1, first + 2, first + 3, first + 4]);
    assert.deepEqual(replies.map((r) => ('ack' in r ? 'ack' : r.code)), ['ack', 'invalid_batch', 'ack', 'invalid_batch', 'ack']);
    assert.ok(replies[0].seq < replies[2].seq && replies[2].seq < replies[4].seq);
    assert.equal(engine().rowObject(engine().slotOf(book), 'all').priceAmerican, -113);
    // the twin follows so later comparisons hold
    for (const price of [-111, -112, -113]) twin.apply([{ op: 'price', slot: twin.slotOf(book), priceAmerican: price, suspended: engine().store.suspended[engine().slotOf(book)] === 1 }]);
  });

  it('401 invalid_token without a token or with a wrong one, on HTTP and on the WebSocket handshake; nothing is applied', async () => {
    const book = engine().idOf(bookSlot());
    const seq = engine().seq;
    const body = ndjson([{ op: 'price', id: book, priceAmerican: -140 }]);
    for (const wrong of [null, `${token}x`, token.slice(1), '']) {
      const reply = await postBatch(port, wrong, body);
      assert.equal(reply.status, 401, String(wrong));
      assert.equal(reply.body.code, 'invalid_token');
      assert.ok(!JSON.stringify(reply.body).includes(token), 'the answer never carries the token');
    }
    await assert.rejects(openIngestSocket(port, null), (error: { status?: number }) => error.status === 401);
    await assert.rejects(openIngestSocket(port, 'nope'), (error: { status?: number }) => error.status === 401);
    assert.equal(engine().seq, seq);
    // the token file is private to the service's user
    assert.equal(statSync(t.app.durable!.token.file!).mode & 0o777, 0o600);
  });

  it('413 batch_too_large naming the cap (declared length, and a WebSocket message over it closes the connection); 415 for another content type', async () => {
    const seq = engine().seq;
    const book = engine().idOf(bookSlot());
    const big = ndjson(Array.from({ length: 2000 }, () => ({ op: 'price', id: book, priceAmerican: -150 })));
    assert.ok(big.length > MAX_BATCH);
    const tooLarge = await postBatch(port, token, big);
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.body.code, 'batch_too_large');
    assert.match(tooLarge.body.detail, new RegExp(String(MAX_BATCH)));
    for (const type of ['text/plain', 'application/json', '']) {
      const reply = await postBatch(port, token, ndjson([{ op: 'price', id: book, priceAmerican: -150 }]), type);
      assert.equal(reply.status, 415, type);
      assert.equal(reply.body.code, 'unsupported_media_type');
    }
    const ws = await openIngestSocket(port, token);
    ws.ws.send(big);
    const code = await ws.closed;
    // 1009 (message too big) with a close frame on node:http; uWS drops the connection (1006)
    assert.ok(code === 1009 || code === 1006, `close code ${code}`);
    assert.equal(engine().seq, seq);
  });
});
