// GET / in headless Chromium at the widths people use (1280, 1440, 1920 px): every book
// column can be brought into view (scrolled sideways with the mouse wheel, as a user
// does) while the selection column stays frozen at the left; each line's label is
// readable (the selection, which tells the rows of a ladder apart, is not cut, and the
// full text is its title) and names a player once; the screen says it is loading, never
// "No lines match the filters.", before the board arrives; and no request of the page
// fails (the site icon included). Saves the 1440x900 screen to
// bench/results/board-1440x900.png.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { openBrowser, type TestBrowser } from '../../fixtures/harness/browser.ts';

const RESULTS = join(import.meta.dirname, '..', '..', 'bench', 'results');

/** Every text the empty-list message shows while visible, recorded from the page's first script on. */
function recordEmptyMessages(): void {
  const seen: string[] = [];
  (window as unknown as { emptyMessages: string[] }).emptyMessages = seen;
  const note = () => {
    const empty = document.querySelector<HTMLElement>('.grid-empty');
    const lines = document.querySelectorAll('.grid-row[data-line]').length;
    if (empty !== null && !empty.hidden && seen.at(-1) !== `${empty.textContent}|${lines}`) seen.push(`${empty.textContent}|${lines}`);
  };
  new MutationObserver(note).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
}

interface BookView {
  book: string;
  /** Whether the header cell and the first row's price cell were both wholly visible, right of the frozen column. */
  seen: boolean;
}

