// GET / in headless Chromium over the real server with the simulator running: the odds
// screen renders the board, follows price changes applied to the engine, highlights
// each line's best price, shows an arbitrage while it is open, charts a selection's
// history point for point (from the one-selection history route, not the snapshot), and
// works with REQUIRE_KEY=1 once a key is entered.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { decimalToAmerican } from '../../engine/model.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openBrowser, type TestBrowser } from '../../fixtures/harness/browser.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { boardRows } from '../helpers/oddsReference.ts';

interface EngineRow {
  id: string;
  eventId: string;
  sportsbook: string;
  marketSubtype: string;
  period: string;
  market: string;
  side: string;
  line?: number;
  priceAmerican?: number;
  priceDecimal?: number;
  dfsMultiplier?: number;
  suspended: boolean;
  marketScope?: string;
}

function rowOf(t: TestApp, id: string): EngineRow {
  return t.app.engine.rowObject(t.app.engine.slotOf(id), 'all') as unknown as EngineRow;
}

function american(price: number): string {
  return price > 0 ? `+${price}` : String(price);
}

/** Cells of the rows drawn on the page: row id, text and whether it is highlighted. */
async function drawnCells(page: Page): Promise<{ line: string; id: string; text: string; best: boolean }[]> {
  return page.$$eval('.grid-row:not([hidden]) .price[data-id]', (cells) =>
    cells.map((cell) => ({
      line: (cell.parentElement as HTMLElement).dataset.line!,
      id: (cell as HTMLElement).dataset.id!,
      text: cell.textContent ?? '',
      best: cell.classList.contains('best'),
    })),
  );
}

