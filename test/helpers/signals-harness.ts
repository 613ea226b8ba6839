// Test support for the signals tests (not a test file): a tiny board of OddsInput rows
// wired into SignalBooks the way the engine adapter will be, plus the served JSON form of
// every row for the brute-force reference.

import { americanToDecimal, oddsId, type OddsInput } from '../../engine/model.ts';
import type { OddsRowJson } from './bruteForce.ts';
import type { SignalsConfig } from '../../engine/signals/records.ts';
import type { ScreenConfig } from '../../engine/signals/screenRecords.ts';
import { RowQuoteSource } from './rowQuoteSource.ts';
import { SignalBooks } from '../../engine/signals/signalBooks.ts';

import { NOW } from '../../fixtures/harness/now.ts';
export { NOW };
export const START = Date.parse('2026-11-21T15:00:00Z');

const lineToken = (line: number | null): string => (line === null ? 'ML' : line < 0 ? `m${-line}` : `${line}`);

/** An odds row with sensible defaults; selectionId derives from period, side, line and player/team. */
export function row(fields: Partial<OddsInput> & Pick<OddsInput, 'sportsbook' | 'side'>): OddsInput {
  const market = fields.market ?? 'MONEYLINE';
  const side = fields.side;
  const line = fields.line ?? null;
  const playerId = fields.playerId ?? null;
  const teamSide = fields.teamSide ?? (side === 'HOME' || side === 'AWAY' ? side : 'NONE');
  const period = fields.period ?? 'FULL';
  const subject = playerId ?? (teamSide !== 'NONE' && side !== 'HOME' && side !== 'AWAY' ? teamSide : 'G');
  return {
    eventId: 'nba-20261121-lal-bos',
    league: 'nba',
    market,
    marketSubtype: market,
    period,
    selectionId: `${period}-${side}-${lineToken(line)}-${subject}`,
    selection: `${side} ${line ?? ''}`.trim(),
    teamSide,
    teamName: teamSide === 'HOME' ? 'Boston' : teamSide === 'AWAY' ? 'Los Angeles' : '',
    priceAmerican: null,
    dfsMultiplier: null,
    playerName: playerId === null ? null : `Player ${playerId}`,
    teamId: null,
    suspended: false,
    eventStartTime: START,
    updated: NOW - 60_000,
    marketScope: null,
    segment: null,
    ...fields,
    line,
    playerId,
    side,
  };
}

/** The JSON object /odds would serve for a row (format all). */
export function rowJson(input: OddsInput): OddsRowJson {
  const json: OddsRowJson = {
    id: oddsId(input),
    sportsbook: input.sportsbook,
    league: input.league,
    eventId: input.eventId,
    market: input.market,
    marketSubtype: input.marketSubtype,
    period: input.period,
    selection: input.selection,
    side: input.side,
    teamSide: input.teamSide,
    teamName: input.teamName,
    suspended: input.suspended,
    eventStartTime: new Date(input.eventStartTime).toISOString().slice(0, 16),
    updated: new Date(input.updated).toISOString(),
  };
  if (input.priceAmerican !== null) {
    json.priceAmerican = input.priceAmerican;
    json.priceDecimal = americanToDecimal(input.priceAmerican);
  }
  if (input.line !== null) json.line = input.line;
  if (input.dfsMultiplier !== null) json.dfsMultiplier = input.dfsMultiplier;
  if (input.playerId !== null) json.playerId = input.playerId;
  if (input.playerName !== null) json.playerName = input.playerName;
  if (input.marketScope !== null) json.marketScope = input.marketScope;
  if (input.segment !== null) json.segment = input.segment;
  return json;
}

/** Rows by ref, forwarded to SignalBooks exactly as the engine adapter will forward its changes. */
export class SignalBoard {
  readonly books: SignalBooks;
  readonly source: RowQuoteSource;
  now = NOW;
  private readonly refs = new Map<string, number>();
  private readonly freeRefs: number[] = [];
  private nextRef = 0;

  constructor(config: Partial<SignalsConfig> = {}, screenConfig: Partial<ScreenConfig> = {}) {
    this.books = new SignalBooks(config, undefined, screenConfig);
    this.source = new RowQuoteSource(this.books.sources);
  }

  /** Insert or replace a row (by id). */
  upsert(input: OddsInput): number {
    const id = oddsId(input);
    let ref = this.refs.get(id);
    if (ref === undefined) {
      ref = this.freeRefs.pop() ?? this.nextRef++;
      this.refs.set(id, ref);
    }
    this.source.set(ref, input);
    // for an existing id this re-places the row, in case its line moved
    this.books.inserted(ref, input, this.source);
    return ref;
  }

  /**
   * A price/suspension/refresh on an existing row, forwarded the way the adapter will:
   * as values (priced, the hot path) or through the source (changed).
   */
  change(id: string, fields: Partial<Pick<OddsInput, 'priceAmerican' | 'dfsMultiplier' | 'suspended' | 'updated'>>, via: 'priced' | 'changed' = 'priced'): void {
    const ref = this.refs.get(id)!;
    const next = { ...this.source.rows[ref]!, ...fields };
    this.source.set(ref, next);
    if (via === 'changed') {
      this.books.changed(ref, this.source);
      return;
    }
    const decimal = next.priceAmerican === null ? NaN : americanToDecimal(next.priceAmerican);
    this.books.priced(ref, decimal, next.suspended, next.updated, next.dfsMultiplier ?? NaN, this.source);
  }

  remove(id: string): void {
    const ref = this.refs.get(id)!;
    this.books.removed(ref, this.source);
    this.source.delete(ref);
    this.refs.delete(id);
    this.freeRefs.push(ref);
  }

  rows(): OddsInput[] {
    return this.source.rows.filter((r): r is OddsInput => r !== undefined);
  }

  json(): OddsRowJson[] {
    return this.rows().map(rowJson);
  }

  has(id: string): boolean {
    return this.refs.has(id);
  }
}
