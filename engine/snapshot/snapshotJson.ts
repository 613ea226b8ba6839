// The snapshot body's JSON, written straight into a ByteSink:
//   {"updated":ISO,"syncToken":"<epoch ms>","count":N,"events":[
//     {"id","league","startTime","status","homeTeamId","awayTeamId","odds":[row,...]}, ...]}
// A row is the /odds row (format all) byte for byte, taken from the engine's fragment
// cache, with "priceHistory" added before its closing brace: null, or the ring's
// entries oldest first as {fs,ls,pa,pd,dm,su} with keys absent when not applicable
// (the same keys and order as historyEntry() gives JSON.stringify).

import type { OddsEngine } from '../engine.ts';
import { americanToDecimal, createHistoryBuffer, EVENT_STATUSES } from '../model.ts';
import { KeptArena } from '../keptBytes.ts';
import { NONE } from '../oddsStore.ts';
import { FORMAT_ALL, rowJsonText } from '../rowJson.ts';
import { isoMillis, isoMinutes } from '../timeFormat.ts';
import type { ByteSink } from './byteSink.ts';

export const EVENT_CLOSE = ']}';
export const SNAPSHOT_TAIL = ']}';
const CLOSE_BRACE = 0x7d;

/** The body up to the events array's opening bracket. syncToken is asOf as epoch-ms digits. */
export function snapshotHead(asOf: number, count: number): string {
  return `{"updated":"${isoMillis(asOf)}","syncToken":"${asOf}","count":${count},"events":[`;
}

/** '{"id":...,"odds":[' of event `ev` (an index into the store's events pool). */
export function writeEventOpen(sink: ByteSink, engine: OddsEngine, ev: number): void {
  const s = engine.store;
  const t = engine.eventTable;
  const home = t.home[ev];
  const away = t.away[ev];
  sink.utf8(
    '{"id":' +
      s.events.json(ev) +
      ',"league":' +
      s.leagues.json(t.league[ev]) +
      ',"startTime":"' +
      isoMinutes(t.startTime[ev]) +
      'Z","status":"' +
      EVENT_STATUSES[t.status[ev]] +
      '","homeTeamId":' +
      (home === NONE ? 'null' : s.teams.json(home)) +
      ',"awayTeamId":' +
      (away === NONE ? 'null' : s.teams.json(away)) +
      ',"odds":[',
  );
}

// Constants and the price and multiplier caches live as long as the process: packed in
// slabs of their own (keptBytes.ts says why).
const keptFragments = new KeptArena();
const ascii = (text: string): Uint8Array => keptFragments.text(text, 'latin1');
const NULL_HISTORY = ascii(',"priceHistory":null}');
/** Room reserved for a cached row's copy (a longer one, if any, is rendered instead). */
const MAX_CACHED_COPY = 4096;
const HISTORY_OPEN = ascii(',"priceHistory":[');
const ENTRY_FS = ascii('{"fs":');
const ENTRY_FS_NEXT = ascii(',{"fs":');
const ENTRY_LS = ascii(',"ls":');
const ENTRY_SUSPENDED_END = ascii(',"su":true}');
const BRACKET_BRACE = ascii(']}');

/** Writes snapshot rows: the cached /odds fragment plus priceHistory, straight into bytes. */
export class SnapshotRowWriter {
  private readonly history = createHistoryBuffer(64);
  /** ',"pa":-110,"pd":1.9091' per American price, ',"dm":1.25' per multiplier. */
  private readonly priceBytes = new Map<number, Uint8Array>();
  private readonly multiplierBytes = new Map<number, Uint8Array>();

  constructor(
    private readonly engine: OddsEngine,
    readonly withHistory: boolean,
  ) {}

  write(sink: ByteSink, slot: number): void {
    // The row's /odds JSON (odds_format=all): copied from the engine's fragment cache
    // when /odds or a stream cached it, else rendered here without caching it. The
    // snapshot keeps the bytes it rendered itself (keptPieceRows.ts): caching them too
    // held a second copy of every row (the large board: 256 MiB, the arena's cap).
    const start = sink.length;
    sink.reserve(MAX_CACHED_COPY);
    let written = this.engine.fragments.copyIfCurrent(slot, FORMAT_ALL, sink.buffer, start);
    if (written >= 0) sink.length += written;
    else {
      sink.utf8(rowJsonText(this.engine.store, slot, FORMAT_ALL));
      written = sink.length - start;
    }
    if (sink.buffer[start + written - 1] !== CLOSE_BRACE) throw new Error(`row fragment of slot ${slot} does not end with '}'`);
    sink.length = start + written - 1;
    if (this.withHistory) this.writeHistory(sink, slot);
    else sink.bytes(NULL_HISTORY);
  }

  /** ',"priceHistory":[...]}' for the slot's ring, oldest first. */
  private writeHistory(sink: ByteSink, slot: number): void {
    const h = this.history;
    const count = this.engine.historyInto(slot, h);
    sink.bytes(HISTORY_OPEN);
    for (let i = 0; i < count; i++) {
      sink.bytes(i === 0 ? ENTRY_FS : ENTRY_FS_NEXT);
      sink.uint(h.fs[i]);
      sink.bytes(ENTRY_LS);
      sink.uint(h.ls[i]);
      if (h.pa[i] !== 0) sink.bytes(this.price(h.pa[i]));
      if (h.dm[i] !== 0) sink.bytes(this.multiplier(h.dm[i]));
      if (h.su[i] === 1) sink.bytes(ENTRY_SUSPENDED_END);
      else sink.byte(CLOSE_BRACE);
    }
    sink.bytes(BRACKET_BRACE);
  }

  private price(american: number): Uint8Array {
    let bytes = this.priceBytes.get(american);
    if (bytes === undefined) {
      bytes = ascii(',"pa":' + american + ',"pd":' + americanToDecimal(american));
      this.priceBytes.set(american, bytes);
    }
    return bytes;
  }

  private multiplier(dm: number): Uint8Array {
    let bytes = this.multiplierBytes.get(dm);
    if (bytes === undefined) {
      bytes = ascii(',"dm":' + dm);
      this.multiplierBytes.set(dm, bytes);
    }
    return bytes;
  }
}
