// Snapshot compression: which deflater builds the per-event pieces, and what the
// joining machinery costs. Pieces are ~64 KB of snapshot JSON (odds rows as /odds serves them,
// with and without priceHistory) from a deterministic row generator here,
// because fixtures/generateBoard.ts had not landed when this was written.
//
// Compared: node:zlib deflateRawSync (Z_SYNC_FLUSH) at levels 1 and 6; fflate 0.8
// Deflate + flush(true), its only way to end a piece byte-aligned without a final
// block; fflate deflateSync (always ends with a final block, so it can only be a
// speed reference). Every sync-flushed variant is verified by joining its pieces
// into one gzip member and gunzipping it with zlib.

import { constants, crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { Bench } from 'tinybench';
import { Deflate, deflateSync } from 'fflate';
import { crc32Combine } from '../engine/snapshot/crc32Combine.ts';
import { compressPiece, type DeflatedPiece } from '../engine/snapshot/deflatePiece.ts';
import { FINAL_EMPTY_BLOCK, GzipJoiner } from '../engine/snapshot/gzipMember.ts';
import { PieceSet } from '../engine/snapshot/pieceSet.ts';
import { americanToDecimal, SOURCES } from '../engine/model.ts';
import { mulberry32 } from '../engine/random.ts';

type Measurements = Record<string, number | string>;

const PIECE_TARGET_BYTES = 64 * 1024;
const PIECES_PER_SET = 48;
const TASK_TIME_MS = 400;
const BOARD_PIECES = 5000;

// ---- deterministic snapshot JSON -------------------------------------------------


const FIRST = ['Patrick', 'Josh', 'Jalen', 'Lamar', 'Joe', 'Justin', 'Travis', 'Tyreek', 'Saquon', 'Derrick', 'Amon-Ra', 'CeeDee'];
const LAST = ['Mahomes', 'Allen', 'Hurts', 'Jackson', 'Burrow', 'Herbert', 'Kelce', 'Hill', 'Barkley', 'Henry', 'St. Brown', 'Lamb'];
const TEAMS = ['Kansas City Chiefs', 'Buffalo Bills', 'Philadelphia Eagles', 'Baltimore Ravens', 'Cincinnati Bengals', 'Detroit Lions'];
const PROPS = ['PASSING_YARDS', 'RUSHING_YARDS', 'RECEIVING_YARDS', 'RECEPTIONS', 'PASSING_TDS', 'RUSH_ATTEMPTS', 'COMPLETIONS'];
const NOW_S = Date.parse('2026-11-21T12:00:00Z') / 1000;

function americanFrom(random: () => number): number {
  const a = Math.round(-250 + random() * 450);
  return a > -100 && a < 100 ? (a < 0 ? -105 - Math.round(random() * 20) : 100 + Math.round(random() * 30)) : a;
}

function historyJson(random: () => number, american: number, dfs: boolean): string {
  const entries = 1 + Math.floor(random() * 30);
  let fs = NOW_S - entries * 600;
  let price = american;
  const parts: string[] = [];
  for (let i = 0; i < entries; i++) {
    const ls = fs + Math.floor(random() * 590);
    const su = random() < 0.05 ? ',"su":true' : '';
    const prices = dfs ? `"dm":${(1 + Math.floor(random() * 3) * 0.25).toFixed(2)}` : `"pa":${price},"pd":${americanToDecimal(price)}`;
    parts.push(`{"fs":${fs},"ls":${ls},${prices}${su}}`);
    fs = ls + 10;
    price = americanFrom(random);
  }
  return `[${parts.join(',')}]`;
}

/** One odds row as the snapshot serializes it, priceHistory included. */
function rowJson(random: () => number, eventId: string, withHistory: boolean): string {
  const book = SOURCES[Math.floor(random() * SOURCES.length)];
  const dfs = book.kind === 'dfs';
  const home = random() < 0.5;
  const team = TEAMS[Math.floor(random() * TEAMS.length)];
  const over = random() < 0.5;
  const updated = new Date((NOW_S - Math.floor(random() * 3600)) * 1000 + Math.floor(random() * 1000)).toISOString();
  const american = americanFrom(random);
  const kind = random();
  let market: string;
  let subtype: string;
  let selection: string;
  let side: string;
  let extra = '';
  let selectionId: string;
  if (kind < 0.6) {
    const player = `${FIRST[Math.floor(random() * FIRST.length)]} ${LAST[Math.floor(random() * LAST.length)]}`;
    const playerId = `nfl-p-${1000 + Math.floor(random() * 9000)}`;
    const line = Math.floor(random() * 300) + 0.5;
    market = 'PLAYER_TOTAL';
    subtype = `PLAYER_TOTAL_${PROPS[Math.floor(random() * PROPS.length)]}`;
    side = over ? 'OVER' : 'UNDER';
    selection = `${player} ${over ? 'Over' : 'Under'} ${line}`;
    selectionId = `FULL-${side}-${line}-${playerId}`;
    extra = `,"line":${line},"playerId":"${playerId}","playerName":"${player}"`;
  } else if (kind < 0.8) {
    const line = Math.floor(random() * 30) + 30.5;
    market = 'TOTAL';
    subtype = 'TOTAL_POINTS';
    side = over ? 'OVER' : 'UNDER';
    selection = `${over ? 'Over' : 'Under'} ${line}`;
    selectionId = `FULL-${side}-${line}`;
    extra = `,"line":${line}`;
  } else {
    const line = (Math.floor(random() * 20) - 10) + 0.5;
    market = 'SPREAD';
    subtype = 'SPREAD';
    side = home ? 'HOME' : 'AWAY';
    selection = `${team} ${line > 0 ? '+' : ''}${line}`;
    selectionId = `FULL-${side}-${line}`;
    extra = `,"line":${line}`;
  }
  const prices = dfs ? `"dfsMultiplier":${(1 + Math.floor(random() * 3) * 0.25).toFixed(2)}` : `"priceAmerican":${american},"priceDecimal":${americanToDecimal(american)}`;
  const history = withHistory ? historyJson(random, american, dfs) : 'null';
  return (
    `{"id":"${eventId}:${book.id}:${subtype}:${selectionId}","sportsbook":"${book.id}","league":"nfl","eventId":"${eventId}",` +
    `"market":"${market}","marketSubtype":"${subtype}","period":"FULL","selection":"${selection}","side":"${side}",` +
    `"teamSide":"${home ? 'HOME' : 'AWAY'}","teamName":"${team}",${prices}${extra},"suspended":${random() < 0.03},` +
    `"eventStartTime":"2026-11-22T18:00","updated":"${updated}","priceHistory":${history}}`
  );
}

/** One event of the snapshot (the OpenAPI Snapshot schema), its odds filled until it reaches ~target bytes. */
export function snapshotEventJson(seed: number, targetBytes: number, withHistory: boolean): Buffer {
  const random = mulberry32(seed);
  const eventId = `nfl-2026-w12-${seed}`;
  const head =
    `{"id":"${eventId}","league":"nfl","startTime":"2026-11-22T18:00Z","status":"scheduled",` +
    `"homeTeamId":"nfl-kc","awayTeamId":"nfl-buf","odds":[`;
  const rows: string[] = [];
  let size = head.length + 2;
  while (size < targetBytes) {
    const row = rowJson(random, eventId, withHistory);
    rows.push(row);
    size += row.length + 1;
  }
  return Buffer.from(`${head}${rows.join(',')}]}`, 'utf8');
}

function pieceInputs(withHistory: boolean): Buffer[] {
  return Array.from({ length: PIECES_PER_SET }, (_, i) => snapshotEventJson(1000 + i, PIECE_TARGET_BYTES, withHistory));
}

// ---- compressors ------------------------------------------------------------------

function zlibPiece(level: number): (input: Buffer) => Uint8Array {
  return (input) => compressPiece(input, level).deflated;
}

/** fflate's only byte-aligned, non-final ending: stream, then flush(true), never push(final). */
function fflateSyncPiece(level: 1 | 6): (input: Buffer) => Uint8Array {
  return (input) => {
    const chunks: Uint8Array[] = [];
    const deflate = new Deflate({ level }, (chunk) => chunks.push(chunk));
    deflate.push(input);
    deflate.flush(true);
    return Buffer.concat(chunks);
  };
}

function fflateFinalPiece(level: 1 | 6): (input: Buffer) => Uint8Array {
  return (input) => deflateSync(input, { level });
}

interface Compressor {
  name: string;
  run: (input: Buffer) => Uint8Array;
  /** Ends byte-aligned without a final block, so it can be a middle piece. */
  joinable: boolean;
}

const COMPRESSORS: Compressor[] = [
  { name: 'zlib_l1', run: zlibPiece(1), joinable: true },
  { name: 'zlib_l6', run: zlibPiece(6), joinable: true },
  { name: 'fflate_l1_flush', run: fflateSyncPiece(1), joinable: true },
  { name: 'fflate_l6_flush', run: fflateSyncPiece(6), joinable: true },
  { name: 'fflate_l1_deflateSync', run: fflateFinalPiece(1), joinable: false },
];

/** How many pieces fail to inflate on their own (piece + final block), and whether the joined member gunzips to the input. */
function verifyJoinable(compressor: Compressor, inputs: Buffer[]): { badPieces: number; memberOk: boolean } {
  let badPieces = 0;
  const joiner = new GzipJoiner();
  for (const input of inputs) {
    const deflated = Buffer.from(compressor.run(input));
    try {
      if (!inflateRawSync(Buffer.concat([deflated, FINAL_EMPTY_BLOCK])).equals(input)) badPieces++;
    } catch {
      badPieces++;
    }
    joiner.push({ deflated, crc: crc32(input), rawLength: input.length });
  }
  const member = joiner.build();
  let memberOk = false;
  try {
    memberOk = gunzipSync(Buffer.concat(member.chunks as Buffer[])).equals(Buffer.concat(inputs));
  } catch {
    memberOk = false;
  }
  return { badPieces, memberOk };
}

async function benchCompressors(label: string, inputs: Buffer[], out: Measurements): Promise<void> {
  const rawBytes = inputs.reduce((sum, input) => sum + input.length, 0);
  out[`${label}_pieces`] = inputs.length;
  out[`${label}_avg_piece_kb`] = rawBytes / inputs.length / 1024;
  const bench = new Bench({ time: TASK_TIME_MS, iterations: 3, warmupTime: 50, warmupIterations: 1 });
  for (const compressor of COMPRESSORS) {
    bench.add(compressor.name, () => {
      for (const input of inputs) compressor.run(input);
    });
  }
  await bench.run();
  for (const compressor of COMPRESSORS) {
    const result = bench.getTask(compressor.name)!.result;
    if (result.state !== 'completed') throw new Error(`${compressor.name}: ${result.state}`);
    const compressed = inputs.reduce((sum, input) => sum + compressor.run(input).length, 0);
    out[`${label}_${compressor.name}_MB_per_s`] = rawBytes / 1e6 / (result.period / 1000);
    out[`${label}_${compressor.name}_ratio`] = rawBytes / compressed;
    if (compressor.joinable) {
      const { badPieces, memberOk } = verifyJoinable(compressor, inputs);
      out[`${label}_${compressor.name}_bad_pieces`] = badPieces;
      out[`${label}_${compressor.name}_member_gunzips`] = memberOk ? 'yes' : 'NO (corrupt)';
    } else {
      out[`${label}_${compressor.name}_member_gunzips`] = 'n/a: ends with a final block';
    }
  }
}

// ---- joining machinery --------------------------------------------------------------

function timeLoop(iterations: number, body: (i: number) => void): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) body(i);
  return Number(process.hrtime.bigint() - start) / iterations; // ns per iteration
}

