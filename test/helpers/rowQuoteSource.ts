// A QuoteSource over plain OddsInput objects held by ref: the shape the engine
// adapter implements over its columns, used by tests and the bench (and handy for
// anything that holds rows as objects).

import { americanToDecimal, oddsId, type OddsInput } from '../../engine/model.ts';
import type { QuoteBatch } from '../../engine/signals/quoteBatch.ts';
import type { QuoteSource } from '../../engine/signals/quoteBatch.ts';
import { sideCode } from '../../engine/signals/sides.ts';
import type { SourceTable } from '../../engine/signals/sourceTable.ts';

export class RowQuoteSource implements QuoteSource {
  readonly rows: (OddsInput | undefined)[] = [];
  private readonly ids: string[] = [];
  private readonly books: number[] = [];

  constructor(readonly sources: SourceTable) {}

  /** Stores (a copy of) row at ref. */
  set(ref: number, row: OddsInput): void {
    this.rows[ref] = { ...row };
    this.ids[ref] = oddsId(row);
    this.books[ref] = this.sources.intern(row.sportsbook, row.dfsMultiplier !== null ? 'dfs' : 'retail');
  }

  delete(ref: number): void {
    this.rows[ref] = undefined;
  }

  idOf(ref: number): string {
    return this.ids[ref];
  }

  usablePrice(ref: number): number {
    const row = this.rows[ref]!;
    return row.priceAmerican === null || row.suspended ? 0 : americanToDecimal(row.priceAmerican);
  }

  pushQuote(ref: number, batch: QuoteBatch): void {
    const row = this.rows[ref]!;
    const american = row.priceAmerican;
    batch.push(
      this.books[ref],
      sideCode(row.side),
      row.suspended,
      american === null ? NaN : americanToDecimal(american),
      american ?? 0,
      row.dfsMultiplier ?? NaN,
      row.line ?? NaN,
      row.updated,
      this.ids[ref],
      row.selection,
    );
  }
}
