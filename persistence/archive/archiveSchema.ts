// The row schema of the tick archive: one definition, from which the staging table,
// the Parquet files' columns, docs/archive.md's table and the routes' reading of rows
// are all derived. One row per accepted change (a price tick, a suspension toggle, an
// odds upsert, a removal, an event status change), in the order of the log:
// (seq, pos) is the log record's index and the change's place in it, so every
// acknowledged change has exactly one key and the keys sort in the order the board
// applied them.
//
// Price fields hold what the change carried: on a 'price' row a null price_american
// (or dfs_multiplier, suspended) means the tick left that field as it was (a
// suspension toggle carries no price). The routes carry the last price forward
// (archiveHistory.ts); an 'upsert' row carries every field.

import { createHash } from 'node:crypto';

export type ArchiveKind = 'price' | 'upsert' | 'remove' | 'status';

export interface ArchiveColumn {
  name: keyof ArchiveRow;
  /** The DuckDB (and so the Parquet) type. */
  type: 'BIGINT' | 'INTEGER' | 'DOUBLE' | 'BOOLEAN' | 'VARCHAR';
  doc: string;
}

export interface ArchiveRow {
  seq: number;
  pos: number;
  time_ms: number;
  kind: ArchiveKind;
  odds_id: string | null;
  event_id: string;
  league: string | null;
  book: string | null;
  market: string | null;
  market_subtype: string | null;
  selection_id: string | null;
  selection: string | null;
  line: number | null;
  price_american: number | null;
  dfs_multiplier: number | null;
  suspended: boolean | null;
  event_status: string | null;
  event_start_ms: number | null;
  /**
   * The rows the change removed, as the board held them (a JSON array of OddsInput
   * objects, each with its `updated`): one on a remove, every row an event's final or
   * cancelled status dropped. Null on other changes, and where the board no longer
   * held them when archived (the replay window then does not answer across it).
   */
  removed_rows: string | null;
}

export const ARCHIVE_COLUMNS: readonly ArchiveColumn[] = [
  { name: 'seq', type: 'BIGINT', doc: 'index of the write-ahead log record the change came in (1, 2, 3... with no gap)' },
  { name: 'pos', type: 'INTEGER', doc: "the change's place in its record, from 0: (seq, pos) is unique and sorts in apply order" },
  { name: 'time_ms', type: 'BIGINT', doc: 'when the board applied the record, epoch milliseconds (UTC)' },
  { name: 'kind', type: 'VARCHAR', doc: 'price (a tick: a new price and/or a suspension toggle), upsert (a row created or rewritten), remove, status (an event status change)' },
  { name: 'odds_id', type: 'VARCHAR', doc: 'the row: {event_id}:{book}:{market_subtype}:{selection_id}; null on status rows' },
  { name: 'event_id', type: 'VARCHAR', doc: 'the event' },
  { name: 'league', type: 'VARCHAR', doc: "the event's league (null when the board no longer knew the event when the change was archived)" },
  { name: 'book', type: 'VARCHAR', doc: 'the sportsbook (or DFS source) id' },
  { name: 'market', type: 'VARCHAR', doc: 'the market type (moneyline, spread, total, ...), from the row as the board held it' },
  { name: 'market_subtype', type: 'VARCHAR', doc: 'the market subtype (the third part of the odds id)' },
  { name: 'selection_id', type: 'VARCHAR', doc: 'the selection (the fourth part of the odds id)' },
  { name: 'selection', type: 'VARCHAR', doc: "the selection's name" },
  { name: 'line', type: 'DOUBLE', doc: 'the line (spread, total); null on moneylines and futures' },
  { name: 'price_american', type: 'INTEGER', doc: 'American price the change set; null: not set by this change (or a DFS row)' },
  { name: 'dfs_multiplier', type: 'DOUBLE', doc: 'DFS payout multiplier the change set; null: not set by this change (or a book row)' },
  { name: 'suspended', type: 'BOOLEAN', doc: 'suspension the change set; null: not set by this change' },
  { name: 'event_status', type: 'VARCHAR', doc: 'the new event status (status rows only)' },
  { name: 'event_start_ms', type: 'BIGINT', doc: "the event's start, epoch ms, as the board held it when the change was archived" },
  { name: 'removed_rows', type: 'VARCHAR', doc: 'remove rows, and status rows that ended an event: the removed rows as the board held them (JSON array of odds rows with their updated time); the delta feed answers from it past the tombstones it still holds' },
];

/** The staging table's CREATE statement. */
export function createTableSql(table: string): string {
  return `CREATE TABLE ${table} (${ARCHIVE_COLUMNS.map((c) => `${c.name} ${c.type}`).join(', ')})`;
}

/**
 * The columns a selection's price path is built from (seq, pos, time, kind, the row, its
 * book, selection and line, and what the change set): what a read of odds rows' history
 * asks DuckDB for. Each column asked costs in every row group a file holds, so the others
 * (names, league, status, removed rows) are not read there.
 */
export const TICK_COLUMNS = ['seq', 'pos', 'time_ms', 'kind', 'odds_id', 'book', 'selection_id', 'line', 'price_american', 'dfs_multiplier', 'suspended'] as const satisfies readonly (keyof ArchiveRow)[];

/** An archive row with only TICK_COLUMNS. */
export type TickRow = Pick<ArchiveRow, (typeof TICK_COLUMNS)[number]>;

/** The column list, in schema order, for SELECT and COPY. */
export const COLUMN_LIST = ARCHIVE_COLUMNS.map((c) => c.name).join(', ');

/** event_key as SQL, over a row's event_id. */
export const EVENT_KEY_SQL = 'substr(md5(event_id), 1, 8)';

/**
 * Merged files (and exports) carry one more column after the row's: `event_key`, the
 * first 8 hex digits of md5(event_id), and are sorted by it, then odds_id, seq, pos.
 * Why not by odds_id alone: DuckDB prunes row groups by their min/max statistics, and it
 * keeps only the first 8 bytes of a string's; odds ids begin with the event id
 * (`nfl-20261121-BUF-KC:...`), whose first 8 bytes are the same for a whole league's
 * season, so min/max on odds_id tells one event's row groups from no other. An 8-character
 * key is whole in those 8 bytes: a query for one event (or one of its selections) reads
 * only the row groups that hold it. md5 is computed the same by DuckDB's md5() and
 * node:crypto, in any version of either. (A second key, md5 of the odds id, so a
 * selection's query would read only its own row group: measured no cheaper, see
 * bench/archiveLayouts.ts: DuckDB's cost per row group it passes over dominates.)
 */
export const EVENT_KEY_COLUMN = {
  name: 'event_key',
  type: 'VARCHAR',
  doc: "finished days' files and exports only: the first 8 hex digits of md5(event_id), the key those files are sorted by (then odds_id, seq, pos), so one event's rows sit together",
  sql: EVENT_KEY_SQL,
} as const;

/** The key columns of merged files and exports, after the row's, in order (`sql`: the key over the row's columns). */
export const MERGED_KEY_COLUMNS = [EVENT_KEY_COLUMN] as const;

/** event_key of an event id, as EVENT_KEY_SQL computes it. */
export function eventKey(eventId: string): string {
  return createHash('md5').update(eventId, 'utf8').digest('hex').slice(0, 8);
}