describe('live board page', () => {
  let t: TestApp;
  let b: TestBrowser;
  let page: Page;
  /** The page's network log: HTTP request paths and WebSocket URLs, in order. */
  const requested: string[] = [];
  const sockets: string[] = [];
  before(async () => {
    t = await startTestApp({ simulatorRate: 50 });
    b = await openBrowser();
    page = await b.page(t.port);
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    page.on('websocket', (socket) => sockets.push(socket.url()));
    await page.addInitScript(keepSockets);
    await page.goto(`http://127.0.0.1:${t.port}/`);
  });
  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('renders the board: rows, books and the health bar', async () => {
    await page.waitForSelector('.grid-row[data-line] .price[data-id]', { timeout: 30_000 });
    const live = t.app.engine.status();
    const shown = async () => page.$eval('[data-stat="rows"]', (el) => Number((el.textContent ?? '').replace(/,/g, '')));
    assert.ok(await eventually(async () => (await shown()) === t.app.engine.status().totalMarkets), `rows: page ${await shown()}, engine ${t.app.engine.status().totalMarkets}`);
    const books = await page.$$eval('.grid-header .grid-book', (cells) => cells.map((c) => c.textContent));
    assert.equal(books.length, live.sportsbooks);
    assert.ok((await drawnCells(page)).length > 20);
  });

  it('shows a price change applied to the engine within a second', async () => {
    const cells = await drawnCells(page);
    const target = cells.map((c) => rowOf(t, c.id)).find((row) => row.priceAmerican !== undefined && !row.suspended && row.marketScope === undefined)!;
    assert.ok(target, 'a priced row on screen');
    const next = target.priceAmerican! > 0 ? target.priceAmerican! + 37 : target.priceAmerican! - 37;
    const selector = `.price[data-id="${target.id}"]`;
    t.app.engine.apply([{ op: 'price', slot: t.app.engine.slotOf(target.id), priceAmerican: next, suspended: false }]);
    const shown = await eventually(async () => (await page.$eval(selector, (el) => el.textContent)) === american(next), 1000);
    assert.ok(shown, `${target.id}: page shows ${await page.$eval(selector, (el) => el.textContent)}, engine ${american(next)}`);
  });

  it('stays live through the push stream, not by polling', async () => {
    assert.ok(await eventually(async () => (await feedOf(page)).feed === 'stream'), `feed: ${JSON.stringify(await feedOf(page))}`);
    assert.equal((await feedOf(page)).state, 'live');
    assert.deepEqual(sockets, [`ws://127.0.0.1:${t.port}/api/v1/stream`]);
    assert.ok(t.app.stream.stats().subscriptions >= 1, 'the service holds the page\'s subscription');
    assert.deepEqual(requested.filter((path) => path.startsWith('/api/v1/odds/updated') || path === '/api/v1/snapshot'), [], 'no polling and no snapshot bootstrap');
    // a price change shows within a second, and the page holds the board the engine holds
    const target = (await drawnCells(page)).map((c) => rowOf(t, c.id)).find((row) => row.priceAmerican !== undefined && !row.suspended && row.marketScope === undefined)!;
    const next = target.priceAmerican! > 0 ? target.priceAmerican! + 41 : target.priceAmerican! - 41;
    t.app.engine.apply([{ op: 'price', slot: t.app.engine.slotOf(target.id), priceAmerican: next, suspended: false }]);
    const selector = `.price[data-id="${target.id}"]`;
    assert.ok(await eventually(async () => (await page.$eval(selector, (el) => el.textContent)) === american(next), 1000), `${target.id}: page shows ${await page.$eval(selector, (el) => el.textContent)}`);
  });

  it('resumes after its stream connection is closed without losing a change', async () => {
    const resumes = t.app.stream.stats().resumes;
    const target = (await drawnCells(page)).map((c) => rowOf(t, c.id)).find((row) => row.priceAmerican !== undefined && !row.suspended && row.marketScope === undefined)!;
    const next = target.priceAmerican! > 0 ? target.priceAmerican! + 53 : target.priceAmerican! - 53;
    // the page's own socket goes away (as a dropped network connection would end it); the
    // change applied at once is one the page cannot have received on that socket
    const closed = await page.evaluate(() => {
      const open = (window as unknown as { pageSockets: WebSocket[] }).pageSockets.filter((s) => s.readyState === WebSocket.OPEN);
      for (const socket of open) socket.close();
      return open.length;
    });
    assert.equal(closed, 1);
    t.app.engine.apply([{ op: 'price', slot: t.app.engine.slotOf(target.id), priceAmerican: next, suspended: false }]);
    assert.ok(await eventually(async () => sockets.length === 2, 10_000), `sockets opened: ${sockets.length}`);
    const selector = `.price[data-id="${target.id}"]`;
    assert.ok(await eventually(async () => (await page.$eval(selector, (el) => el.textContent)) === american(next), 10_000), `${target.id}: page shows ${await page.$eval(selector, (el) => el.textContent)}, engine ${american(next)}`);
    assert.equal(t.app.stream.stats().resumes, resumes + 1, 'the new subscription resumed from the clk held (no fresh image)');
    assert.ok(await eventually(async () => (await feedOf(page)).state === 'live'));
    assert.equal((await feedOf(page)).feed, 'stream');
    // nothing lost while away: every row drawn has the engine's price (on a still board,
    // which the tests after this one keep)
    t.app.simulator.stop();
    const mismatches = async () => {
      const problems: string[] = [];
      for (const cell of await drawnCells(page)) {
        const row = rowOf(t, cell.id);
        if (!row.suspended && row.priceAmerican !== undefined && row.dfsMultiplier === undefined && cell.text !== american(row.priceAmerican)) problems.push(`${cell.id}: page ${cell.text}, engine ${american(row.priceAmerican)}`);
      }
      return problems;
    };
    assert.ok(await eventually(async () => (await mismatches()).length === 0), (await mismatches()).join('\n'));
  });

  it('highlights the best unsuspended price of each line', async () => {
    t.app.simulator.stop(); // a still board: the page and the engine can be compared line by line
    const check = async (): Promise<string[]> => {
      const problems: string[] = [];
      const byLine = new Map<string, { id: string; best: boolean }[]>();
      for (const cell of await drawnCells(page)) byLine.set(cell.line, [...(byLine.get(cell.line) ?? []), cell]);
      for (const [line, cells] of byLine) {
        const rows = cells.map((c) => ({ ...rowOf(t, c.id), best: c.best }));
        const priced = rows.filter((r) => !r.suspended && r.priceDecimal !== undefined);
        const top = Math.max(...priced.map((r) => r.priceDecimal!));
        const highlighted = rows.filter((r) => r.best);
        if (priced.length === 0 && highlighted.length === 0) continue;
        if (highlighted.length !== 1 || highlighted[0]!.priceDecimal !== top || highlighted[0]!.suspended) {
          problems.push(`${line}: highlighted ${highlighted.map((r) => `${r.sportsbook} ${r.priceDecimal}`).join()}, best ${top}`);
        }
      }
      return problems;
    };
    assert.ok(await eventually(async () => (await check()).length === 0), (await check()).join('\n'));
    assert.ok((await drawnCells(page)).some((c) => c.best));
  });

  it('shows an arbitrage opened by a price change and drops it once closed', async () => {
    const engine = t.app.engine;
    const { over, under } = twoBookTotal(t);
    const before = [rowOf(t, over), rowOf(t, under)];
    engine.apply([
      { op: 'price', slot: engine.slotOf(over), priceAmerican: decimalToAmerican(2.3), suspended: false },
      { op: 'price', slot: engine.slotOf(under), priceAmerican: decimalToAmerican(2.25), suspended: false },
    ]);
    const { body } = await t.call('/api/v1/arbitrage', '/api/v1/arbitrage?limit=1000');
    const arb = (body.data as { id: string; eventId: string; legs: { oddsId: string }[] }[]).find((a) => a.legs.some((leg) => leg.oddsId === over));
    assert.ok(arb, 'the service lists the opened arbitrage');
    const item = `.arbitrage li[data-id="${arb.id}"]`;
    assert.ok(await eventually(async () => (await page.$(item)) !== null), 'the panel shows it');
    assert.equal(await page.$eval(`${item} a`, (a) => a.getAttribute('href')), `#event=${encodeURIComponent(arb.eventId)}`);

    await page.click(`${item} a`); // the link shows the event on the odds screen
    assert.ok(await eventually(async () => (await page.$eval('select[name="event"]', (s) => (s as HTMLSelectElement).value)) === arb.eventId));
    const shownEvents = async () => page.$$eval('.grid-row:not([hidden])', (rows) => [...new Set(rows.map((r) => (r as HTMLElement).dataset.event))]);
    assert.ok(await eventually(async () => JSON.stringify(await shownEvents()) === JSON.stringify([arb.eventId])), `rows shown: ${(await shownEvents()).join()}`);

    engine.apply(before.map((row) => ({ op: 'price' as const, slot: engine.slotOf(row.id), priceAmerican: row.priceAmerican ?? null, suspended: row.suspended })));
    assert.ok(await eventually(async () => (await page.$(item)) === null), 'the panel drops it once closed');
  });

  it('charts a selection with one point per history entry in each book', async () => {
    // the line with the most priced books on screen (the arbitrage link left one event shown)
    const cells = await drawnCells(page);
    const counts = new Map<string, number>();
    for (const cell of cells) counts.set(cell.line, (counts.get(cell.line) ?? 0) + 1);
    const line = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    await page.click(`.grid-row[data-line="${line}"] .grid-label`);
    await page.waitForSelector(`.chart[data-state="drawn"][data-line="${line}"]`, { timeout: 30_000 });
    const points = JSON.parse((await page.$eval('.chart', (el) => (el as HTMLElement).dataset.points))!) as Record<string, number>;

    const reply = await t.request('/api/v1/snapshot?include_history=true');
    const snapshot = JSON.parse(gunzipSync(reply.body).toString()) as { events: { odds: (EngineRow & { priceHistory: { pd?: number; dm?: number }[] })[] }[] };
    const expected: Record<string, number> = {};
    for (const event of snapshot.events) {
      for (const row of event.odds) {
        const [eventId, , subtype, selection] = row.id.split(':');
        if (`${eventId}:${subtype}:${selection}` === line) expected[row.sportsbook] = row.priceHistory.filter((h) => h.pd !== undefined || h.dm !== undefined).length;
      }
    }
    assert.ok(Object.keys(expected).length >= 2, `${line} is priced by several books`);
    assert.deepEqual(points, expected);
    assert.ok(Object.values(expected).some((n) => n >= 2), 'some book has moved');
    // the chart read that one selection's history, never the whole board
    assert.ok(requested.includes('/api/v1/historical/price-history'), 'the chart asked the price-history route');
    assert.ok(!requested.includes('/api/v1/snapshot'), 'the page never downloaded the snapshot');

    // uPlot drew on its canvas: pixels in the series' colours, not a blank plot
    const inked = await page.$eval('.chart canvas', (canvas) => {
      const c = canvas as HTMLCanvasElement;
      const pixels = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let coloured = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 3]! > 0 && !(pixels[i] === pixels[i + 1] && pixels[i + 1] === pixels[i + 2])) coloured++;
      return coloured;
    });
    assert.ok(inked > 50, `coloured pixels: ${inked}`);
  });

  it('marks each book\'s opening and closing price once the event has started', async () => {
    // a started event (the board's live game), shown through the panels' link form
    const now = t.clock.now();
    const startedRow = (boardRows(t.app.engine, 'all') as unknown as (EngineRow & { eventStartTime: string })[]).find(
      (row) => row.marketScope === undefined && Date.parse(`${row.eventStartTime}:00Z`) <= now,
    );
    assert.ok(startedRow, 'the board has a started event');
    await page.evaluate((id) => (location.hash = `#event=${encodeURIComponent(id)}`), startedRow.eventId);
    const shownEvents = async () => page.$$eval('.grid-row:not([hidden])', (rows) => [...new Set(rows.map((r) => (r as HTMLElement).dataset.event))]);
    assert.ok(await eventually(async () => JSON.stringify(await shownEvents()) === JSON.stringify([startedRow.eventId])), `rows shown: ${(await shownEvents()).join()}`);
    const counts = new Map<string, string[]>();
    for (const cell of await drawnCells(page)) counts.set(cell.line, [...(counts.get(cell.line) ?? []), cell.id]);
    const [line, ids] = [...counts].sort((a, b) => b[1].length - a[1].length)[0]!;
    await page.click(`.grid-row[data-line="${line}"] .grid-label`);
    await page.waitForSelector(`.chart[data-state="drawn"][data-line="${line}"]`, { timeout: 30_000 });
    assert.equal(await page.$eval('.chart', (el) => (el as HTMLElement).dataset.started), 'true');

    const { body } = await t.call('/api/v1/historical/price-history', `/api/v1/historical/price-history?id=${encodeURIComponent(ids[0]!)}`);
    const start = Date.parse(`${startedRow.eventStartTime}:00Z`) / 1000;
    const expected: string[] = [];
    for (const row of body.data as { sportsbook: string; removed?: true; priceHistory: { fs: number; pd?: number; dm?: number }[] }[]) {
      if (row.removed === true) continue;
      const values = row.priceHistory.filter((h) => h.pd !== undefined || h.dm !== undefined);
      const closing = values.filter((h) => h.fs <= start).pop();
      const value = (h: { pd?: number; dm?: number } | undefined) => (h === undefined ? '–' : (h.pd ?? h.dm)!.toFixed(3));
      expected.push(`${row.sportsbook}: open ${value(values[0])} · close ${value(closing)}`);
    }
    assert.ok(expected.length >= 2, `${line} is priced by several books`);
    const marks = await page.$$eval('.chart-marks dt', (terms) => terms.map((dt) => `${dt.textContent}: ${dt.nextElementSibling?.textContent}`));
    assert.deepEqual(marks, expected);
  });

  it('logs no console errors and fetches nothing outside the service', () => {
    assert.deepEqual(b.problems, []);
    assert.deepEqual(t.logs, []);
  });
});

