// A generated tick archive for bench/archive.bench.ts (and bench/archiveLayouts.ts): days
// of price changes written by DuckDB straight from range(), no JavaScript rows.
//
// The shape: `events` events of `selectionsPerEvent` selections each (S selections), and
// `rowsPerDay` changes a day. The day's changes come in rounds: in each round every
// selection ticks once, in a fixed shuffled order (selection s at place s * P mod S, P
// prime to S), so change g of the day (seq = the day's first + g) is tick k = g div S of
// selection s = (g mod S) * P^-1 mod S. Every row's columns are arithmetic on (s, k, g):
// event ids shaped like the board's (`nfl-20261121-0042-AW-HM`: their first 8 bytes are
// the league and year, as in real data), one change in 10,007 a removal.
//
// Layouts:
// - plain: one file in log order, as a flush writes (122,880-row groups);
// - merged: the archive's merged layout, marked as a finished day's merge (the archive
//   reads it as one and does not merge it again): a split day (ARCHIVE_LAYOUT: a
//   directory of parts by event_key prefix with its manifest, as the archive installs
//   one), or one file (SINGLE_FILE_LAYOUT: as the previous version merged a day). Written
//   without sorting the day: the selections (S rows) are ranked in the merged order once,
//   and the day's rows (of each part) are (rank, k) pairs in order, sorted as two
//   integers before the wide columns are computed. One DuckDB thread and no
//   insertion-order bookkeeping, so the row groups are cut at exactly the layout's size,
//   as the archive's merge cuts them.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { archiveFileName, MANIFEST_FORMAT, MANIFEST_NAME, manifestText, partFileName, partFrom, partIndexOf, partRangeSql, sha256File, splitDirName, sqlString, type SplitPart } from '../persistence/archive/archiveFiles.ts';
import { ARCHIVE_COLUMNS } from '../persistence/archive/archiveSchema.ts';
import { MERGED_KEYS, MERGED_LAYOUT, mergedCopy, SPLIT_PARTS } from '../persistence/archive/tickArchive.ts';

export interface ArchiveShape {
  events: number;
  selectionsPerEvent: number;
  rowsPerDay: number;
}

/** How a merged file is laid out: its extra key columns (name, SQL over the row's columns), its order, and its COPY options. */
export interface MergedLayout {
  keys: readonly { name: string; sql: string }[];
  /** ORDER BY over the row's columns and the keys (seq and pos last). */
  order: string;
  copy: string;
  /** Parts the day is split into by event_key (a split day, as the archive installs one); absent: one file. */
  split?: number;
}

/** The archive's own merged layout (a finished day, split into SPLIT_PARTS parts). */
export const ARCHIVE_LAYOUT: MergedLayout = { keys: MERGED_KEYS, order: '', copy: mergedCopy(3), split: SPLIT_PARTS };
/** A finished day merged into one file, as the previous version of the archive left it (the archive reads it, and rewrites it split). */
export const SINGLE_FILE_LAYOUT: MergedLayout = { keys: MERGED_KEYS, order: '', copy: mergedCopy(3) };

/** The archive's layout split into `parts` (16, 64 or 256) parts. */
export function splitLayout(parts: number): MergedLayout {
  return { ...ARCHIVE_LAYOUT, split: parts };
}

const LEAGUES = "['nfl', 'nba', 'nhl', 'ncaab']";

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** The inverse of p modulo m (p prime to m). */
function inverse(p: number, m: number): number {
  let [oldR, r] = [p, m];
  let [oldS, s] = [1, 0];
  while (r !== 0) {
    const q = Math.floor(oldR / r);
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % m) + m) % m;
}

/** The columns of a row over (s, k, g) and the day's constants, in the archive's column order. */
function rowColumns(shape: ArchiveShape, first: number, dayStart: number, eventStart: number): Record<string, string> {
  const e = `(s // ${shape.selectionsPerEvent})`;
  const league = `${LEAGUES}[1 + ${e} % 4]`;
  const eventId = `(${league} || '-20261121-' || lpad(CAST(${e} AS VARCHAR), 4, '0') || '-AW-HM')`;
  const book = `('book' || ((s % ${shape.selectionsPerEvent}) % 20))`;
  return {
    seq: `CAST(${first} + g AS BIGINT)`,
    pos: 'CAST(0 AS INTEGER)',
    time_ms: `CAST(${dayStart} + (g * 86400000) // ${shape.rowsPerDay} AS BIGINT)`,
    kind: "CASE WHEN g % 10007 = 0 THEN 'remove' ELSE 'price' END",
    odds_id: `(${eventId} || ':' || ${book} || ':TOTAL:FULL-OVER-' || s)`,
    event_id: eventId,
    league,
    book,
    market: "'TOTAL'",
    market_subtype: "'TOTAL'",
    selection_id: `('FULL-OVER-' || s)`,
    selection: "'Over'",
    line: 'CAST(44.5 AS DOUBLE)',
    price_american: 'CAST(-110 - ((g + s) % 40) AS INTEGER)',
    dfs_multiplier: 'CAST(NULL AS DOUBLE)',
    suspended: 'CAST(NULL AS BOOLEAN)',
    event_status: 'CAST(NULL AS VARCHAR)',
    event_start_ms: `CAST(${eventStart} AS BIGINT)`,
    removed_rows: "CASE WHEN g % 10007 = 0 THEN '[]' END",
  };
}

