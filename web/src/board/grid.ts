// The odds screen: one line per selection, one column per book, drawn as a fixed pool of
// row elements over a tall spacer (only the rows in view exist in the DOM), so 100k rows
// on the board cost the same to draw as 100. Redraws run at most once per animation
// frame and write a cell only when its text or class changed.
//
// More books than fit the width scroll sideways under a frozen selection column (the
// rows are as wide as every book column needs; the label cell is sticky), and each
// line's label has two lines: the selection (player, side and line: what tells the rows
// of a ladder apart) and, below it, the market and event; the whole text is its title.
import { FLASH_MS, type BoardStore, type Filters, type Line } from './store.ts';
import type { OddsRow } from './types.ts';

const ROW_HEIGHT = 38;
/** Narrowest book column: a ten-letter book name, or a price like +111011. */
const BOOK_WIDTH = 84;
const OVERSCAN = 4;

interface PooledRow {
  el: HTMLDivElement;
  label: HTMLDivElement;
  selection: HTMLDivElement;
  context: HTMLDivElement;
  cells: HTMLDivElement[];
  line: Line | null;
}

export function formatAmerican(price: number): string {
  return price > 0 ? `+${price}` : String(price);
}

function cellText(row: OddsRow | undefined): string {
  if (row === undefined) return '';
  if (row.dfsMultiplier !== undefined) return `×${row.dfsMultiplier}`;
  if (row.priceAmerican !== undefined) return formatAmerican(row.priceAmerican);
  return '';
}

export class OddsGrid {
  readonly element: HTMLDivElement;
  private readonly header: HTMLDivElement;
  private readonly viewport: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private readonly empty: HTMLDivElement;
  private pool: PooledRow[] = [];
  private books: string[] = [];
  private lines: Line[] = [];
  private seenShape = -1;
  private seenFilters = '';
  private frame = 0;
  private selected: string | null = null;
  private drewRows = false;
  private onSelect: (line: Line) => void = () => {};

  constructor(
    private readonly store: BoardStore,
    private readonly filters: () => Filters,
  ) {
    this.element = document.createElement('div');
    this.element.className = 'grid';
    this.header = document.createElement('div');
    this.header.className = 'grid-header';
    this.viewport = document.createElement('div');
    this.viewport.className = 'grid-viewport';
    this.viewport.tabIndex = 0;
    this.spacer = document.createElement('div');
    this.spacer.className = 'grid-spacer';
    this.empty = document.createElement('div');
    this.empty.className = 'grid-empty';
    this.empty.textContent = 'Loading the board…';
    this.viewport.append(this.spacer);
    this.element.append(this.header, this.viewport, this.empty);
    this.viewport.addEventListener(
      'scroll',
      () => {
        // many books make the columns wider than the board: the header follows the rows sideways
        if (this.header.scrollLeft !== this.viewport.scrollLeft) this.header.scrollLeft = this.viewport.scrollLeft;
        this.invalidate();
      },
      { passive: true },
    );
    this.viewport.addEventListener('click', (event) => {
      const target = (event.target as HTMLElement).closest<HTMLElement>('.grid-row');
      const line = target === null ? undefined : this.pool.find((row) => row.el === target)?.line;
      if (line) this.select(line);
    });
    new ResizeObserver(() => this.invalidate()).observe(this.viewport);
  }

  whenSelected(listener: (line: Line) => void): void {
    this.onSelect = listener;
  }

  select(line: Line): void {
    this.selected = line.key;
    this.onSelect(line);
    this.invalidate();
  }

  /** Scrolls so that the first line of an event is at the top. */
  scrollToEvent(eventId: string): void {
    this.refilter(true);
    const index = this.lines.findIndex((line) => line.eventId === eventId);
    if (index >= 0) this.viewport.scrollTop = index * ROW_HEIGHT;
    this.invalidate();
  }

  invalidate(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private refilter(force = false): void {
    const filters = this.filters();
    const key = `${filters.league}\u0000${filters.market}\u0000${filters.eventId}`;
    if (!force && this.seenShape === this.store.shape && this.seenFilters === key) return;
    // other filters show another list: start it at its top (the old offset may lie past its end)
    if (this.seenFilters !== key) this.viewport.scrollTop = 0;
    this.seenShape = this.store.shape;
    this.seenFilters = key;
    this.lines = this.store.select(filters);
    this.spacer.style.height = `${this.lines.length * ROW_HEIGHT}px`;
    this.empty.hidden = this.lines.length > 0;
    this.empty.textContent = this.store.loaded ? 'No lines match the filters.' : 'Loading the board…';
    this.element.dataset.lines = String(this.lines.length);
    const books = this.store.books;
    if (books.join() !== this.books.join()) this.setBooks(books);
  }

  private setBooks(books: string[]): void {
    this.books = [...books];
    this.element.style.setProperty('--books', String(books.length));
    this.element.style.setProperty('--book', `${BOOK_WIDTH}px`);
    this.element.dataset.books = String(books.length);
    this.header.replaceChildren();
    const first = document.createElement('div');
    first.className = 'grid-label';
    first.append('selection');
    // more books than fit: buttons page the book columns (as do the wheel, shift+wheel and the arrow keys)
    const paging = document.createElement('span');
    paging.className = 'grid-paging';
    for (const [text, direction, title] of [['◂', -1, 'earlier books'], ['▸', 1, 'more books']] as const) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = text;
      button.title = title;
      button.dataset.page = direction > 0 ? 'next' : 'previous';
      button.addEventListener('click', () => this.pageBooks(direction));
      paging.append(button);
    }
    first.append(paging);
    this.header.append(first);
    for (const book of books) {
      const cell = document.createElement('div');
      cell.className = 'grid-book';
      cell.textContent = book;
      cell.title = book;
      this.header.append(cell);
    }
    for (const row of this.pool) row.el.remove();
    this.pool = [];
  }