/** Runs in the page before its scripts: keeps every WebSocket it opens, so a test can close one. */
function keepSockets(): void {
  const Native = window.WebSocket;
  const kept: WebSocket[] = [];
  (window as unknown as { pageSockets: WebSocket[] }).pageSockets = kept;
  window.WebSocket = class extends Native {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      kept.push(this);
    }
  };
}

/** The health bar's feed field: its state and which feed keeps the board live. */
async function feedOf(page: Page): Promise<{ state?: string; feed?: string }> {
  return page.$eval('[data-stat="feed"]', (el) => ({ state: (el as HTMLElement).dataset.state, feed: (el as HTMLElement).dataset.feed }));
}

/** A two-way total quoted by two different non-DFS books on one line (both unsuspended). */
function twoBookTotal(t: TestApp): { over: string; under: string } {
  const rows = boardRows(t.app.engine, 'all') as unknown as EngineRow[];
  for (const over of rows) {
    if (over.market !== 'TOTAL' || over.side !== 'OVER' || over.suspended || over.dfsMultiplier !== undefined || over.marketScope !== undefined) continue;
    const under = rows.find((r) => r.eventId === over.eventId && r.marketSubtype === over.marketSubtype && r.period === over.period && r.side === 'UNDER' && r.line === over.line && r.sportsbook !== over.sportsbook && r.dfsMultiplier === undefined && !r.suspended);
    if (under !== undefined) return { over: over.id, under: under.id };
  }
  throw new Error('no two-book total on the board');
}

