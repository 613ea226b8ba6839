// The arbitrage and DFS edges panels: kept lists from /arbitrage and /edges, polled once
// a second (the browser revalidates with If-None-Match, so an unchanged list is a 304).
// Each row links to its event on the odds screen (#event=<id>).
import { marketWords, selectionOf } from './marketWords.ts';
import { getJson } from './api.ts';
import { formatAmerican } from './grid.ts';
import type { Arbitrage, Edge, Envelope } from './types.ts';

const REFRESH_MS = 1000;
export const DEVIG_METHODS = ['multiplicative', 'additive', 'power', 'shin', 'worst', 'odds_ratio', 'wpo', 'balanced_book', 'jensen_shannon'] as const;

function percent(value: number): string {
  return `${(value * 100).toFixed(2)}%`;
}

function eventLink(eventId: string, text: string): HTMLAnchorElement {
  const a = document.createElement('a');
  a.href = `#event=${encodeURIComponent(eventId)}`;
  a.textContent = text;
  return a;
}

abstract class ListPanel<T extends { id: string }> {
  readonly element: HTMLElement;
  protected readonly list: HTMLOListElement;
  protected readonly status: HTMLSpanElement;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastSignature = '';

  constructor(title: string, className: string) {
    this.element = document.createElement('section');
    this.element.className = `panel ${className}`;
    const heading = document.createElement('h2');
    heading.textContent = title;
    this.status = document.createElement('span');
    this.status.className = 'panel-status';
    heading.append(' ', this.status);
    this.list = document.createElement('ol');
    this.element.append(heading, this.list);
  }

  protected abstract path(): string;
  protected abstract item(entry: T): HTMLLIElement;

  start(): void {
    void this.refresh();
  }

  async refresh(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    try {
      const body = await getJson<Envelope<T>>(this.path());
      // redraw only when the list changed (a 304 gives the same body back)
      const signature = JSON.stringify(body.data);
      if (signature !== this.lastSignature) {
        this.lastSignature = signature;
        this.list.replaceChildren(...body.data.map((entry) => this.item(entry)));
      }
      this.status.textContent = `${body.data.length}${body.nextCursor === null ? '' : '+'}`;
      this.element.classList.remove('failing');
    } catch (error) {
      this.status.textContent = error instanceof Error ? error.message : String(error);
      this.element.classList.add('failing');
    }
    this.timer = setTimeout(() => void this.refresh(), REFRESH_MS);
  }
}

export class ArbitragePanel extends ListPanel<Arbitrage> {
  constructor() {
    super('Arbitrage', 'arbitrage');
  }

  protected path(): string {
    return '/api/v1/arbitrage?limit=50';
  }

  protected item(arb: Arbitrage): HTMLLIElement {
    const li = document.createElement('li');
    li.dataset.id = arb.id;
    const profit = document.createElement('strong');
    profit.textContent = percent(arb.profit);
    const legs = arb.legs.map((leg) => `${leg.selection} ${formatAmerican(leg.priceAmerican)} @ ${leg.sportsbook} (${percent(leg.stake)})`).join(' / ');
    const line = arb.line === null ? '' : ` ${arb.line}`;
    li.append(profit, ' ', eventLink(arb.eventId, `${arb.league.toUpperCase()} ${arb.eventId}`), ` ${marketWords(arb.marketSubtype)}${line}: ${legs}`);
    return li;
  }
}

export class EdgesPanel extends ListPanel<Edge> {
  private devig: (typeof DEVIG_METHODS)[number] = 'multiplicative';

  constructor() {
    super('DFS edges', 'edges');
    const select = document.createElement('select');
    select.name = 'devig';
    select.title = 'devig method';
    for (const method of DEVIG_METHODS) select.append(new Option(method, method));
    select.addEventListener('change', () => {
      this.devig = select.value as (typeof DEVIG_METHODS)[number];
      void this.refresh();
    });
    this.element.querySelector('h2')!.append(' ', select);
  }

  protected path(): string {
    return `/api/v1/edges?limit=50&devig=${this.devig}`;
  }

  protected item(edge: Edge): HTMLLIElement {
    const li = document.createElement('li');
    li.dataset.id = edge.id;
    const value = document.createElement('strong');
    value.textContent = percent(edge.edge);
    const selection = selectionOf({ selection: edge.selection, playerName: edge.playerName ?? undefined });
    li.append(value, ' ', eventLink(edge.eventId, `${edge.league.toUpperCase()} ${edge.eventId}`), ` ${edge.source} ${selection} ×${edge.dfsMultiplier} (fair ${formatAmerican(edge.fairPriceAmerican)})`);
    return li;
  }
}
