// A selection's line movement across books: each book's price history (from
// /api/v1/historical/price-history, which answers that one selection at every book, so
// picking a line never downloads the board) as a stepped line of decimal prices, one
// point per history entry, extended live by the feed's changes to those rows. Once the
// event has started, its start is marked with each book's opening price (first entry)
// and closing price (the one in force at the start).
import uPlot from 'uplot';
import { getJson } from './api.ts';
import { lineKeyOf, type Line } from './store.ts';
import type { Envelope, OddsRow, PriceHistoryEntry, SelectionHistoryRow } from './types.ts';

interface Series {
  book: string;
  xs: number[];
  ys: number[];
}

const COLORS = ['#2563eb', '#dc2626', '#059669', '#d97706', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#9333ea', '#ea580c', '#0d9488', '#4f46e5'];

function valueOf(entry: PriceHistoryEntry): number | null {
  return entry.pd ?? entry.dm ?? null;
}

function rowValue(row: OddsRow): number | null {
  return row.priceDecimal ?? row.dfsMultiplier ?? null;
}

/** minute precision, no zone: UTC */
function startSeconds(eventStartTime: string): number {
  return Date.parse(`${eventStartTime}:00Z`) / 1000;
}

export class LineChart {
  readonly element: HTMLElement;
  private readonly title: HTMLHeadingElement;
  private readonly plotBox: HTMLDivElement;
  private readonly marks: HTMLDListElement;
  private plot: uPlot | null = null;
  private line: Line | null = null;
  private series: Series[] = [];
  private start = 0;
  private started = false;
  private request = 0;

  /** boardTime: the newest change the page holds (epoch ms), the service's clock as far as the page knows it. */
  constructor(private readonly boardTime: () => number) {
    this.element = document.createElement('section');
    this.element.className = 'panel chart';
    this.title = document.createElement('h2');
    this.title.textContent = 'Line movement (pick a line)';
    this.plotBox = document.createElement('div');
    this.plotBox.className = 'chart-plot';
    this.marks = document.createElement('dl');
    this.marks.className = 'chart-marks';
    this.element.append(this.title, this.plotBox, this.marks);
  }

  async show(line: Line): Promise<void> {
    const request = ++this.request;
    this.line = line;
    this.title.textContent = `Line movement: ${line.label}`;
    this.element.dataset.line = line.key;
    this.element.dataset.state = 'loading';
    const anyRow = line.prices.values().next().value as OddsRow | undefined;
    if (anyRow === undefined) return;
    let reply: Envelope<SelectionHistoryRow>;
    try {
      reply = await getJson<Envelope<SelectionHistoryRow>>(`/api/v1/historical/price-history?id=${encodeURIComponent(anyRow.id)}`);
    } catch (error) {
      if (request !== this.request) return;
      this.element.dataset.state = 'failed';
      this.title.textContent = `Line movement: ${error instanceof Error ? error.message : String(error)}`;
      return;
    }
    if (request !== this.request) return;
    const rows = reply.data.filter((row) => row.removed !== true);
    this.series = rows.map((row) => {
      const xs: number[] = [];
      const ys: number[] = [];
      for (const entry of row.priceHistory) {
        const value = valueOf(entry);
        if (value === null) continue;
        xs.push(entry.fs);
        ys.push(value);
      }
      return { book: row.sportsbook, xs, ys };
    });
    this.start = rows.length > 0 ? startSeconds(rows[0]!.eventStartTime) : 0;
    this.started = rows.length > 0 && this.start * 1000 <= Math.max(this.boardTime(), Date.parse(reply.meta.updated));
    this.draw();
  }

  /** Feed changes: a changed price of a charted row becomes a new point. */
  applied(changed: readonly OddsRow[]): void {
    if (this.line === null || this.plot === null) return;
    let grew = false;
    for (const row of changed) {
      if (row.removed === true || lineKeyOf(row.id) !== this.line.key) continue;
      const value = rowValue(row);
      const series = this.series.find((s) => s.book === row.sportsbook);
      if (value === null || series === undefined) continue;
      const x = Date.parse(row.updated) / 1000;
      const lastX = series.xs[series.xs.length - 1];
      if (series.ys[series.ys.length - 1] === value || (lastX !== undefined && x < lastX)) continue;
      series.xs.push(x);
      series.ys.push(value);
      grew = true;
    }
    if (grew) this.draw();
  }

  /**
   * One x slot per point (every other series null there), so points that share a second
   * (history times are whole seconds) each keep their own slot and are all drawn.
   */
  private data(): uPlot.AlignedData {
    const slots: { x: number; series: number; y: number }[] = [];
    this.series.forEach((s, series) => s.xs.forEach((x, i) => slots.push({ x, series, y: s.ys[i]! })));
    slots.sort((a, b) => a.x - b.x); // stable: a series keeps its own order within a second
    const xs = slots.map((slot) => slot.x);
    const columns = this.series.map(() => new Array<number | null>(slots.length).fill(null));
    slots.forEach((slot, i) => (columns[slot.series]![i] = slot.y));
    return [xs, ...columns] as uPlot.AlignedData;
  }

  private draw(): void {
    this.plot?.destroy();
    this.plot = null;
    const data = this.data();
    const width = Math.max(280, this.plotBox.clientWidth || this.element.clientWidth - 16);
    const stepped = uPlot.paths.stepped!({ align: 1 });
    const opts: uPlot.Options = {
      width,
      height: 220,
      scales: { x: { time: true } },
      legend: { show: true },
      series: [
        {},
        ...this.series.map((s, i) => ({
          label: s.book,
          stroke: COLORS[i % COLORS.length],
          width: 1.5,
          spanGaps: true,
          paths: stepped,
          points: { show: true, size: 5 },
        })),
      ],
      hooks: { draw: [(u: uPlot) => this.drawMarks(u)] },
    };
    this.plot = new uPlot(opts, data, this.plotBox);
    const points: Record<string, number> = {};
    this.series.forEach((s, i) => (points[s.book] = (data[i + 1] as (number | null)[]).filter((v) => v !== null).length));
    this.element.dataset.points = JSON.stringify(points);
    this.element.dataset.started = String(this.started);
    this.element.dataset.state = 'drawn';
    this.renderMarks();
  }

  private closingOf(s: Series): number | null {
    let value: number | null = null;
    for (let i = 0; i < s.xs.length && s.xs[i]! <= this.start; i++) value = s.ys[i]!;
    return value;
  }

  /** The event start as a dashed line, each book's opening (square) and closing (ring) price. */
  private drawMarks(u: uPlot): void {
    if (!this.started) return;
    const ctx = u.ctx;
    const x = u.valToPos(this.start, 'x', true);
    ctx.save();
    ctx.strokeStyle = '#6b7280';
    ctx.setLineDash([4, 4]);
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.setLineDash([]);
    this.series.forEach((s, i) => {
      ctx.strokeStyle = COLORS[i % COLORS.length]!;
      ctx.lineWidth = 2;
      if (s.xs.length > 0) {
        const ox = u.valToPos(s.xs[0]!, 'x', true);
        const oy = u.valToPos(s.ys[0]!, 'y', true);
        ctx.strokeRect(ox - 4, oy - 4, 8, 8);
      }
      const closing = this.closingOf(s);
      if (closing !== null) {
        ctx.beginPath();
        ctx.arc(x, u.valToPos(closing, 'y', true), 5, 0, 2 * Math.PI);
        ctx.stroke();
      }
    });
    ctx.restore();
  }

  private renderMarks(): void {
    this.marks.replaceChildren();
    if (!this.started) return;
    for (const s of this.series) {
      const dt = document.createElement('dt');
      dt.textContent = s.book;
      const dd = document.createElement('dd');
      const closing = this.closingOf(s);
      dd.textContent = `open ${s.ys[0]?.toFixed(3) ?? '–'} · close ${closing?.toFixed(3) ?? '–'}`;
      this.marks.append(dt, dd);
    }
  }
}