describe('live board page with REQUIRE_KEY=1', () => {
  let t: TestApp;
  let b: TestBrowser;
  before(async () => {
    t = await startTestApp({ env: { REQUIRE_KEY: '1' } });
    b = await openBrowser();
  });
  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('asks for a key, keeps it in the browser and sends it only to this service', async () => {
    const { key } = t.app.persistence.apiKeys.create({ plan: 'ENTERPRISE', label: 'board page', now: t.clock.now() });
    const page = await b.page(t.port);
    const sent: string[] = [];
    page.on('request', (request) => {
      const header = request.headers()['x-api-key'];
      if (header !== undefined) sent.push(`${new URL(request.url()).origin} ${header === key}`);
    });
    const sockets: string[] = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));
    await page.goto(`http://127.0.0.1:${t.port}/`);
    await page.waitForSelector('[data-stat="feed"][data-state="needs-key"]', { timeout: 30_000 });
    assert.equal(await page.$('.grid-row[data-line]'), null);

    await page.fill('input[name="apiKey"]', key);
    await page.click('.key button');
    await page.waitForSelector('.grid-row[data-line] .price[data-id]', { timeout: 30_000 });
    assert.equal(await page.evaluate(() => Object.values(localStorage).includes(document.querySelector<HTMLInputElement>('input[name="apiKey"]')!.value)), true);
    assert.ok(sent.length > 0);
    assert.deepEqual([...new Set(sent)], [`http://127.0.0.1:${t.port} true`]);

    await page.reload(); // the stored key loads the board without asking again
    await page.waitForSelector('.grid-row[data-line] .price[data-id]', { timeout: 30_000 });
    assert.ok(await eventually(async () => (await page.$eval('[data-stat="feed"]', (el) => (el as HTMLElement).dataset.state)) === 'live'));
    // the stream carries the key as its `key` parameter (a browser cannot set headers on a
    // WebSocket), to this service only, and no socket was tried before a key was stored
    assert.equal(await page.$eval('[data-stat="feed"]', (el) => (el as HTMLElement).dataset.feed), 'stream');
    assert.ok(sockets.length >= 2);
    assert.deepEqual([...new Set(sockets)], [`ws://127.0.0.1:${t.port}/api/v1/stream?key=${encodeURIComponent(key)}`]);
    // 401s while no key was stored are the service's answer, not a page error; nothing else may be logged
    assert.deepEqual(b.problems.filter((p) => !/status of 401/.test(p)), []);
  });
});
