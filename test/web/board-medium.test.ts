// GET / on the medium board (about 100k odds rows) in headless Chromium, with the
// simulator moving the board: the odds screen stays virtualized (a few dozen row
// elements in the DOM for tens of thousands of lines) and responsive. A rule of the
// page: while the board moves and the user scrolls and filters, no task keeps the main
// thread busy for more than 200 ms.
//
// How a task is measured: the page's own PerformanceObserver counts long tasks (over
// 50 ms), but their durations are wall-clock, and on a machine shared with other work a
// 20 ms task waits on the CPU and reports 200 ms. So the rule is checked on each task's
// main-thread CPU time from Chromium's trace (RunTask events with their thread
// duration), which is what the page itself spends; the observer's long tasks are
// reported beside it. Nothing here depends on how fast the machine is.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CDPSession, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openBrowser, type TestBrowser } from '../../fixtures/harness/browser.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

const MOST_BLOCKING_MS = 200;

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

/** Starts a Chromium trace of the page's task timeline; the returned function ends it and gives its events. */
async function traceTasks(cdp: CDPSession): Promise<() => Promise<TraceEvent[]>> {
  const events: TraceEvent[] = [];
  cdp.on('Tracing.dataCollected', (data) => events.push(...(data.value as unknown as TraceEvent[])));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline', transferMode: 'ReportEvents' });
  return async () => {
    const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.end');
    await complete;
    return events;
  };
}

