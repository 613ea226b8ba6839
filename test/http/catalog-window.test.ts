// EventStarts (http/routes/eventStarts.ts): the clock-relative /events window is
// cached on where its bounds fall among event starts. Properties over random start
// sets and instants: the anchor holds exactly the events the window holds at now,
// nothing earlier does, and the anchor is constant across an interval of equal windows.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EventStarts, WINDOW_MS } from '../../http/routes/eventStarts.ts';

function inWindow(times: readonly number[], from: number, to: number): number[] {
  return times.filter((s) => s >= from && s < to);
}

const HOUR = 3_600_000;
const base = Date.parse('2026-11-21T12:00:00Z');
const startsArb = fc.array(fc.integer({ min: -40 * 24, max: 40 * 24 }).map((h) => base + h * HOUR), { maxLength: 60 });
const instantArb = fc.integer({ min: -30 * 24 * 60, max: 30 * 24 * 60 }).map((m) => base + m * 60_000 + 17);

describe('EventStarts', () => {
  it('countBefore counts starts strictly below; the anchor keeps the window\'s events and is the earliest instant that does', () => {
    fc.assert(
      fc.property(startsArb, instantArb, fc.boolean(), fc.boolean(), (raw, now, lower, upper) => {
        const times = [...raw].sort((a, b) => a - b);
        const starts = new EventStarts(() => Float64Array.from(times), () => 1);
        assert.equal(starts.countBefore(now), times.filter((s) => s < now).length);
        const anchor = starts.anchor(now, lower, upper);
        assert.ok(anchor <= now);
        const window = (t: number) => inWindow(times, lower ? t : base - 1e12, upper ? t + WINDOW_MS : base + 1e12);
        assert.deepEqual(window(anchor), window(now));
        if (anchor > 0 && (lower || upper)) assert.notDeepEqual(window(anchor - 1), window(now), 'one millisecond earlier the window differs');
        const later = anchor + Math.floor((now - anchor) / 2);
        assert.equal(starts.anchor(later, lower, upper), anchor, 'every instant of the interval has the same anchor');
      }),
      { numRuns: 2000 },
    );
  });

  it('reloads the starts when the version moves', () => {
    let version = 1;
    let times = Float64Array.from([base]);
    const starts = new EventStarts(() => times, () => version);
    assert.equal(starts.countBefore(base + 1), 1);
    times = Float64Array.from([base, base + 1, base + 2]);
    assert.equal(starts.countBefore(base + 3), 1, 'same version: the loaded starts are kept');
    version = 2;
    assert.equal(starts.countBefore(base + 3), 3);
  });
});
