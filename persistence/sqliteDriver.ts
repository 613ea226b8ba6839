// Picks the better-sqlite3 build that works on the running Node. Both majors are
// installed side by side as optional dependencies under aliases, and npm installs
// only the ones whose `engines` match:
//   better-sqlite3-13 (>= 13.2): Node 22 and later. 12.x there aborts the process now
//     and then when a prepared statement is garbage-collected (Node 24.19+ headers).
//   better-sqlite3-12 (12.x): Node 20. 13.x there segfaults on its first query.
// The native addon is opened once here, so a missing or mismatched build stops the
// start with a message that says which package this Node needs and why it failed.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type DatabaseConstructor = typeof BetterSqlite3;

export interface SqliteDriver {
  Database: DatabaseConstructor;
  /** e.g. 'better-sqlite3 13.2.0' */
  description: string;
}

let driver: SqliteDriver | undefined;

/** The package alias this Node needs. */
export function sqlitePackageFor(nodeVersion: string = process.versions.node): 'better-sqlite3-13' | 'better-sqlite3-12' {
  return Number.parseInt(nodeVersion, 10) >= 22 ? 'better-sqlite3-13' : 'better-sqlite3-12';
}

export function sqliteDriver(): SqliteDriver {
  driver ??= loadDriver();
  return driver;
}

function loadDriver(): SqliteDriver {
  const require = createRequire(import.meta.url);
  const name = sqlitePackageFor();
  const wanted = name === 'better-sqlite3-13' ? 'better-sqlite3 13.x (Node 22 and later)' : 'better-sqlite3 12.x (Node 20)';
  let Database: DatabaseConstructor;
  let version: string;
  try {
    Database = require(name) as DatabaseConstructor;
    version = (require(`${name}/package.json`) as { version: string }).version;
  } catch (error) {
    throw new Error(
      `cannot open SQLite: Node ${process.versions.node} needs ${wanted}, installed as ${name}, and it is missing ` +
        `(${firstLine(error)}). Run npm ci (or npm install) with this Node so npm installs the build for it.`,
    );
  }
  try {
    // The addon loads on the first open: do it now, not on the first request.
    new Database(':memory:').close();
  } catch (error) {
    throw new Error(
      `cannot open SQLite: ${name} (better-sqlite3 ${version}) did not load on Node ${process.versions.node} ` +
        `(ABI ${process.versions.modules}): ${firstLine(error)}. Reinstall with this Node (npm rebuild ${name}).`,
    );
  }
  return { Database, description: `better-sqlite3 ${version}` };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
