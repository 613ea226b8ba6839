// Scratch (not committed): EXPLAIN ANALYZE of the archive's one-selection query over one generated day.
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdirSync, rmSync } from 'node:fs';
import { ARCHIVE_COLUMNS, EVENT_KEY_SQL, eventKey } from './persistence/archive/archiveSchema.ts';

const ROWS = Number(process.env.ROWS ?? 2_000_000);
const dir = '/tmp/h33-explain';
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const READ_SELECT = ARCHIVE_COLUMNS.map((c) => (c.type === 'BIGINT' ? `CAST(${c.name} AS DOUBLE) AS ${c.name}` : c.name)).join(', ');
const COLS = ARCHIVE_COLUMNS.map((c) => c.name).join(', ');

const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '512MB' });
const c = await db.connect();
await c.run(`SET temp_directory = '${dir}/.spill'`);
const realistic = `(['nfl', 'nba', 'nhl', 'ncaab'][1 + (h % 2000) % 4] || '-20261121-' || lpad(CAST(h % 2000 AS VARCHAR), 4, '0') || '-AW-HM')`;
const short = `('ev' || (h % 2000))`;
for (const [name, ev] of [['realistic', realistic], ['short', short]] as const) {
  const t0 = performance.now();
  await c.run(`COPY (SELECT CAST(1 + i AS BIGINT) AS seq, 0 AS pos, CAST(1763683200000 + i * 40 AS BIGINT) AS time_ms, 'price' AS kind, ${ev} || ':book' || (h % 20) || ':TOTAL:FULL-OVER-' || h AS odds_id, ${ev} AS event_id, 'nfl' AS league, 'book' || (h % 20) AS book, 'TOTAL' AS market, 'TOTAL' AS market_subtype, 'FULL-OVER-' || h AS selection_id, 'Over' AS selection, 44.5 AS line, CAST(-110 - (i % 40) AS INTEGER) AS price_american, CAST(NULL AS DOUBLE) AS dfs_multiplier, CAST(NULL AS BOOLEAN) AS suspended, CAST(NULL AS VARCHAR) AS event_status, CAST(0 AS BIGINT) AS event_start_ms, CAST(NULL AS VARCHAR) AS removed_rows FROM (SELECT i, hash(i) % 100000 AS h FROM range(${ROWS}) t(i)) ORDER BY odds_id, seq) TO '${dir}/${name}-old.parquet' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
  const t1 = performance.now();
  await c.run(`COPY (SELECT * FROM (SELECT ${COLS}, ${EVENT_KEY_SQL} AS event_key FROM read_parquet('${dir}/${name}-old.parquet')) ORDER BY event_key, odds_id, seq, pos) TO '${dir}/${name}-new.parquet' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 16384, KV_METADATA {odds_archive_layout: 'x'})`);
  const t2 = performance.now();
  console.log(`${name}: generate ${((t1 - t0) / 1000).toFixed(1)} s, merge ${((t2 - t1) / 1000).toFixed(1)} s`);
  const groups = (await c.runAndReadAll(`SELECT count(DISTINCT row_group_id) AS g, max(row_group_num_rows) AS mx, min(row_group_num_rows) AS mn FROM parquet_metadata('${dir}/${name}-new.parquet')`)).getRowObjectsJson();
  console.log('new row groups', groups);
  const id = (await c.runAndReadAll(`SELECT odds_id, event_id FROM read_parquet('${dir}/${name}-old.parquet') LIMIT 1 OFFSET 777777`)).getRowObjects()[0];
  const oldSql = `SELECT ${READ_SELECT} FROM read_parquet(['${dir}/${name}-old.parquet'], union_by_name = true) WHERE odds_id IN ('${id.odds_id}') AND time_ms <= 9007199254740991 ORDER BY seq, pos`;
  const newSql = `SELECT ${READ_SELECT} FROM read_parquet(['${dir}/${name}-new.parquet']) WHERE event_key = '${eventKey(String(id.event_id))}' AND (odds_id = '${id.odds_id}' AND time_ms <= 9007199254740991) ORDER BY seq, pos`;
  const oldEq = `SELECT ${READ_SELECT} FROM read_parquet(['${dir}/${name}-old.parquet'], union_by_name = true) WHERE odds_id = '${id.odds_id}' AND time_ms <= 9007199254740991 ORDER BY seq, pos`;
  for (const cache of [false, true]) {
    await c.run(`SET parquet_metadata_cache = ${cache}`);
    for (const [label, sql] of [['old IN', oldSql], ['old =', oldEq], ['new', newSql]]) {
      const times: number[] = [];
      let n = 0;
      for (let k = 0; k < 5; k++) {
        const s = performance.now();
        n = (await c.runAndReadAll(sql)).getRowObjects().length;
        times.push(performance.now() - s);
      }
      times.sort((a, b) => a - b);
      console.log(`${name} cache=${cache} ${label}: rows ${n}, ms min ${times[0].toFixed(1)} median ${times[2].toFixed(1)}`);
    }
  }
  if (process.env.EXPLAIN !== '0') {
    for (const [label, sql] of [['old IN', oldSql], ['new', newSql]]) {
      const plan = (await c.runAndReadAll(`EXPLAIN ANALYZE ${sql}`)).getRowObjects();
      console.log(`---- ${name} ${label}\n${plan.map((row) => String(row.explain_value)).join('\n')}`);
    }
  }
}
c.closeSync();
db.closeSync();
rmSync(dir, { recursive: true, force: true });
