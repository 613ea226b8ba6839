// Cold-data layer: how long loading a board into SQLite takes (and reusing a loaded
// database), and what each repository read and each auth step costs per call. These
// are the uncached costs: the HTTP response cache answers repeated pages without
// calling them. Uses the medium board (what `npm start` serves) when
// fixtures/generateBoard.ts exists, else the tests' tiny board (said in 'board').

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import type { Board, BoardOptions } from '../engine/model.ts';
import { KeyAuthenticator } from '../http/auth.ts';
import { defaultEventWindow } from '../persistence/eventsRepository.ts';
import { openPersistence } from '../persistence/persistence.ts';
import { tinyBoard } from '../fixtures/harness/persistence-fixture.ts';

type Measurements = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const TASK_TIME_MS = 300;

async function benchBoard(): Promise<{ board: Board; name: string }> {
  const file = new URL('../fixtures/generateBoard.ts', import.meta.url);
  if (!existsSync(file)) return { board: tinyBoard(), name: 'tiny (test fixture; fixtures/generateBoard.ts missing)' };
  const mod = (await import(pathToFileURL(file.pathname).href)) as { generateBoard: (o: BoardOptions) => Board };
  return { board: mod.generateBoard({ seed: 42, size: 'medium', now: NOW }), name: 'medium, seed 42' };
}

export async function benchPersistence(): Promise<Measurements> {
  const { board, name } = await benchBoard();
  const out: Measurements = { board: name };
  const dir = mkdtempSync(join(tmpdir(), 'persistence-bench-'));
  try {
    const withOdds = new Set<string>();
    const oddsStart = performance.now();
    board.forEachOdds((row) => withOdds.add(row.eventId));
    out['forEachOdds pass for hasOdds (ms, skipped when the engine passes its set)'] = round(performance.now() - oddsStart);

    const path = join(dir, 'odds.db');
    let p = openPersistence({ path, env: {}, flushIntervalMs: 0 });
    const loadStart = performance.now();
    const loaded = p.loadCold(board, { eventsWithOdds: withOdds });
    const loadMs = performance.now() - loadStart;
    const rows = Object.values(loaded.counts).reduce((a, b) => a + b, 0);
    out['cold rows loaded'] = rows;
    out['loadCold (ms)'] = round(loadMs);
    out['loadCold rows/s'] = Math.round(rows / (loadMs / 1000));
    p.close();

    p = openPersistence({ path, env: {}, flushIntervalMs: 0 });
    const reuseStart = performance.now();
    p.loadCold(board, { eventsWithOdds: withOdds });
    out['loadCold on a reused database (ms)'] = round(performance.now() - reuseStart);

    const window = defaultEventWindow(NOW);
    const league = board.events.find((e) => !e.isFutures)!.league;
    const teamId = board.teams[0]!.id;
    const final = board.teamBox[0]?.eventId ?? board.events[0]!.id;
    const { key } = p.apiKeys.create({ plan: 'ENTERPRISE' });
    const keyRecord = p.apiKeys.lookup(key)!;
    const authenticator = new KeyAuthenticator(p.keyChecker, { requireKey: false });
    const toggles = board.events.filter((e) => e.status === 'scheduled').slice(0, 100);
    let flip = false;

    const bench = new Bench({ time: TASK_TIME_MS, warmupTime: 50 });
    bench
      .add('events.list default window, 100 rows', () => void p.events.list({ ...window, limit: 100 }))
      .add('events.listJson default window, 100 rows (SQLite renders JSON)', () => void p.events.listJson({ ...window, limit: 100 }))
      .add('events.list one league, 100 rows', () => void p.events.list({ ...window, leagues: [league], limit: 100 }))
      .add('events.list one team, all time', () => void p.events.list({ startsAfter: null, startsBefore: null, teamId, limit: 100 }))
      .add('events.detail', () => void p.events.detail(final))
      .add('events.boxScore (final event)', () => void p.events.boxScore(final))
      .add('teams.list 100 rows', () => void p.teams.list({ limit: 100 }))
      .add('players.list one team', () => void p.players.list({ teamId, limit: 100 }))
      .add('stats.players one team, 100 rows', () => void p.stats.players({ teamId }, undefined, 100))
      .add('seasons.forYear', () => void p.seasons.forYear(2026, NOW))
      .add('apiKeys.lookup (cached)', () => void p.apiKeys.lookup(key))
      .add('usage.check', () => void p.usage.check(keyRecord, NOW))
      .add('authenticator.check keyed', () => void authenticator.check(key, 'key', NOW))
      .add('authenticator.check anonymous', () => void authenticator.check(null, 'key', NOW))
      .add('version()', () => void p.version('events'))
      .add(`updateEventStatuses, ${toggles.length} changes`, () => {
        flip = !flip;
        p.updateEventStatuses(toggles.map((e) => ({ id: e.id, status: flip ? 'in_progress' : 'scheduled' })), NOW);
      });
    await bench.run();
    for (const task of bench.tasks) {
      const r = task.result;
      if (r.state !== 'completed') {
        out[task.name] = `failed: ${r.state}`;
        continue;
      }
      out[`${task.name} (µs/op)`] = round(r.latency.mean * 1000);
      out[`${task.name} (ops/s)`] = Math.round(r.throughput.mean);
    }
    p.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
