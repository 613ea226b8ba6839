// The live board page in headless Chromium (fixtures/harness/browser.ts) over the real
// server: time to first rows on a still board (from navigation start to the page's
// 'board:first-rows' User Timing mark, so it includes the snapshot download and parse),
// then the frame rate and long tasks (the performance timeline's longtask entries) while
// the simulator moves the board at 1,000 updates/s. Screenshots of / and /docs go to
// bench/results/, and of /docs/stream. BENCH_WEB_BOARD picks the board (default medium).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { startApp } from '../service/app.ts';
import { openBrowser } from '../fixtures/harness/browser.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const UPDATES_PER_SECOND = 1000;
const MEASURE_MS = 10_000;
const RESULTS = 'bench/results';

export async function benchWeb(): Promise<Record<string, number | string>> {
  const size = (process.env.BENCH_WEB_BOARD ?? 'medium') as BoardSize;
  const dir = mkdtempSync(join(tmpdir(), 'odds-web-bench-'));
  const app = await startApp({ clock: new ManualClock(NOW), board: { size, seed: 42, now: NOW }, dbPath: join(dir, 'odds.db'), port: 0, simulatorRate: UPDATES_PER_SECOND, env: {} });
  app.simulator.stop(); // still while the page loads
  const browser = await openBrowser();
  try {
    const origin = `http://127.0.0.1:${app.port}`;
    const page = await browser.page(app.port);
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => performance.getEntriesByName('board:first-rows').length > 0, undefined, { timeout: 120_000 });
    const firstRowsMs = await page.evaluate(() => performance.getEntriesByName('board:first-rows')[0]!.startTime);
    const rows = await page.$eval('[data-stat="rows"]', (el) => el.textContent ?? '');

    app.simulator.start();
    await page.evaluate(() => {
      const w = window as unknown as { longTasks: number[] };
      w.longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.longTasks.push(entry.duration);
      }).observe({ type: 'longtask' });
    });
    // a string, not a function: tsx would wrap the inner function in a helper the page lacks
    const moving = (await page.evaluate(`new Promise((resolve) => {
      let frames = 0, worst = 0;
      const start = performance.now();
      let last = start;
      requestAnimationFrame(function frame(now) {
        frames++;
        worst = Math.max(worst, now - last);
        last = now;
        if (now - start < ${MEASURE_MS}) requestAnimationFrame(frame);
        else resolve({ fps: (frames * 1000) / (now - start), worstFrameMs: worst });
      });
    })`)) as { fps: number; worstFrameMs: number };
    const longTasks = await page.evaluate(() => (window as unknown as { longTasks: number[] }).longTasks);
    const updatesShown = await page.$eval('[data-stat="updates/s"]', (el) => el.textContent ?? '');
    mkdirSync(RESULTS, { recursive: true });
    // the screenshot shows a line's movement too: the first line on screen, charted
    await page.click('.grid-row[data-line] .grid-label');
    await page.waitForSelector('.chart[data-state="drawn"]', { timeout: 60_000 });
    await page.screenshot({ path: join(RESULTS, 'web-board.png') });
    app.simulator.stop();

    const docs = await browser.page(app.port);
    await docs.goto(`${origin}/docs`);
    await docs.waitForSelector('[data-section-id^="operation/"]', { timeout: 60_000 });
    await docs.screenshot({ path: join(RESULTS, 'web-docs.png') });
    const streamDocs = await browser.page(app.port);
    await streamDocs.goto(`${origin}/docs/stream`);
    await streamDocs.waitForSelector('#asyncapi[data-state="rendered"]', { timeout: 60_000 });
    await streamDocs.screenshot({ path: join(RESULTS, 'web-docs-stream.png') });

    return {
      board: size,
      'rows on the page': rows,
      'time to first rows (ms)': Math.round(firstRowsMs),
      [`frames/s at ${UPDATES_PER_SECOND} updates/s (${MEASURE_MS / 1000} s)`]: Number(moving.fps.toFixed(1)),
      'worst frame gap (ms)': Math.round(moving.worstFrameMs),
      'long tasks (>50 ms)': longTasks.length,
      'long tasks total (ms)': Math.round(longTasks.reduce((a, b) => a + b, 0)),
      'updates/s the page counted': updatesShown,
      'problems (console errors, foreign requests)': browser.problems.length,
      screenshots: `${RESULTS}/web-board.png, ${RESULTS}/web-docs.png, ${RESULTS}/web-docs-stream.png`,
    };
  } finally {
    await browser.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
