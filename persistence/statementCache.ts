// Optional filters change a query's WHERE clause, and a clause like
// `(? IS NULL OR league = ?)` hides the index from SQLite's planner. So each
// combination of filters present (a "shape") gets its own SQL, compiled the first
// time that shape is asked for and reused after: at most 2^filters statements.

import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';

export class StatementCache {
  private readonly byShape = new Map<number, Statement>();
  constructor(
    private readonly db: Db,
    private readonly sqlFor: (shape: number) => string,
  ) {}

  get(shape: number): Statement {
    let statement = this.byShape.get(shape);
    if (statement === undefined) {
      statement = this.db.prepare(this.sqlFor(shape)).raw(true);
      this.byShape.set(shape, statement);
    }
    return statement;
  }
}
