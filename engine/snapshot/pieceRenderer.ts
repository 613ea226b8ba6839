// Renders snapshot JSON into the pieces of one PieceSet: whole events, runs of an
// event's rows, and the piece itself (compressed by PieceSet.set), counting what it
// costs. Shared by the slices of big events and the groups of small ones.

import type { OddsEngine } from '../engine.ts';
import { ByteSink } from './byteSink.ts';
import { PieceSet } from './pieceSet.ts';
import { compareStrings } from '../rowOrder.ts';
import { EVENT_CLOSE, SNAPSHOT_TAIL, SnapshotRowWriter, writeEventOpen } from './snapshotJson.ts';

export const COMMA = 0x2c;

/** Cumulative counters: what refreshes have cost. */
export interface VariantStats {
  piecesRendered: number;
  bytesRendered: number;
  eventsRecut: number;
  slicesDropped: number;
  slicesSplit: number;
  groupsDissolved: number;
}

export class PieceRenderer {
  readonly pieces: PieceSet;
  readonly stats: VariantStats = { piecesRendered: 0, bytesRendered: 0, eventsRecut: 0, slicesDropped: 0, slicesSplit: 0, groupsDissolved: 0 };
  /** Where one piece is rendered before it is compressed. */
  readonly sink = new ByteSink();
  private readonly writer: SnapshotRowWriter;
  private rowsRendered = 0;

  constructor(
    private readonly engine: OddsEngine,
    readonly withHistory: boolean,
    level: number | undefined,
  ) {
    this.pieces = new PieceSet({ level, compareKeys: compareStrings, tail: SNAPSHOT_TAIL });
    this.writer = new SnapshotRowWriter(engine, withHistory);
  }

  writeWholeEvent(sink: ByteSink, ev: number): void {
    const list = this.engine.indexes.byEvent[ev]!;
    writeEventOpen(sink, this.engine, ev);
    this.writeRows(sink, list.items, 0, list.length);
    sink.ascii(EVENT_CLOSE);
  }

  writeRows(sink: ByteSink, items: Int32Array, start: number, end: number): void {
    for (let i = start; i < end; i++) {
      if (i > start) sink.byte(COMMA);
      this.writer.write(sink, items[i]);
    }
    this.rowsRendered += end - start;
  }

  writeRow(sink: ByteSink, slot: number): void {
    this.writer.write(sink, slot);
    this.rowsRendered++;
  }

  /** Compresses what `sink` holds as the piece `key`. */
  setPiece(key: string, sink: ByteSink): void {
    this.pieces.set(key, sink.view());
    this.stats.piecesRendered++;
    this.stats.bytesRendered += sink.length;
  }

  rowCount(ev: number): number {
    const list = this.engine.indexes.byEvent[ev];
    return list === undefined ? 0 : list.length;
  }

  /** Average rendered row size so far (a first guess before anything is rendered). */
  rowEstimate(): number {
    if (this.rowsRendered < 64) return this.withHistory ? 1500 : 520;
    return this.stats.bytesRendered / this.rowsRendered;
  }
}
