// Renders snapshot JSON into the pieces of one PieceSet and counts what it costs.
// A piece is a run of rows in body order, each written as its row JSON, preceded by
// its event's opening when it is the event's first row and followed by the event's
// closing when it is the last: so rows are always joined by ",", inside an event and
// between events alike, and a piece can hold the end of one event and the start of
// the next.

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
  /** Rows rendered from the board (the rest of a piece's rows are copied from its kept bytes, keptPieceRows.ts). */
  rowsRendered: number;
  /** Events whose whole range was walked again (moved, status or teams changed, a slot recycled). */
  eventsRecut: number;
  /** Pieces that went without a replacement (their rows left, or a cut between them did). */
  slicesDropped: number;
  /** Pieces replaced by more pieces than they were (a new cut, e.g. a row turned hot). */
  slicesSplit: number;
  /** Pieces holding several events that were split (an event went in play, rows turned hot). */
  groupsDissolved: number;
}

export class PieceRenderer {
  readonly pieces: PieceSet;
  readonly stats: VariantStats = { piecesRendered: 0, bytesRendered: 0, rowsRendered: 0, eventsRecut: 0, slicesDropped: 0, slicesSplit: 0, groupsDissolved: 0 };
  /** Where one piece is rendered before it is compressed. */
  readonly sink = new ByteSink();
  private readonly writer: SnapshotRowWriter;

  constructor(
    private readonly engine: OddsEngine,
    readonly withHistory: boolean,
    level: number | undefined,
  ) {
    this.pieces = new PieceSet({ level, compareKeys: compareStrings, tail: SNAPSHOT_TAIL });
    this.writer = new SnapshotRowWriter(engine, withHistory);
  }

  /** Appends one row to the sink: event opening if `first`, closing if `last`. */
  writeRow(sink: ByteSink, slot: number, ev: number, first: boolean, last: boolean): void {
    if (first) writeEventOpen(sink, this.engine, ev);
    this.writer.write(sink, slot);
    if (last) sink.ascii(EVENT_CLOSE);
  }

  /** Stores `raw` (owned by the set from now on) as the piece `key`: compressed here, or on a worker thread. */
  setPiece(key: string, raw: Buffer, deferred: boolean): void {
    if (deferred) this.pieces.setDeferred(key, raw);
    else this.pieces.set(key, raw);
    this.stats.piecesRendered++;
    this.stats.bytesRendered += raw.length;
  }

  rowCount(ev: number): number {
    const list = this.engine.indexes.byEvent[ev];
    return list === undefined ? 0 : list.length;
  }
}