  /** Scrolls the book columns by what is in view beside the frozen selection column. */
  private pageBooks(direction: -1 | 1): void {
    const label = this.header.firstElementChild?.getBoundingClientRect().width ?? 0;
    this.viewport.scrollBy({ left: direction * Math.max(BOOK_WIDTH, this.viewport.clientWidth - label - BOOK_WIDTH / 2) });
  }

  private ensurePool(size: number): void {
    while (this.pool.length < size) {
      const el = document.createElement('div');
      el.className = 'grid-row';
      const label = document.createElement('div');
      label.className = 'grid-label';
      const selection = document.createElement('div');
      selection.className = 'grid-selection';
      const context = document.createElement('div');
      context.className = 'grid-context';
      label.append(selection, context);
      el.append(label);
      const cells: HTMLDivElement[] = [];
      for (const book of this.books) {
        const cell = document.createElement('div');
        cell.className = 'price';
        cell.dataset.book = book;
        el.append(cell);
        cells.push(cell);
      }
      this.viewport.append(el);
      this.pool.push({ el, label, selection, context, cells, line: null });
    }
  }

  private draw(): void {
    this.refilter();
    const overflows = this.viewport.scrollWidth > this.viewport.clientWidth + 1;
    if (this.element.classList.contains('grid-overflows') !== overflows) this.element.classList.toggle('grid-overflows', overflows);
    const height = this.viewport.clientHeight || 600;
    // the pooled rows are positioned children of the viewport, so rows drawn for a longer
    // list keep it scrollable past the end of a shorter one: clamp to the list's end
    const end = Math.max(0, this.lines.length * ROW_HEIGHT - height);
    if (this.viewport.scrollTop > end) this.viewport.scrollTop = end;
    const first = Math.max(0, Math.floor(Math.min(this.viewport.scrollTop, end) / ROW_HEIGHT) - OVERSCAN);
    const count = Math.min(this.lines.length - first, Math.ceil(height / ROW_HEIGHT) + 2 * OVERSCAN);
    this.ensurePool(Math.max(0, count));
    if (count > 0 && !this.drewRows) {
      this.drewRows = true;
      performance.mark('board:first-rows'); // read by the bench (time to first rows)
    }
    const now = performance.now();
    let flashing = false;
    for (let i = 0; i < this.pool.length; i++) {
      const pooled = this.pool[i]!;
      const line = i < count ? this.lines[first + i]! : null;
      if (line === null) {
        if (pooled.line !== null) {
          pooled.el.hidden = true;
          pooled.line = null;
        }
        continue;
      }
      pooled.el.hidden = false;
      pooled.line = line;
      const top = `${(first + i) * ROW_HEIGHT}px`;
      if (pooled.el.style.top !== top) pooled.el.style.top = top;
      if (pooled.el.dataset.line !== line.key) {
        pooled.el.dataset.line = line.key;
        pooled.el.dataset.event = line.eventId;
        pooled.selection.textContent = line.selection;
        pooled.context.textContent = line.context;
        pooled.label.title = `${line.label} (${line.eventId})`;
      }
      pooled.el.classList.toggle('selected', line.key === this.selected);
      for (let b = 0; b < this.books.length; b++) {
        const book = this.books[b]!;
        const cell = pooled.cells[b]!;
        const row = line.prices.get(book);
        const text = cellText(row);
        if (cell.textContent !== text) cell.textContent = text;
        const id = row?.id ?? '';
        if (cell.dataset.id !== id) {
          if (id === '') delete cell.dataset.id;
          else cell.dataset.id = id;
        }
        let className = 'price';
        if (row !== undefined) {
          if (row.suspended) className += ' suspended';
          if (line.best === book) className += ' best';
          const flash = this.store.flashes.get(row.id);
          if (flash !== undefined) {
            if (flash.until > now) {
              className += flash.up ? ' flash-up' : ' flash-down';
              flashing = true;
            } else this.store.flashes.delete(row.id);
          }
        }
        if (cell.className !== className) cell.className = className;
        const title = row === undefined ? '' : `${book}: ${row.priceDecimal ?? row.dfsMultiplier ?? ''}${row.suspended ? ' (suspended)' : ''}`;
        if (cell.title !== title) cell.title = title;
      }
    }
    // keep redrawing while a flash is fading; a moving board invalidates anyway
    if (flashing) setTimeout(() => this.invalidate(), FLASH_MS / 3);
  }
}
