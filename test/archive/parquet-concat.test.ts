// Parquet files joined at the byte level (persistence/archive/parquetConcat.ts), as a
// split day's export is: DuckDB reads the joined file as the files' rows in order, every
// type and null as written, its row groups' statistics still pruning; files of another
// schema, and a file that is not Parquet, are refused.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { sqlString } from '../../persistence/archive/archiveFiles.ts';
import { concatParquet } from '../../persistence/archive/parquetConcat.ts';
import { tempDataDir } from '../ingest/ingest-helpers.ts';

test("files joined byte for byte read back as their rows in order, every type and null as written, a filter over the row groups' statistics answering as over the files", async () => {
  const dir = tempDataDir('parquet-concat-');
  const db = await DuckDBInstance.create(':memory:', { threads: '1', preserve_insertion_order: 'false' });
  const c = await db.connect();
  try {
    const paths: string[] = [];
    // three files of several row groups each (one with a single short one), with key-value metadata
    for (const [i, rows] of [5000, 1, 12_345].entries()) {
      const path = join(dir, `part-${i}.parquet`);
      const select = `SELECT ${i} * 100000 + r AS id, CAST(r % 7 = 0 AS BOOLEAN) AS flag, CASE WHEN r % 5 = 0 THEN NULL ELSE r / 3.0 END AS price, 'k' || lpad(CAST(${i} AS VARCHAR), 2, '0') || CAST(r % 11 AS VARCHAR) AS key, CASE WHEN r % 13 = 0 THEN NULL ELSE repeat('x', r % 17) END AS note, CAST(r AS INTEGER) AS small FROM range(${rows}) t(r) ORDER BY r`;
      await c.run(`COPY (${select}) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048, KV_METADATA {layout: 'test'})`);
      paths.push(path);
    }
    const out = join(dir, 'joined.parquet');
    const joined = await concatParquet(paths, out);
    assert.equal(joined.rows, 5000 + 1 + 12_345);
    const read = async (list: readonly string[], where = ''): Promise<unknown[]> => {
      const rows: unknown[] = [];
      for (const path of list) rows.push(...(await c.runAndReadAll(`SELECT * EXCLUDE (file_row_number) FROM read_parquet(${sqlString(path)}, file_row_number = true) ${where} ORDER BY file_row_number`)).getRowObjectsJson());
      return rows;
    };
    assert.deepEqual(await read([out]), await read(paths));
    const groups = async (path: string): Promise<number> => Number((await c.runAndReadAll(`SELECT count(DISTINCT row_group_id) AS n FROM parquet_metadata(${sqlString(path)})`)).getRowObjects()[0].n);
    assert.equal(joined.rowGroups, (await groups(paths[0])) + (await groups(paths[1])) + (await groups(paths[2])));
    assert.equal(await groups(out), joined.rowGroups);
    assert.deepEqual((await c.runAndReadAll(`SELECT decode(value) AS v FROM parquet_kv_metadata(${sqlString(out)}) WHERE key = encode('layout')`)).getRowObjects(), [{ v: 'test' }]);
    // a filter pruned by the shifted row groups' statistics answers as over the files
    assert.deepEqual(await read([out], 'WHERE id >= 200000 AND id < 200100'), await read([paths[2]], 'WHERE id >= 200000 AND id < 200100'));
    assert.deepEqual((await c.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlString(out)}) WHERE id = 100000`)).getRowObjects(), [{ n: 1n }]);
    // another schema: refused
    const other = join(dir, 'other.parquet');
    await c.run(`COPY (SELECT r AS id FROM range(10) t(r)) TO ${sqlString(other)} (FORMAT parquet)`);
    await assert.rejects(concatParquet([paths[0], other], join(dir, 'refused.parquet')), /another schema/);
    const junk = join(dir, 'junk.parquet');
    writeFileSync(junk, 'not parquet at all');
    await assert.rejects(concatParquet([junk], join(dir, 'refused.parquet')), /not a Parquet file/);
  } finally {
    c.closeSync();
    db.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
});