function benchMachinery(inputs: Buffer[], out: Measurements): void {
  out.crc32Combine_ns = timeLoop(200_000, (i) => crc32Combine(i >>> 0, 0x12345678, 65_536 + i));

  const pieces: DeflatedPiece[] = inputs.map((input) => compressPiece(input, 1));
  const joiner = new GzipJoiner();
  for (let i = 0; i < BOARD_PIECES; i++) joiner.push(pieces[i % pieces.length]);
  out.joiner_pieces = BOARD_PIECES;
  // An insert or remove shifts positions, so the next build rebuilds the CRC tree over all pieces.
  out.joiner_structural_build_ms = timeLoop(20, () => {
    joiner.insert(joiner.size, pieces[0]);
    joiner.build();
    joiner.remove(joiner.size - 1);
    joiner.build();
  }) / 2 / 1e6;
  joiner.build();
  out.joiner_replace_one_and_build_us = timeLoop(2000, (i) => {
    joiner.replace((i * 7919) % BOARD_PIECES, pieces[i % pieces.length]);
    joiner.build();
  }) / 1e3;
  out.joiner_cached_build_ns = timeLoop(100_000, () => joiner.build());

  const set = new PieceSet({ head: '{"events":[', tail: ']}' });
  inputs.forEach((input, i) => set.set(`e${i}`, input, [`event-${i}`]));
  set.assemble();
  out.pieceSet_set_64kb_and_assemble_ms = timeLoop(50, (i) => {
    set.setHead(`{"updated":"${i}","events":[`);
    set.set(`e${i % inputs.length}`, inputs[(i + 1) % inputs.length]);
    set.assemble();
  }) / 1e6;
}

export async function benchGzip(): Promise<Measurements> {
  const out: Measurements = { node: process.version, sync_flush: constants.Z_SYNC_FLUSH };
  const plain = pieceInputs(false);
  const withHistory = pieceInputs(true);
  await benchCompressors('rows', plain, out);
  await benchCompressors('history', withHistory, out);
  benchMachinery(plain, out);
  out.chosen = 'node:zlib deflateRawSync level 1 + Z_SYNC_FLUSH (see engine/snapshot/deflatePiece.ts)';
  return out;
}
