// ListPlans (http/routes/listPlan.ts): the plan every list route reads. A plan is kept
// per key and reused until the UTC day turns (only when it has a league filter); the
// league filter is cut to the in-season leagues with a note; the cursor is decoded and
// checked against the walk; the validity token moves exactly when an input does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CursorCodec } from '../../http/cursor.ts';
import { HttpError } from '../../http/errors.ts';
import { isIdKey } from '../../http/routes/catalogCursor.ts';
import { ListPlans, type ListPlanSpec } from '../../http/routes/listPlan.ts';
import { NOW } from '../../fixtures/harness/now.ts';

const cursors = new CursorCodec();

const DAY = 86_400_000;
/** In March 2027 the NFL season is over; in November 2026 it is in progress. */
const MARCH = NOW + 120 * DAY;

interface Request {
  leagues?: string[];
  book?: string;
  cursor?: string;
  since?: number;
}

function planSpec(r: Request): ListPlanSpec<string, { leagues: string[] | null; book: string | undefined }> {
  return {
    route: '/test/list',
    filters: { league: r.leagues, book: r.book, since: r.since },
    leagues: r.leagues,
    cursor: r.cursor,
    isKey: isIdKey,
    needsAsOf: r.since !== undefined,
    query: (leagues) => ({ leagues, book: r.book }),
  };
}

function invalidCursor(error: unknown): boolean {
  return error instanceof HttpError && error.status === 400 && error.code === 'invalid_cursor';
}

describe('ListPlans', () => {
  it('keeps one plan per key; a plan with a league filter is rebuilt when the UTC day turns, one without is kept', () => {
    let built = 0;
    const plans = new ListPlans(cursors, (r: Request) => {
      built++;
      return planSpec(r);
    });
    const plain: Request = { book: 'pinnacle' };
    const leagues: Request = { leagues: ['nfl', 'nba'] };
    const first = plans.of(plain, plain, NOW);
    assert.equal(plans.of(plain, plain, NOW + 1000), first);
    assert.equal(plans.of(plain, plain, MARCH), first, 'no league filter: the day does not matter');
    assert.equal(first.day, -1);
    const november = plans.of(leagues, leagues, NOW);
    assert.equal(plans.of(leagues, leagues, NOW + 1000), november);
    const march = plans.of(leagues, leagues, MARCH);
    assert.notEqual(march, november);
    assert.equal(built, 3);
    assert.deepEqual(november.query.leagues, ['nfl', 'nba']);
    assert.equal(november.note, null);
    assert.deepEqual(march.query.leagues, ['nba']);
    assert.match(march.note ?? '', /^nfl has no active season; active leagues: .*nba/);
    assert.equal(march.none, false);
  });

  it('a league filter with no league in season is none, with the note; a describe that throws remembers nothing', () => {
    let fail = true;
    const plans = new ListPlans(cursors, (r: Request) => {
      if (fail) throw new Error('unknown id');
      return planSpec(r);
    });
    const request: Request = { leagues: ['nfl'] };
    assert.throws(() => plans.of(request, request, MARCH), /unknown id/);
    fail = false;
    const plan = plans.of(request, request, MARCH);
    assert.equal(plan.none, true);
    assert.deepEqual(plan.query.leagues, []);
    assert.match(plan.note ?? '', /^nfl has no active season/);
  });

  it('decodes its own cursors and refuses those of other filters, of another key shape or without a required as-of', () => {
    const plans = new ListPlans(cursors, planSpec);
    const start: Request = { book: 'circa' };
    const cursor = plans.of(start, start, NOW).nextCursor('row-17');
    const next: Request = { book: 'circa', cursor };
    const plan = plans.of(next, next, NOW);
    assert.equal(plan.after, 'row-17');
    assert.equal(plan.asOf, undefined);
    const other: Request = { book: 'pinnacle', cursor };
    assert.throws(() => plans.of(other, other, NOW), invalidCursor);

    const walk: Request = { since: 5 };
    const first = plans.of(walk, walk, NOW);
    const withAsOf: Request = { since: 5, cursor: first.nextCursor('row-3', NOW) };
    assert.equal(plans.of(withAsOf, withAsOf, NOW).asOf, NOW);
    const withoutAsOf: Request = { since: 5, cursor: first.nextCursor('row-3') };
    assert.throws(() => plans.of(withoutAsOf, withoutAsOf, NOW), invalidCursor);

    const ranked = new ListPlans(cursors, (r: Request) => ({ ...planSpec(r), isKey: (key: unknown): key is string => Array.isArray(key) }));
    const foreign: Request = { book: 'circa', cursor };
    assert.throws(() => ranked.of(foreign, foreign, NOW), invalidCursor, 'same fingerprint, but a key of another shape');
  });

  it('the validity token moves exactly when an input does, and a plan built for a new day never repeats an old token', () => {
    const plans = new ListPlans(cursors, planSpec);
    const request: Request = { leagues: ['nba'] };
    const plan = plans.of(request, request, NOW);
    const t1 = plan.tokenOf(4, 1);
    assert.equal(plan.tokenOf(4, 1), t1);
    const t2 = plan.tokenOf(5, 1);
    assert.notEqual(t2, t1);
    assert.notEqual(plan.tokenOf(5, 2), t2);

    assert.equal(plan.holds(10), false, 'first sight of a basis');
    const held = plan.tokenOf(7);
    assert.equal(plan.holds(10), true);
    assert.equal(plan.lastToken, held);
    assert.equal(plan.holds(11), false);

    const tomorrow = plans.of(request, request, NOW + DAY);
    assert.notEqual(tomorrow, plan);
    assert.notEqual(tomorrow.tokenOf(7), held);
  });
});