/** Main-thread CPU time (ms) of each task of the page's renderer, from a trace. */
function mainThreadTaskCpu(events: readonly TraceEvent[]): number[] {
  const main = new Set(events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const tasks = events.filter((e) => e.name === 'RunTask' && e.ph === 'X' && main.has(`${e.pid}:${e.tid}`));
  assert.ok(tasks.length > 0, 'the trace holds the renderer main thread\'s tasks');
  assert.ok(tasks.every((e) => e.tdur !== undefined), 'the trace gives each task\'s thread time');
  return tasks.map((e) => e.tdur! / 1000);
}

/** Waits for the page to draw two more frames (the grid redraws at most once a frame). */
async function frames(page: Page): Promise<void> {
  await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
}

async function select(page: Page, name: string, index: number): Promise<string> {
  const value = await page.$eval(`select[name="${name}"]`, (el, i) => (el as HTMLSelectElement).options[Math.min(i, (el as HTMLSelectElement).options.length - 1)]!.value, index);
  await page.selectOption(`select[name="${name}"]`, value);
  await frames(page);
  return value;
}

describe('live board page on the medium board', () => {
  let t: TestApp;
  let b: TestBrowser;
  let page: Page;
  before(async () => {
    t = await startTestApp({ size: 'medium', simulatorRate: 500 });
    b = await openBrowser();
    page = await b.page(t.port);
    await page.goto(`http://127.0.0.1:${t.port}/`);
    await page.waitForSelector('.grid-row[data-line] .price[data-id]', { timeout: 120_000 });
  });
  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('holds every row of the board but draws only the rows in view', async () => {
    const shown = async () => page.$eval('[data-stat="rows"]', (el) => Number((el.textContent ?? '').replace(/,/g, '')));
    assert.ok(t.app.engine.status().totalMarkets > 50_000, `the medium board has ${t.app.engine.status().totalMarkets} rows`);
    assert.ok(await eventually(async () => (await shown()) === t.app.engine.status().totalMarkets, 30_000), `rows: page ${await shown()}, engine ${t.app.engine.status().totalMarkets}`);
    const lines = Number(await page.$eval('.grid', (el) => (el as HTMLElement).dataset.lines));
    const elements = await page.$$eval('.grid-row', (rows) => rows.length);
    assert.ok(lines > 10_000, `lines on the screen: ${lines}`);
    assert.ok(elements < 120, `row elements in the DOM: ${elements} for ${lines} lines`);
  });

  it('scrolls and filters while the board moves without a task blocking more than 200 ms', async (context) => {
    const cdp = await page.context().newCDPSession(page);
    const endTrace = await traceTasks(cdp);
    await page.evaluate(() => {
      const w = window as unknown as { longTasks: number[] };
      w.longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.longTasks.push(entry.duration);
      }).observe({ type: 'longtask' });
    });
    // scroll: wheel steps, then jumps through the whole list (each jump draws another slice)
    await page.hover('.grid-viewport');
    for (let i = 0; i < 20; i++) {
      await page.mouse.wheel(0, 900);
      await frames(page);
    }
    const height = await page.$eval('.grid-viewport', (el) => el.scrollHeight);
    for (const fraction of [0.25, 0.5, 0.75, 0.999, 0.1]) {
      await page.$eval('.grid-viewport', (el, top) => (el.scrollTop = top), Math.floor(height * fraction));
      await frames(page);
      const drawn = await page.$$eval('.grid-row:not([hidden])', (rows) => rows.filter((r) => (r as HTMLElement).dataset.line !== undefined).length);
      assert.ok(drawn > 5, `rows drawn at ${fraction} of the list: ${drawn}`);
    }
    // filter: a league, a market of it, one event, and back to everything
    const all = Number(await page.$eval('.grid', (el) => (el as HTMLElement).dataset.lines));
    await select(page, 'league', 1);
    const league = Number(await page.$eval('.grid', (el) => (el as HTMLElement).dataset.lines));
    assert.ok(league > 0 && league < all, `one league: ${league} of ${all} lines`);
    await select(page, 'market', 1);
    const market = Number(await page.$eval('.grid', (el) => (el as HTMLElement).dataset.lines));
    assert.ok(market > 0 && market <= league, `one market of the league: ${market} of ${league} lines`);
    await select(page, 'market', 0);
    const eventId = await select(page, 'event', 1);
    const shownEvents = async () => page.$$eval('.grid-row:not([hidden])', (rows) => [...new Set(rows.map((r) => (r as HTMLElement).dataset.event))]);
    assert.ok(await eventually(async () => JSON.stringify(await shownEvents()) === JSON.stringify([eventId])), `events shown: ${(await shownEvents()).join()}, picked ${eventId}; ` + JSON.stringify(await page.$eval('.grid', (el) => ({ lines: (el as HTMLElement).dataset.lines, top: el.querySelector('.grid-viewport')!.scrollTop, h: el.querySelector('.grid-viewport')!.clientHeight, rows: el.querySelectorAll('.grid-row:not([hidden])').length, ev: (document.querySelector('select[name=event]') as HTMLSelectElement).value }))));
    for (const name of ['event', 'market', 'league']) await select(page, name, 0);
    assert.ok(await eventually(async () => Number(await page.$eval('.grid', (el) => (el as HTMLElement).dataset.lines)) >= all - 100), 'every line is back');
    // the board kept moving on the page meanwhile
    const rate = async () => page.$eval('[data-stat="updates/s"]', (el) => el.textContent ?? '');
    assert.ok(await eventually(async () => Number((await rate()).replace(/,/g, '')) > 0, 10_000), `updates/s on the page: ${await rate()}`);

    const longTasks = await page.evaluate(() => (window as unknown as { longTasks: number[] }).longTasks);
    const cpu = mainThreadTaskCpu(await endTrace());
    const busiest = [...cpu].sort((a, b) => b - a).slice(0, 5).map(Math.round);
    context.diagnostic(`${cpu.length} main-thread tasks, the busiest (ms of CPU): [${busiest.join(', ')}]; long tasks by the page's observer (ms of wall time): [${longTasks.map(Math.round).join(', ')}]`);
    assert.ok(Math.max(...cpu) <= MOST_BLOCKING_MS, `the busiest tasks took ${busiest.join(', ')} ms of main-thread CPU`);
    assert.deepEqual(b.problems, []);
  });
});
