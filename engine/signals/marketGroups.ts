// The table of live market groups: a dense int per group with the metadata its
// records echo, and which row refs (engine slots) belong to it. Groups are created on
// a row's first attach (string work happens only then) and recycled once empty.

import { isoMinutes } from '../timeFormat.ts';
import { grown } from '../columns.ts';
import { groupLineOf, isExcludedRow, marketGroupId, groupScopeOf, type GroupKeyInput } from './groupKey.ts';
import { outcomeSetOf } from './sides.ts';

/** What a group's records echo, taken from the row that opened it. */
export interface GroupRowInput extends GroupKeyInput {
  league: string;
  playerName: string | null;
  /** Epoch ms. */
  eventStartTime: number;
}

/** No group / end of a member list. */
export const NONE = -1;

export class MarketGroups {
  /** Group ids (also the arbitrage record id); '' for a free slot. */
  readonly id: string[] = [];
  readonly eventId: string[] = [];
  readonly league: string[] = [];
  readonly market: string[] = [];
  readonly marketSubtype: string[] = [];
  readonly period: string[] = [];
  readonly playerId: (string | null)[] = [];
  readonly playerName: (string | null)[] = [];
  /** 'YYYY-MM-DDTHH:mm'. */
  readonly eventStartTime: string[] = [];
  /** The group line; NaN when none. */
  line = new Float64Array(64);
  /** sides.ts OUTCOMES_*. */
  outcomes = new Uint8Array(64);

  private readonly byId = new Map<string, number>();
  private readonly free: number[] = [];
  /** Formatted start times, shared by every group of an event. */
  private readonly startTimes = new Map<number, string>();
  // Membership as intrusive doubly linked lists over refs: no per-group objects.
  private memberCounts = new Int32Array(64);
  private firstOfGroup = new Int32Array(64).fill(NONE);
  /** ref -> group, and its neighbours in that group's list. */
  private groupOfRef = new Int32Array(1024).fill(NONE);
  private nextOfRef = new Int32Array(1024);
  private prevOfRef = new Int32Array(1024);

  /** Groups ever allocated (live and free): the bound for per-group tables. */
  get capacity(): number {
    return this.id.length;
  }

  get liveCount(): number {
    return this.byId.size;
  }

  /** The group of a row, creating it if needed; -1 for rows that never take part (futures, YES sides). */
  groupFor(row: GroupRowInput): number {
    if (isExcludedRow(row)) return NONE;
    const line = groupLineOf(row.side, row.line);
    const key = marketGroupId(row.eventId, row.marketSubtype, row.period, line, groupScopeOf(row.side, row.teamSide, row.playerId));
    const known = this.byId.get(key);
    if (known !== undefined) return known;
    const g = this.free.length > 0 ? this.free.pop()! : this.allocate();
    this.id[g] = key;
    this.eventId[g] = row.eventId;
    this.league[g] = row.league;
    this.market[g] = row.market;
    this.marketSubtype[g] = row.marketSubtype;
    this.period[g] = row.period;
    this.playerId[g] = row.playerId;
    this.playerName[g] = row.playerName;
    this.eventStartTime[g] = this.startTimeText(row.eventStartTime);
    this.line[g] = line === null ? NaN : line;
    this.outcomes[g] = outcomeSetOf(row.market, row.side);
    this.memberCounts[g] = 0;
    this.firstOfGroup[g] = NONE;
    this.byId.set(key, g);
    return g;
  }

  indexOf(id: string): number {
    return this.byId.get(id) ?? NONE;
  }

  isLive(g: number): boolean {
    return g >= 0 && g < this.id.length && this.id[g] !== '';
  }

  lineOf(g: number): number | null {
    const line = this.line[g];
    return Number.isNaN(line) ? null : line;
  }

  /** An event moved (postponed, rescheduled): its groups echo the new start. */
  setEventStart(g: number, eventStartTime: number): void {
    this.eventStartTime[g] = this.startTimeText(eventStartTime);
  }

  private startTimeText(ms: number): string {
    let text = this.startTimes.get(ms);
    if (text === undefined) {
      text = isoMinutes(ms);
      this.startTimes.set(ms, text);
    }
    return text;
  }

  // -- membership ---------------------------------------------------------

  groupOf(ref: number): number {
    return ref < this.groupOfRef.length ? this.groupOfRef[ref] : NONE;
  }

  memberCount(g: number): number {
    return this.memberCounts[g];
  }

  /** First ref of group g's members (NONE when empty); walk on with nextMember. */
  firstMember(g: number): number {
    return this.firstOfGroup[g];
  }

  /** The member after ref in its group, NONE at the end. */
  nextMember(ref: number): number {
    return this.nextOfRef[ref];
  }

  /** Puts ref in group g (leaving any group it was in; returns that old group or -1). */
  attach(ref: number, g: number): number {
    const old = this.groupOf(ref);
    if (old === g) return NONE;
    if (old !== NONE) this.detach(ref);
    this.ensureRef(ref);
    const head = this.firstOfGroup[g];
    this.nextOfRef[ref] = head;
    this.prevOfRef[ref] = NONE;
    if (head !== NONE) this.prevOfRef[head] = ref;
    this.firstOfGroup[g] = ref;
    this.memberCounts[g]++;
    this.groupOfRef[ref] = g;
    return old;
  }

  /** Takes ref out of its group; returns the group (-1 if it had none). */
  detach(ref: number): number {
    const g = this.groupOf(ref);
    if (g === NONE) return NONE;
    const next = this.nextOfRef[ref];
    const prev = this.prevOfRef[ref];
    if (prev === NONE) this.firstOfGroup[g] = next;
    else this.nextOfRef[prev] = next;
    if (next !== NONE) this.prevOfRef[next] = prev;
    this.memberCounts[g]--;
    this.groupOfRef[ref] = NONE;
    return g;
  }

  /** Frees an empty group for reuse. The books must already hold nothing for it. */
  releaseIfEmpty(g: number): boolean {
    if (this.memberCounts[g] !== 0 || this.id[g] === '') return false;
    this.byId.delete(this.id[g]);
    this.id[g] = '';
    this.free.push(g);
    return true;
  }

  private allocate(): number {
    const g = this.id.length;
    if (g === this.line.length) {
      this.line = grown(this.line, g + 1);
      this.outcomes = grown(this.outcomes, g + 1);
      this.memberCounts = grown(this.memberCounts, g + 1);
      this.firstOfGroup = grown(this.firstOfGroup, g + 1, NONE);
    }
    this.id.push('');
    this.eventId.push('');
    this.league.push('');
    this.market.push('');
    this.marketSubtype.push('');
    this.period.push('');
    this.playerId.push(null);
    this.playerName.push(null);
    this.eventStartTime.push('');
    return g;
  }

  private ensureRef(ref: number): void {
    if (ref < this.groupOfRef.length) return;
    this.groupOfRef = grown(this.groupOfRef, ref + 1, NONE);
    this.nextOfRef = grown(this.nextOfRef, ref + 1);
    this.prevOfRef = grown(this.prevOfRef, ref + 1);
  }
}
