// Multi-row INSERT: one statement binds BATCH rows at once, so a bulk load makes
// BATCH times fewer trips into SQLite than row-at-a-time inserts. Both statements
// (full batch and single row for the tail) are compiled once per inserter.

import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';

const BATCH = 64;

type Value = string | number | bigint | null;

export class BatchInserter {
  private readonly many: Statement;
  private readonly one: Statement;
  private readonly width: number;
  private readonly buffer: Value[];
  private fill = 0;
  count = 0;

  constructor(db: Db, table: string, columns: readonly string[]) {
    this.width = columns.length;
    const tuple = `(${columns.map(() => '?').join(',')})`;
    const head = `INSERT INTO ${table} (${columns.join(',')}) VALUES `;
    this.many = db.prepare(head + new Array(BATCH).fill(tuple).join(','));
    this.one = db.prepare(head + tuple);
    this.buffer = new Array(BATCH * this.width).fill(null);
  }

  /** Queues one row; values in the column order given to the constructor. */
  add(...values: Value[]): void {
    if (values.length !== this.width) throw new Error(`expected ${this.width} values, got ${values.length}`);
    const base = this.fill * this.width;
    for (let i = 0; i < this.width; i++) this.buffer[base + i] = values[i]!;
    this.fill++;
    this.count++;
    if (this.fill === BATCH) {
      this.many.run(this.buffer);
      this.fill = 0;
    }
  }

  /** Writes the rows still queued. Call before the transaction ends. */
  finish(): number {
    for (let r = 0; r < this.fill; r++) {
      this.one.run(this.buffer.slice(r * this.width, (r + 1) * this.width));
    }
    this.fill = 0;
    return this.count;
  }
}
