// The log record's encoder writes price ticks by hand: every shape of tick, and every
// other change kind next to them, must read back (with msgpackr, as restore reads it)
// to the values msgpackr's own encoding reads back to.
import assert from 'node:assert/strict';
import test from 'node:test';
import { Packr } from 'msgpackr';
import { decodeRecord, encodeRecord, type BatchRecord, type LoggedChange } from '../../ingest/record.ts';

const reference = new Packr({ useRecords: false });

function readBack(record: BatchRecord): BatchRecord {
  return decodeRecord(encodeRecord(record));
}

function viaMsgpackr(record: BatchRecord): BatchRecord {
  return decodeRecord(reference.pack({ v: 1, t: record.time, c: record.changes }));
}

const ticks: LoggedChange[] = [
  { op: 'priceById', id: 'nba-1:dk:MONEYLINE:FG-HOME', priceAmerican: -110 },
  { op: 'priceById', id: 'nba-1:dk:MONEYLINE:FG-AWAY', priceAmerican: 250, suspended: true },
  { op: 'priceById', id: 'nba-1:dk:MONEYLINE:FG-AWAY', suspended: false },
  { op: 'priceById', id: 'nba-1:pp:PLAYER_TOTAL_POINTS:FG-OVER-p1-25.5', priceAmerican: null, dfsMultiplier: 1.85 },
  { op: 'priceById', id: 'nba-1:pp:PLAYER_TOTAL_POINTS:FG-OVER-p1-25.5', priceAmerican: null, dfsMultiplier: null },
  { op: 'priceById', id: 'nba-1:pp:PLAYER_TOTAL_POINTS:FG-OVER-p1-25.5', priceAmerican: null, dfsMultiplier: 2 },
  { op: 'priceById', id: 'nba-1:dk:TOTAL:FG-OVER-215.5', priceAmerican: 2 ** 30 - 1 },
  { op: 'priceById', id: 'nba-1:dk:TOTAL:FG-UNDER-215.5', priceAmerican: -(2 ** 30 - 1) },
  { op: 'priceById', id: 'épée-1:dk:TOTAL:FG-ÜNDER-2', priceAmerican: -105 },
  { op: 'priceById', id: `x:y:z:${'w'.repeat(400)}`, priceAmerican: 100 },
];

test('price ticks read back as msgpackr encodes them', () => {
  for (const tick of ticks) {
    const record = { time: Date.parse('2026-11-21T12:00:00.123Z'), changes: [tick] };
    assert.deepEqual(readBack(record), viaMsgpackr(record));
  }
  const all = { time: 1_795_000_000_000, changes: ticks };
  assert.deepEqual(readBack(all), viaMsgpackr(all));
});

test('other changes between ticks keep their order and values', () => {
  const changes: LoggedChange[] = [
    ticks[0],
    { op: 'remove', id: 'nba-1:dk:MONEYLINE:FG-HOME' },
    { op: 'status', eventId: 'nba-1', status: 'in_progress' },
    ticks[1],
    { op: 'source', source: { id: 'newbook', name: 'New Book', kind: 'retail' } },
    ticks[3],
  ];
  const record = { time: 5, changes };
  assert.deepEqual(readBack(record), viaMsgpackr(record));
});

test('a large batch grows the buffer and reads back whole', () => {
  const changes: LoggedChange[] = [];
  for (let i = 0; i < 5000; i++) changes.push({ op: 'priceById', id: `ev-${i}:book:MONEYLINE:FG-HOME-${'x'.repeat(i % 300)}`, priceAmerican: i % 2 === 0 ? -100 - i : 100 + i });
  const record = { time: 7, changes };
  assert.deepEqual(readBack(record), viaMsgpackr(record));
});
