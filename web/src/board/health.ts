// The health bar: rows and books on the board (as the page holds it), price changes per
// second, the sync point the feed is at, how fresh the newest change is, and the feed state.
import type { FeedState } from './feed.ts';
import type { BoardStore } from './store.ts';

function field(name: string): [HTMLElement, HTMLElement] {
  const box = document.createElement('div');
  box.className = 'stat';
  const label = document.createElement('span');
  label.className = 'stat-label';
  label.textContent = name;
  const value = document.createElement('span');
  value.className = 'stat-value';
  value.dataset.stat = name;
  box.append(label, value);
  return [box, value];
}

function instantOf(text: string): number {
  return /^\d+$/.test(text) ? Number(text) : Date.parse(text);
}

export class HealthBar {
  readonly element: HTMLElement;
  private readonly values: Record<string, HTMLElement> = {};
  private lastChanges = 0;
  private lastAt = performance.now();
  private rate = 0;
  /** The board's as-of time at the last poll (epoch ms) and when the page got it (performance.now()). */
  private asOf = Number.NaN;
  private asOfAt = 0;

  constructor(private readonly store: BoardStore) {
    this.element = document.createElement('div');
    this.element.className = 'health';
    for (const name of ['rows', 'sportsbooks', 'updates/s', 'sync point', 'newest change', 'feed']) {
      const [box, value] = field(name);
      this.values[name] = value;
      this.element.append(box);
    }
    setInterval(() => this.tick(), 1000);
  }

  setState(state: FeedState): void {
    const feed = this.values.feed!;
    feed.dataset.state = state.kind;
    if (state.kind === 'live') {
      // which source keeps the board live: the push stream, or polling when it could not connect
      feed.textContent = `live · ${state.source}`;
      feed.dataset.feed = state.source;
      const instant = instantOf(state.updated);
      this.asOf = instant;
      this.asOfAt = performance.now();
      this.values['sync point']!.textContent = Number.isFinite(instant) ? new Date(instant).toISOString().slice(11, 23) : state.updated;
    } else if (state.kind === 'loading') feed.textContent = 'loading board…';
    else if (state.kind === 'needs-key') feed.textContent = `API key needed (${state.error})`;
    else feed.textContent = `reconnecting in ${(state.inMs / 1000).toFixed(1)} s (${state.error})`;
  }

  /** Rows and books at once; rates once a second. */
  render(): void {
    this.values.rows!.textContent = this.store.rows.size.toLocaleString('en-US');
    this.values.sportsbooks!.textContent = String(this.store.books.length);
  }

  private tick(): void {
    const now = performance.now();
    const measured = ((this.store.changes - this.lastChanges) * 1000) / (now - this.lastAt);
    this.rate = this.rate === 0 ? measured : 0.5 * this.rate + 0.5 * measured;
    this.lastChanges = this.store.changes;
    this.lastAt = now;
    this.values['updates/s']!.textContent = this.rate.toFixed(0);
    // freshness on the service's clock (which may be simulated): the board's as-of time at
    // the last poll, moved on by the time since, against the newest row the page holds
    const newest = this.store.newest;
    const age = (this.asOf - newest + (now - this.asOfAt)) / 1000;
    this.values['newest change']!.textContent = newest === 0 || !Number.isFinite(age) ? '–' : `${Math.max(0, age).toFixed(1)} s ago`;
    this.render();
  }
}
