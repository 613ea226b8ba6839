// The better-sqlite3 build is chosen by the running Node: 13.x from Node 22 on, 12.x on
// Node 20 (each crashes on the other's Node), installed side by side under aliases.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sqliteDriver, sqlitePackageFor } from '../../persistence/sqliteDriver.ts';

describe('SQLite driver', () => {
  it('maps Node versions to the build that works there', () => {
    assert.equal(sqlitePackageFor('20.15.0'), 'better-sqlite3-12');
    assert.equal(sqlitePackageFor('20.20.2'), 'better-sqlite3-12');
    assert.equal(sqlitePackageFor('22.0.0'), 'better-sqlite3-13');
    assert.equal(sqlitePackageFor('24.21.0'), 'better-sqlite3-13');
  });

  it('loads that build on this Node and opens a database with it', () => {
    const driver = sqliteDriver();
    const major = Number.parseInt(process.versions.node, 10) >= 22 ? 13 : 12;
    assert.match(driver.description, new RegExp(`^better-sqlite3 ${major}\\.`));
    const db = new driver.Database(':memory:');
    try {
      assert.deepEqual(db.prepare('select 6 * 7 as answer').get(), { answer: 42 });
    } finally {
      db.close();
    }
  });
});