export interface GeneratedDay {
  /** The file, or the split day's directory. */
  path: string;
  first: number;
  last: number;
  /** Its Parquet files (a split day's parts, in key order). */
  parquet: string[];
}

/**
 * Writes one day of `shape` into `dir` (`<dir>/<day>/<first>-<last>.parquet`), its
 * changes numbered from `first`, as a plain file or in `layout` (merged). The file's
 * modification time is set an hour back (the archive rewrites only files older than a
 * few seconds).
 */
export class ArchiveGenerator {
  private readonly selections: number;
  private readonly shuffle: number;
  private readonly unshuffle: number;
  private ranked = '';

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    private readonly shape: ArchiveShape,
    private readonly eventStart: number,
  ) {
    this.selections = shape.events * shape.selectionsPerEvent;
    let p = Math.max(2, Math.floor(this.selections * 0.618));
    while (gcd(p, this.selections) !== 1) p++;
    this.shuffle = p;
    this.unshuffle = inverse(p, this.selections);
  }

  static async open(shape: ArchiveShape, spillDir: string, eventStart: number): Promise<ArchiveGenerator> {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '1GB', preserve_insertion_order: 'false' });
    const connection = await instance.connect();
    await connection.run(`SET temp_directory = ${sqlString(spillDir)}`);
    return new ArchiveGenerator(instance, connection, shape, eventStart);
  }

  /** Rows per selection per day (the last round may be partial). */
  get ticksPerSelection(): number {
    return Math.ceil(this.shape.rowsPerDay / this.selections);
  }

  async day(dir: string, day: string, first: number, layout: MergedLayout | null): Promise<GeneratedDay> {
    const { rowsPerDay } = this.shape;
    const S = this.selections;
    const dayStart = Date.parse(`${day}T00:00:00Z`);
    const dayDir = join(dir, day);
    mkdirSync(dayDir, { recursive: true });
    const last = first + rowsPerDay - 1;
    const path = join(dayDir, archiveFileName(first, last));
    const columns = rowColumns(this.shape, first, dayStart, this.eventStart);
    const row = ARCHIVE_COLUMNS.map((c) => `${columns[c.name]} AS ${c.name}`).join(', ');
    const past = new Date(Date.now() - 3_600_000);
    if (layout?.split !== undefined) return this.splitDay(join(dayDir, splitDirName(first, last)), layout, columns, row, first, last, past);
    if (layout === null) {
      const changes = `SELECT g, ((g % ${S}) * ${this.unshuffle}) % ${S} AS s FROM range(${rowsPerDay}) t(g)`;
      await this.connection.run(`COPY (SELECT ${row} FROM (${changes})) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
    } else {
      await this.rank(layout, columns);
      // (rank, k) in order, then the wide columns: the sort moves three integers a row
      const g = `(r.k * ${S} + (sel.s * ${this.shuffle}) % ${S})`;
      const ordered = `SELECT sel.s AS s, ${g} AS g FROM sel, range(${this.ticksPerSelection}) r(k) WHERE ${g} < ${rowsPerDay} ORDER BY sel.rank, r.k`;
      const keys = layout.keys.map((key) => `${key.sql} AS ${key.name}`).join(', ');
      const wide = `SELECT *, ${keys} FROM (SELECT ${row} FROM (${ordered}))`;
      await this.connection.run(`COPY (${wide}) TO ${sqlString(path)} (${layout.copy})`);
    }
    utimesSync(path, past, past);
    return { path, first, last, parquet: [path] };
  }

  /** A day as a split day: each part's rows (rank, k) in order, then its manifest. */
  private async splitDay(dir: string, layout: MergedLayout, columns: Record<string, string>, row: string, first: number, last: number, past: Date): Promise<GeneratedDay> {
    const parts = layout.split as number;
    const S = this.selections;
    const { rowsPerDay } = this.shape;
    await this.rank(layout, columns);
    mkdirSync(dir, { recursive: true });
    const used = new Set((await this.connection.runAndReadAll('SELECT DISTINCT substr(event_key, 1, 2) AS p FROM sel')).getRowObjects().map((r) => partIndexOf(String(r.p), parts)));
    const files: SplitPart[] = [];
    const g = `(r.k * ${S} + (sel.s * ${this.shuffle}) % ${S})`;
    const keys = layout.keys.map((key) => `${key.sql} AS ${key.name}`).join(', ');
    for (let i = 0; i < parts; i++) {
      if (!used.has(i)) continue;
      const from = partFrom(i, parts);
      const name = partFileName(from);
      const file = join(dir, name);
      const ordered = `SELECT sel.s AS s, ${g} AS g FROM sel, range(${this.ticksPerSelection}) r(k) WHERE ${partRangeSql(i, parts).replaceAll('event_key', 'sel.event_key')} AND ${g} < ${rowsPerDay} ORDER BY sel.rank, r.k`;
      await this.connection.run(`COPY (SELECT *, ${keys} FROM (SELECT ${row} FROM (${ordered}))) TO ${sqlString(file)} (${layout.copy})`);
      const rows = Number((await this.connection.runAndReadAll(`SELECT CAST(num_rows AS DOUBLE) AS n FROM parquet_file_metadata(${sqlString(file)})`)).getRowObjects()[0].n);
      files.push({ from, name, rows, bytes: statSync(file).size, sha256: await sha256File(file) });
      utimesSync(file, past, past);
    }
    const rows = files.reduce((sum, file) => sum + file.rows, 0);
    if (rows !== rowsPerDay) throw new Error(`${dir}: ${rows} rows written, not ${rowsPerDay}`);
    writeFileSync(join(dir, MANIFEST_NAME), manifestText({ format: MANIFEST_FORMAT, layout: MERGED_LAYOUT, first, last, rows, parts, files }));
    utimesSync(join(dir, MANIFEST_NAME), past, past);
    return { path: dir, first, last, parquet: files.map((file) => join(dir, file.name)) };
  }

  /** The selections ranked in the layout's order (once per layout). */
  private async rank(layout: MergedLayout, columns: Record<string, string>): Promise<void> {
    const key = `${layout.order}\n${layout.keys.map((k) => k.sql).join(',')}`;
    if (this.ranked === key) return;
    const keys = layout.keys.map((k) => `${k.sql} AS ${k.name}`).join(', ');
    // the merged order over selections: every tick of one selection has the same keys, and ticks go in seq order
    const order = layout.order === '' ? layout.keys.map((k) => k.name).concat('odds_id').join(', ') : layout.order;
    await this.connection.run('DROP TABLE IF EXISTS sel');
    await this.connection.run(`CREATE TABLE sel AS SELECT s, event_key, row_number() OVER (ORDER BY ${order}) AS rank FROM (SELECT s, event_id, odds_id, ${keys} FROM (SELECT s, ${columns.event_id} AS event_id, ${columns.odds_id} AS odds_id FROM range(${this.selections}) t(s)))`);
    this.ranked = key;
  }

  /**
   * Checks a merged file's row groups: each cut at `rowGroupRows` (up to a vector more; the last one shorter)
   * and, by their min/max statistics on `column`, in order (a row group's max at most the
   * next one's min): the file is in the layout's order at that key.
   */
  async checkMerged(path: string, rowGroupRows: number, column: string): Promise<{ rowGroups: number }> {
    const groups = (await this.connection.runAndReadAll(`SELECT row_group_id AS id, CAST(row_group_num_rows AS DOUBLE) AS n, stats_min_value AS lo, stats_max_value AS hi FROM parquet_metadata(${sqlString(path)}) WHERE path_in_schema = ${sqlString(column)} ORDER BY row_group_id`)).getRowObjects() as { n: number; lo: string; hi: string }[];
    for (let i = 0; i < groups.length; i++) {
      // a group is cut once it holds rowGroupRows, at the end of a vector (2,048 rows)
      if (i < groups.length - 1 && (groups[i].n < rowGroupRows || groups[i].n >= rowGroupRows + 2048)) throw new Error(`${path}: row group ${i} holds ${groups[i].n} rows, not ${rowGroupRows}`);
      if (i > 0 && groups[i - 1].hi > groups[i].lo) throw new Error(`${path}: row group ${i} starts at ${column} ${groups[i].lo}, before the previous one's end ${groups[i - 1].hi}`);
    }
    return { rowGroups: groups.length };
  }

  /** `n` of the shape's odds ids, at random (every one ticks every day). */
  async sampleIds(n: number): Promise<string[]> {
    const oddsId = rowColumns(this.shape, 0, 0, 0).odds_id;
    return (await this.connection.runAndReadAll(`SELECT ${oddsId} AS odds_id FROM (SELECT s FROM range(${this.selections}) t(s) USING SAMPLE ${n} ROWS)`)).getRowObjects().map((row) => row.odds_id as string);
  }

  close(spillDir: string): void {
    this.connection.closeSync();
    this.instance.closeSync();
    rmSync(spillDir, { recursive: true, force: true });
  }
}
