// The quotes of one market group, as reusable typed columns. The engine adapter
// refills one batch per change from its own columns (strings are the engine's
// interned references, so a refill allocates nothing); every evaluation reads it.
// QuoteSource (below) is how a book asks the engine to refill it.

import { grown } from '../columns.ts';
import type { SourceTable } from './sourceTable.ts';

export class QuoteBatch {
  length = 0;
  /** Quotes from DFS sources in this batch (lets books skip groups without any). */
  dfsCount = 0;
  /** The row's ref (engine slot), set by SignalBooks after each pushQuote; -1 when unknown. */
  ref: Int32Array;
  /** SourceTable index. */
  book: Int32Array;
  /** 1 when the source is DFS (copied from the SourceTable at push). */
  dfs: Uint8Array;
  /** sides.ts code. */
  side: Uint8Array;
  suspended: Uint8Array;
  /** NaN on DFS rows. */
  priceDecimal: Float64Array;
  /** 0 on DFS rows. */
  priceAmerican: Int32Array;
  /** NaN on book rows. */
  dfsMultiplier: Float64Array;
  /** The row's own line (not the group line); NaN when the row has none. */
  line: Float64Array;
  /** Epoch ms. */
  updated: Float64Array;
  oddsId: string[];
  selection: string[];
  /**
   * The selection label as the source interns it (-1 when the source does not say):
   * pushPriceQuote leaves the label's text out, and a label that changes at the same
   * price must still change what the screens compare (ScreenBook.positiveEvMark).
   */
  label: Int32Array;

  constructor(readonly sources: SourceTable, capacity = 64) {
    this.ref = new Int32Array(capacity);
    this.book = new Int32Array(capacity);
    this.dfs = new Uint8Array(capacity);
    this.side = new Uint8Array(capacity);
    this.suspended = new Uint8Array(capacity);
    this.priceDecimal = new Float64Array(capacity);
    this.priceAmerican = new Int32Array(capacity);
    this.dfsMultiplier = new Float64Array(capacity);
    this.line = new Float64Array(capacity);
    this.updated = new Float64Array(capacity);
    this.label = new Int32Array(capacity);
    this.oddsId = new Array<string>(capacity).fill('');
    this.selection = new Array<string>(capacity).fill('');
  }

  clear(): void {
    this.length = 0;
    this.dfsCount = 0;
  }

  push(
    book: number,
    side: number,
    suspended: boolean,
    priceDecimal: number,
    priceAmerican: number,
    dfsMultiplier: number,
    line: number,
    updated: number,
    oddsId: string,
    selection: string,
    label = -1,
  ): void {
    const i = this.length;
    if (i === this.book.length) this.grow();
    const dfs = this.sources.isDfs[book];
    this.ref[i] = -1;
    this.book[i] = book;
    this.dfs[i] = dfs;
    this.side[i] = side;
    this.suspended[i] = suspended ? 1 : 0;
    this.priceDecimal[i] = priceDecimal;
    this.priceAmerican[i] = priceAmerican;
    this.dfsMultiplier[i] = dfsMultiplier;
    this.line[i] = line;
    this.updated[i] = updated;
    this.oddsId[i] = oddsId;
    this.selection[i] = selection;
    this.label[i] = label;
    this.dfsCount += dfs;
    this.length = i + 1;
  }

  private grow(): void {
    const capacity = this.book.length * 2;
    this.ref = grown(this.ref, capacity, 0, 'exact');
    this.book = grown(this.book, capacity, 0, 'exact');
    this.dfs = grown(this.dfs, capacity, 0, 'exact');
    this.side = grown(this.side, capacity, 0, 'exact');
    this.suspended = grown(this.suspended, capacity, 0, 'exact');
    this.priceDecimal = grown(this.priceDecimal, capacity, 0, 'exact');
    this.priceAmerican = grown(this.priceAmerican, capacity, 0, 'exact');
    this.dfsMultiplier = grown(this.dfsMultiplier, capacity, 0, 'exact');
    this.line = grown(this.line, capacity, 0, 'exact');
    this.updated = grown(this.updated, capacity, 0, 'exact');
    this.label = grown(this.label, capacity, 0, 'exact');
    this.oddsId.length = capacity;
    this.selection.length = capacity;
    this.oddsId.fill('', capacity / 2);
    this.selection.fill('', capacity / 2);
  }
}

/** Reads one row's current quote: implement with batch.push(...) from the engine columns. */
export interface QuoteSource {
  pushQuote(ref: number, batch: QuoteBatch): void;
  /**
   * Optional: the row's decimal price when it can be an arbitrage leg (priced, not
   * suspended), else 0. With it, a tick that made an outcome's best price worse than
   * the runner-up re-ranks that outcome from prices alone instead of a full re-read.
   */
  usablePrice?(ref: number): number;
  /**
   * Optional: pushQuote without the row's strings (odds id and selection label left
   * empty). A listed arbitrage's best leg re-quoted in place reads only the quote's
   * prices and time (the record keeps its legs' strings), and building the id costs
   * more than the rest of the quote. Without it, pushQuote.
   */
  pushPriceQuote?(ref: number, batch: QuoteBatch): void;
}
