// The live board page (GET /): health bar, filters, the virtualized odds screen, the
// arbitrage and edges panels and the line-movement chart, all fed by one BoardFeed: the
// push stream (StreamFeed), which falls back to polling only when it cannot connect.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { storedKey, storeKey } from './api.ts';
import { ArbitragePanel, EdgesPanel } from './panels.ts';
import { LineChart } from './chart.ts';
import type { BoardBootstrap } from './feed.ts';
import { OddsGrid } from './grid.ts';
import { HealthBar } from './health.ts';
import { StreamFeed } from './streamFeed.ts';
import { BoardStore, type Filters } from './store.ts';

const store = new BoardStore();
const filters: Filters = { league: '', market: '', eventId: '' };
const feed = new StreamFeed();
const health = new HealthBar(store);
const grid = new OddsGrid(store, () => filters);
const arbitrage = new ArbitragePanel();
const edges = new EdgesPanel();
const chart = new LineChart(() => store.newest);

function select(name: string, label: string): HTMLSelectElement {
  const element = document.createElement('select');
  element.name = name;
  element.title = label;
  return element;
}

const leagueSelect = select('league', 'league');
const marketSelect = select('market', 'market');
const eventSelect = select('event', 'event');

function fill(element: HTMLSelectElement, all: string, options: [string, string][], value: string): void {
  const wanted = [all, ...options.map(([v, t]) => `${v}\u0000${t}`)].join('\n');
  if (element.dataset.options !== wanted) {
    element.dataset.options = wanted;
    element.replaceChildren(new Option(all, ''), ...options.map(([v, t]) => new Option(t, v)));
  }
  element.value = options.some(([v]) => v === value) ? value : '';
}

let filterShape = -1;
function refreshFilters(): void {
  if (filterShape === store.shape) return;
  filterShape = store.shape;
  fill(leagueSelect, 'all leagues', store.leagues().map((l) => [l, l.toUpperCase()]), filters.league);
  fill(marketSelect, 'all markets', store.markets(filters.league).map((m) => [m, m]), filters.market);
  const events = store.eventsOf(filters.league);
  fill(eventSelect, 'all events', events.map((e) => [e.id, `${e.startTime.replace('T', ' ')} ${e.awayTeamId ?? ''} @ ${e.homeTeamId ?? ''} (${e.id})`]), filters.eventId);
  filters.league = leagueSelect.value;
  filters.market = marketSelect.value;
  filters.eventId = eventSelect.value;
}

function onFilter(): void {
  filters.league = leagueSelect.value;
  filters.market = marketSelect.value;
  filters.eventId = eventSelect.value;
  filterShape = -1;
  refreshFilters();
  grid.invalidate();
}
for (const element of [leagueSelect, marketSelect, eventSelect]) element.addEventListener('change', onFilter);

/** #event=<id> (the panels' links): show that event's lines. */
function followHash(): void {
  const match = /^#event=(.+)$/.exec(location.hash);
  if (match === null) return;
  const eventId = decodeURIComponent(match[1]!);
  filters.league = store.events.get(eventId)?.league ?? '';
  filters.market = '';
  filters.eventId = eventId;
  filterShape = -1;
  refreshFilters();
  eventSelect.value = eventId;
  filters.eventId = eventSelect.value;
  grid.scrollToEvent(eventId);
}
window.addEventListener('hashchange', followHash);

function keyField(): HTMLFormElement {
  const form = document.createElement('form');
  form.className = 'key';
  const input = document.createElement('input');
  input.type = 'password';
  input.name = 'apiKey';
  input.placeholder = 'API key (only if required)';
  input.autocomplete = 'off';
  input.value = storedKey();
  const button = document.createElement('button');
  button.textContent = 'use key';
  form.append(input, button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    storeKey(input.value.trim());
    if (!started) void begin();
    else {
      feed.retryNow();
      void arbitrage.refresh();
      void edges.refresh();
    }
  });
  return form;
}

function layout(): void {
  const app = document.getElementById('app')!;
  const header = document.createElement('header');
  const title = document.createElement('h1');
  title.textContent = 'Odds board';
  const docs = document.createElement('a');
  docs.href = '/docs';
  docs.textContent = 'API reference';
  header.append(title, health.element, keyField(), docs);
  const filterBar = document.createElement('div');
  filterBar.className = 'filters';
  filterBar.append(leagueSelect, marketSelect, eventSelect);
  const main = document.createElement('main');
  const board = document.createElement('section');
  board.className = 'board';
  board.append(filterBar, grid.element);
  const side = document.createElement('aside');
  side.append(arbitrage.element, edges.element, chart.element);
  main.append(board, side);
  app.append(header, main);
}

let started = false;
function load(boot: BoardBootstrap): void {
  store.reset(boot.rows, boot.events);
  filterShape = -1;
  refreshFilters();
  health.render();
  grid.invalidate();
}

async function begin(): Promise<void> {
  try {
    load(await feed.bootstrap());
  } catch (error) {
    // no board yet (a key is needed, or the service is away): the feed's retries load it
    health.setState({ kind: /401/.test(String(error)) ? 'needs-key' : 'retrying', error: error instanceof Error ? error.message : String(error), inMs: 1000 });
  }
  started = true;
  feed.start();
  arbitrage.start();
  edges.start();
  followHash();
}

/**
 * The filter menus follow the moving board at most once a second: each refresh scans
 * every line and may rebuild a menu of thousands of events, which is not worth a frame
 * each time a line comes or goes. A user's own filter change refreshes at once.
 */
const FILTER_REFRESH_MS = 1000;
let filtersDue = 0;
let lastFilterRefresh = 0;
function refreshFiltersSoon(): void {
  if (filtersDue !== 0 || filterShape === store.shape) return;
  const wait = Math.max(0, lastFilterRefresh + FILTER_REFRESH_MS - performance.now());
  filtersDue = window.setTimeout(() => {
    filtersDue = 0;
    lastFilterRefresh = performance.now();
    refreshFilters();
  }, wait);
}

store.onApplied((changed) => chart.applied(changed));
feed.onChange((rows) => {
  store.apply(rows);
  refreshFiltersSoon();
  grid.invalidate();
});
feed.onReset(load);
feed.onState((state) => health.setState(state));
grid.whenSelected((line) => void chart.show(line));

layout();
void begin();