/** Scrolls the grid from its left edge to its right edge with the mouse wheel, noting each book column seen whole. */
async function booksSeenWhileScrolling(page: Page): Promise<{ books: BookView[]; labelStayed: boolean; scrolled: number }> {
  const viewport = page.locator('.grid-viewport');
  await viewport.evaluate((el) => (el.scrollLeft = 0));
  const box = (await viewport.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const seen = new Map<string, boolean>();
  let labelStayed = true;
  for (let step = 0; step < 60; step++) {
    const view = await page.evaluate(() => {
      const port = document.querySelector('.grid-viewport')!.getBoundingClientRect();
      const firstRow = document.querySelector<HTMLElement>('.grid-row[data-line]:not([hidden])')!;
      const label = firstRow.querySelector('.grid-label')!.getBoundingClientRect();
      const cells = [...document.querySelectorAll<HTMLElement>('.grid-header .grid-book')].map((cell, index) => {
        const head = cell.getBoundingClientRect();
        const price = firstRow.querySelectorAll('.price')[index]!.getBoundingClientRect();
        const whole = (r: DOMRect) => r.left >= label.right - 1 && r.right <= port.right + 1 && r.width > 40;
        return { book: cell.textContent ?? '', seen: whole(head) && whole(price) };
      });
      const scroller = document.querySelector<HTMLElement>('.grid-viewport')!;
      return { cells, labelAtLeft: Math.abs(label.left - port.left) <= 1, left: scroller.scrollLeft, end: scroller.scrollLeft + scroller.clientWidth >= scroller.scrollWidth - 1 };
    });
    for (const cell of view.cells) seen.set(cell.book, (seen.get(cell.book) ?? false) || cell.seen);
    labelStayed &&= view.labelAtLeft;
    if (view.end) break;
    await page.mouse.wheel(240, 0);
    await page.waitForFunction((before) => document.querySelector('.grid-viewport')!.scrollLeft !== before, view.left, { timeout: 5000 });
  }
  const scrolled = await viewport.evaluate((el) => el.scrollLeft);
  return { books: [...seen].map(([book, s]) => ({ book, seen: s })), labelStayed, scrolled };
}

describe('board page layout', () => {
  let t: TestApp;
  let b: TestBrowser;
  let page: Page;
  const failed: string[] = [];

  before(async () => {
    t = await startTestApp({ simulatorRate: 20 });
    b = await openBrowser();
    page = await b.page(t.port);
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    page.on('requestfailed', (request) => failed.push(`failed ${request.url()}`));
    // tsx compiles this file keeping function names through a helper, __name, that the
    // functions handed to the page call; the page needs it defined
    await page.addInitScript('window.__name = (target) => target;');
    await page.addInitScript(recordEmptyMessages);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`http://127.0.0.1:${t.port}/`);
    await page.waitForSelector('.grid-row[data-line] .price[data-id]', { timeout: 30_000 });
  });
  after(async () => {
    await b?.close();
    await t?.close();
  });

  it('says it is loading until the board arrives, never that no line matches', async () => {
    const messages = await page.evaluate(() => (window as unknown as { emptyMessages: string[] }).emptyMessages);
    assert.ok(messages.length > 0 && messages[0]!.startsWith('Loading the board'), `messages: ${JSON.stringify(messages)}`);
    assert.ok(!messages.some((m) => m.startsWith('No lines match')), `messages: ${JSON.stringify(messages)}`);
  });

  for (const width of [1440, 1280, 1920]) {
    it(`at ${width}x900 every book column can be scrolled into view beside the frozen selection column`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForFunction(() => document.querySelectorAll('.grid-row[data-line]:not([hidden])').length > 5);
      const books = t.app.engine.status().sportsbooks;
      const { books: views, labelStayed, scrolled } = await booksSeenWhileScrolling(page);
      assert.equal(views.length, books, 'a header cell per book');
      assert.deepEqual(views.filter((v) => !v.seen).map((v) => v.book), [], 'books never wholly in view');
      assert.ok(labelStayed, 'the selection column stays at the left edge while the books scroll');
      if (width === 1440) {
        // the ▸ button pages the books too, and ◂ brings the first ones back
        await page.locator('.grid-viewport').evaluate((el) => (el.scrollLeft = 0));
        await page.click('.grid-paging button[data-page="next"]');
        await page.waitForFunction(() => document.querySelector('.grid-viewport')!.scrollLeft > 0, undefined, { timeout: 5000 });
        await page.click('.grid-paging button[data-page="previous"]');
        await page.waitForFunction(() => document.querySelector('.grid-viewport')!.scrollLeft === 0, undefined, { timeout: 5000 });
        // the case the layout exists for: more books than fit, so the test scrolled
        assert.ok(scrolled > 0, 'at 1440 px the books do not all fit: the grid scrolls sideways');
        mkdirSync(RESULTS, { recursive: true });
        await page.locator('.grid-viewport').evaluate((el) => (el.scrollLeft = 0));
        await page.screenshot({ path: join(RESULTS, 'board-1440x900.png') });
      }
    });
  }

  it('labels are readable: the selection is not cut, the full text is the title, a player is named once', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    // a market with player ladders: the case where cut labels looked identical
    const market = await page.$$eval('select[name=market] option', (options) => options.map((o) => (o as HTMLOptionElement).value).find((v) => /player|milestone/i.test(v)) ?? '');
    if (market !== '') {
      await page.selectOption('select[name=market]', market);
      await page.waitForFunction(() => document.querySelectorAll('.grid-row[data-line]:not([hidden])').length > 5);
    }
    const labels = await page.$$eval('.grid-row[data-line]:not([hidden])', (rows) =>
      rows.map((row) => {
        const selection = row.querySelector<HTMLElement>('.grid-selection')!;
        const context = row.querySelector<HTMLElement>('.grid-context')!;
        return { selection: selection.textContent ?? '', context: context.textContent ?? '', cut: selection.scrollWidth > selection.clientWidth + 1, title: row.querySelector<HTMLElement>('.grid-label')!.title };
      }),
    );
    assert.ok(labels.length > 5, `rows drawn: ${labels.length}`);
    const problems: string[] = [];
    for (const label of labels) {
      if (label.cut) problems.push(`cut: ${label.selection}`);
      if (!label.title.includes(label.selection) || !label.title.includes(label.context)) problems.push(`title without the full label: ${label.title}`);
      const doubled = /\b(\p{Lu}\p{L}+ \p{Lu}\p{L}+)\b.*\b\1\b/u.exec(label.selection);
      if (doubled !== null) problems.push(`name twice: ${label.selection}`);
    }
    const texts = labels.map((l) => `${l.selection} | ${l.context}`);
    const repeated = texts.filter((text, i) => texts.indexOf(text) !== i);
    assert.deepEqual(problems, []);
    assert.deepEqual(repeated, [], 'two rows on screen read the same');
    // the DFS edges panel names each pick's player once too
    await page.waitForFunction(() => document.querySelectorAll('.panel.edges li').length > 0, undefined, { timeout: 15_000 });
    const edges = await page.$$eval('.panel.edges li', (items) => items.map((li) => li.textContent ?? ''));
    assert.deepEqual(edges.filter((text) => /\b(\p{Lu}\p{L}+ \p{Lu}\p{L}+) \1\b/u.test(text)), [], 'edges naming a player twice');
    await page.selectOption('select[name=market]', '');
  });

  it('no request of the page fails; the site icon is linked and served', async () => {
    const icon = await page.$eval('link[rel=icon]', (link) => (link as HTMLLinkElement).href);
    const answer = await fetch(icon);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'image/svg+xml');
    const fixed = await fetch(`http://127.0.0.1:${t.port}/favicon.ico`);
    assert.equal(fixed.status, 200);
    assert.deepEqual(failed, []);
    assert.deepEqual(b.problems, []);
  });
});
