// startApp reads its settings from the env it is given, not from process.env: a
// cursor signed under one app's CURSOR_SECRET is refused by an app with another.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, testBoard, type TestApp } from '../helpers/app.ts';

const TEAMS = '/api/v1/teams';

describe('CURSOR_SECRET from the app env', () => {
  let rotated: TestApp;
  let standard: TestApp;
  before(async () => {
    const board = testBoard();
    rotated = await startTestApp({ board, env: { CURSOR_SECRET: 'rotated-secret' } });
    standard = await startTestApp({ board });
  });
  after(async () => {
    await rotated.close();
    await standard.close();
  });

  it('signs cursors with the secret of its env', async () => {
    const first = await rotated.call(TEAMS, `${TEAMS}?limit=2`);
    const cursor: string = first.body.nextCursor;
    assert.equal(typeof cursor, 'string');
    const same = await rotated.call(TEAMS, `${TEAMS}?limit=2&cursor=${cursor}`);
    assert.equal(same.reply.status, 200);
    const other = await standard.call(TEAMS, `${TEAMS}?limit=2&cursor=${cursor}`);
    assert.equal(other.reply.status, 400);
    assert.equal(other.body.code, 'invalid_cursor');
    const own = (await standard.call(TEAMS, `${TEAMS}?limit=2`)).body.nextCursor;
    assert.notEqual(own, cursor, 'the same page is signed differently under the default secret');
  });
});
