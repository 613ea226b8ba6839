// The Odds API feed: polls the provider, maps each answer, diffs it against what the
// board holds (BoardMirror) and submits the difference to a BatchSink.
//
// One poll, per sport key (pollPlan.ts says which endpoint carries which market):
//   GET /v4/sports/{sport}/odds       the featured markets (h2h, spreads, totals;
//                                      outrights on a futures sport key)
//   GET /v4/sports/{sport}/events     (free) then GET .../events/{id}/odds per event
//                                      for the other markets (3-way, player props,
//                                      alternates, team totals, periods): only that
//                                      endpoint has them; at most every eventIntervalMs
//   GET /v4/sports/{sport}/scores?daysFrom=1   once one of our games has started:
//                                      completed games drop out of the odds answers,
//                                      and this is where they show up as finished
// `all-in-season` asks GET /v4/sports (free) for the active sport keys first.
// Between polls it waits the interval, or longer when a credit budget says so: a
// poll that cost C credits (the sum of x-requests-last) under a budget of B per day
// is followed by at least C / B of a day, so no 24 hours spend more than B; likewise
// C / H of an hour under H credits per hour.
// A malformed answer or a refused request skips that part of the poll (and says
// why); only a refused API key (401) or ingest token stops the feed.
//
// Markets: a key the mapping tables do not carry is never asked for, and a key the
// provider answers 422 for (a non-featured market on the sport endpoint, a market the
// provider does not know) is dropped for that sport, found by asking for each market
// of the refused call alone (a 422 costs nothing, and the markets that flow cost what
// they cost together). Either is said once: a log line, droppedMarkets() (which
// /readyz and the metrics read); every other market and sport keeps flowing.
//
// Quota: when x-requests-remaining reaches 0 (or a 401 says the credits are spent) the
// feed pauses: no paid call until the free GET /v4/sports shows credits again, checked
// once per interval. While fewer credits are left than lowQuotaPolls polls like the
// last one cost, it says so once.
//
// Delivery: one batch in flight at a time, in the order the poll made them, and no
// provider call while a batch waits: a batch the ingest path could not take (its
// listener down or restarting, 503 log_unavailable) is sent again, the same batch, after
// a back-off with jitter, until it is acknowledged; so the board takes the feed's
// changes in order and each batch is logged once. The one case where a batch may be
// logged twice is an answer lost after the batch was sent (a timeout, the service
// killed while answering): sending it again then changes no price (a price equal to
// the row's is not a new history entry), and a remove or status change it already made
// is refused, which the mirror takes as done.

import type { IngestChange } from '../../ingest/changes.ts';
import { BatchRejected, type BatchSink } from '../batchSink.ts';
import { BoardMirror } from './boardMirror.ts';
import { mapEvent } from './mapEvent.ts';
import { leagueOfSport } from './mappingTables.ts';
import { isOutrightSport, planLines, pollPlan, routeOf, type PollPlan } from './pollPlan.ts';
import { ApiKeyRejected, ProviderClient, ProviderRequestError, QuotaExhausted, abortableSleep } from './providerClient.ts';
import { MalformedResponse, parseEventOdds, parseEvents, parseOddsList, parseScores, parseSports, type ProviderEvent, type ProviderEventOdds } from './providerTypes.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Changes per submitted batch. */
const BATCH_CHANGES = 2000;

export interface TheOddsApiFeedOptions {
  client: ProviderClient;
  sink: BatchSink;
  /** Sport keys, or ['all-in-season']. */
  sports: readonly string[];
  regions: string;
  markets: readonly string[];
  /** Shortest wait between polls. */
  intervalMs: number;
  /** Credits a day the feed may spend (0 = no budget). */
  budgetPerDay?: number;
  /** Credits an hour the feed may spend (0 = no budget); the stricter budget wins. */
  creditsPerHour?: number;
  /** Shortest wait between two passes over a sport's events for the per-event markets (default intervalMs). */
  eventIntervalMs?: number;
  /** First wait before a batch the ingest path could not take is sent again (doubles per attempt, times a jitter of 0.5..1.5); default 500 ms. */
  retryBaseMs?: number;
  /** Longest such wait; default 30 s. */
  retryMaxMs?: number;
  /** Warn while the credits left cover fewer than this many polls like the last one (default 10). */
  lowQuotaPolls?: number;
  now?: () => number;
  random?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  log?: (line: string) => void;
  /** Called after every poll with the progress line. */
  progress?: (line: string, stats: FeedStats) => void;
}

export interface FeedStats {
  polls: number;
  changesSent: number;
  batches: number;
  skippedAnswers: number;
  refusedChanges: number;
  creditsSpent: number;
  creditsRemaining: number | null;
  lastPollCost: number;
  nextPollInMs: number;
  /** Batches sent again because the ingest path could not take them. */
  ingestRetries: number;
  /** True while the quota is spent and the feed makes no paid call. */
  quotaPaused: boolean;
  /** Markets dropped (a key the mapping does not carry, or one the provider refused with 422), per sport. */
  droppedMarkets: number;
}

/** A market the feed no longer asks for, and why (said once). */
export interface DroppedMarket {
  /** '*' for a key dropped before any request (every sport). */
  sport: string;
  market: string;
  endpoint: 'sport' | 'event' | 'none';
  reason: string;
  /** Epoch ms when it was dropped. */
  at: number;
}

/** The ingest listener refused the feed's token (401): sending more cannot help, so the feed stops. */
export class IngestTokenRejected extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'IngestTokenRejected';
  }
}

/** An event odds answer is about the event asked for (same id, same start as /events listed it). */
function sameEvent(answer: ProviderEventOdds, listed: ProviderEvent): boolean {
  return answer.id === listed.id;
}

/** '0.3 s', '12 s': whole seconds once they are ten or more. */
function secondsText(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms / 1000)} s`;
}

export class TheOddsApiFeed {
  readonly mirror = new BoardMirror();
  readonly stats: FeedStats = {
    polls: 0,
    changesSent: 0,
    batches: 0,
    skippedAnswers: 0,
    refusedChanges: 0,
    creditsSpent: 0,
    creditsRemaining: null,
    lastPollCost: 0,
    nextPollInMs: 0,
    ingestRetries: 0,
    quotaPaused: false,
    droppedMarkets: 0,
  };
  private readonly client: ProviderClient;
  private readonly now: () => number;
  private readonly random: () => number;
  /** A 401 said the credits are spent (the remaining header may not have said so): the credits left then (null: unknown), undefined when not refused. */
  private quotaRefusedAt: number | null | undefined = undefined;
  private quotaWarned = false;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly log: (line: string) => void;
  private readonly stopping = new AbortController();
  private readonly featured: string[];
  private readonly perEvent: string[];
  private readonly dropped = new Map<string, DroppedMarket>();
  /** Events the last /events answer of a sport listed. */
  private readonly eventCounts = new Map<string, number>();
  /** When each sport's per-event markets were last polled. */
  private readonly lastEventPass = new Map<string, number>();
  private readonly eventIntervalMs: number;
  private loggedPlan = '';

  constructor(private readonly options: TheOddsApiFeedOptions) {
    this.client = options.client;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? abortableSleep;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.featured = options.markets.filter((m) => routeOf(m) === 'sport');
    this.perEvent = options.markets.filter((m) => routeOf(m) === 'event');
    this.eventIntervalMs = options.eventIntervalMs ?? options.intervalMs;
    for (const market of options.markets) {
      if (routeOf(market) === null) this.dropMarket('*', market, 'none', 'not a market key the feed maps (feeds/theOddsApi/mappingTables.ts); never asked for');
    }
  }

  /** Markets no longer asked for, in the order they were dropped. */
  droppedMarkets(): DroppedMarket[] {
    return [...this.dropped.values()];
  }

  /** The market keys still asked for on each endpoint for a sport. */
  marketsOf(sport: string): { sport: string[]; event: string[] } {
    const live = (m: string) => !this.dropped.has(`${sport}/${m}`);
    if (isOutrightSport(sport)) return { sport: live('outrights') ? ['outrights'] : [], event: [] };
    return { sport: this.featured.filter((m) => m !== 'outrights' && live(m)), event: this.perEvent.filter(live) };
  }

  /** What each configured sport and market costs an hour at the chosen intervals, and what the budget makes of it. */
  plan(sports: readonly string[] = this.plannedSports): PollPlan {
    return pollPlan({
      sports,
      regions: this.options.regions,
      marketsOf: (sport) => this.marketsOf(sport),
      eventsOf: (sport) => this.eventCounts.get(sport) ?? null,
      intervalMs: this.options.intervalMs,
      eventIntervalMs: this.eventIntervalMs,
      creditsPerHour: this.options.creditsPerHour ?? 0,
      budgetPerDay: this.options.budgetPerDay ?? 0,
    });
  }

  private plannedSports: string[] = [];

  /** Logs the plan when it differs from the one logged last (first poll, event counts known, a market dropped). */
  private logPlan(): void {
    const lines = planLines(this.plan());
    const text = lines.join('\n');
    if (text === this.loggedPlan) return;
    this.loggedPlan = text;
    for (const line of lines) this.log(line);
  }

  private dropMarket(sport: string, market: string, endpoint: DroppedMarket['endpoint'], reason: string): void {
    const key = `${sport}/${market}`;
    if (this.dropped.has(key)) return;
    this.dropped.set(key, { sport, market, endpoint, reason, at: this.now() });
    this.stats.droppedMarkets = this.dropped.size;
    this.log(`the-odds-api: dropped market ${market}${sport === '*' ? '' : ` for ${sport}`}: ${reason}; the other markets keep flowing`);
  }

  stop(): void {
    this.stopping.abort();
    this.client.stop();
  }

  get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  /** Polls until stop() (resolves) or a refused API key (rejects with ApiKeyRejected). */
  async run(): Promise<void> {
    while (!this.stopped) {
      if (this.quotaSpent()) await this.checkQuota();
      else await this.pollOnce();
      if (this.stopped) break;
      const delay = this.nextDelayMs();
      this.stats.nextPollInMs = delay;
      await this.sleep(delay, this.stopping.signal);
    }
  }

  /** The wait before the next poll: the interval, or what the budget allows after the last poll's cost. */
  nextDelayMs(): number {
    const budget = this.options.budgetPerDay ?? 0;
    const byBudget = budget > 0 ? Math.ceil((this.stats.lastPollCost * DAY_MS) / budget) : 0;
    const perHour = this.options.creditsPerHour ?? 0;
    const byHourly = perHour > 0 ? Math.ceil((this.stats.lastPollCost * HOUR_MS) / perHour) : 0;
    return Math.max(this.options.intervalMs, byBudget, byHourly);
  }

  /** One poll of every sport; resolves with the changes it submitted. Rejects only with ApiKeyRejected or IngestTokenRejected. */
  async pollOnce(): Promise<number> {
    const spentBefore = this.client.creditsSpent;
    let sent = 0;
    const sports = await this.guard('sports', () => this.sportKeys());
    if (sports !== null) this.plannedSports = sports;
    for (const sport of sports ?? []) {
      if (this.stopped || this.quotaSpent()) break;
      sent += await this.pollSport(sport);
    }
    this.logPlan();
    this.stats.polls++;
    this.stats.lastPollCost = this.client.creditsSpent - spentBefore;
    this.updateQuota();
    this.stats.nextPollInMs = this.nextDelayMs();
    this.options.progress?.(this.progressLine(), this.stats);
    return sent;
  }

  /** No credits left: x-requests-remaining said 0, or a 401 said the quota is spent. */
  quotaSpent(): boolean {
    const remaining = this.client.quota.remaining;
    return this.quotaRefusedAt !== undefined || (remaining !== null && remaining <= 0);
  }

  /**
   * While paused: the free GET /v4/sports reads the quota headers again. Polling resumes
   * once they show more credits than when the provider refused (a renewal), or when the
   * answer does not say (the next paid call will tell).
   */
  private async checkQuota(): Promise<void> {
    const answer = await this.guard('quota check', () => this.client.get('/v4/sports'));
    const refusedAt = this.quotaRefusedAt;
    if (answer !== null && refusedAt !== undefined && (answer.remaining === null || answer.remaining > (refusedAt ?? 0))) this.quotaRefusedAt = undefined;
    // an answer without the header cannot keep the pause a header started: the next paid call will tell
    if (answer !== null && answer.remaining === null) this.client.quota.remaining = null;
    this.updateQuota();
    this.stats.nextPollInMs = this.nextDelayMs();
    this.options.progress?.(this.progressLine(), this.stats);
  }

  /** Stats and the log lines of entering and leaving the pause and of running low. */
  private updateQuota(): void {
    this.stats.creditsSpent = this.client.creditsSpent;
    const remaining = this.client.quota.remaining;
    this.stats.creditsRemaining = remaining;
    const paused = this.quotaSpent();
    if (paused && !this.stats.quotaPaused) {
      this.log(
        `the-odds-api: the usage quota is spent (credits left ${remaining ?? '?'}); no paid calls until it is renewed, checking every ${secondsText(this.options.intervalMs)} with the free /v4/sports`,
      );
    } else if (!paused && this.stats.quotaPaused) {
      this.log(`the-odds-api: credits again (${remaining?.toLocaleString('en-US') ?? '?'} left); polling resumes`);
      this.quotaWarned = false;
    }
    this.stats.quotaPaused = paused;
    const cost = this.stats.lastPollCost;
    const low = !paused && remaining !== null && cost > 0 && remaining < (this.options.lowQuotaPolls ?? 10) * cost;
    if (low && !this.quotaWarned) this.log(`the-odds-api: credits running low: ${remaining} left, about ${Math.floor(remaining / cost)} polls at ${cost} credits each`);
    // a poll cut short (cost 0) says nothing about the rate: the warning stands until credits are plenty again
    if (low || paused) this.quotaWarned = true;
    else if (cost > 0) this.quotaWarned = false;
  }

  progressLine(): string {
    const s = this.stats;
    const left = s.creditsRemaining === null ? '?' : s.creditsRemaining.toLocaleString('en-US');
    return (
      `the-odds-api: poll ${s.polls} · credits left ${left} (this poll ${s.lastPollCost}, spent ${s.creditsSpent}) · ` +
      `changes sent ${s.changesSent.toLocaleString('en-US')} in ${s.batches} batches · skipped answers ${s.skippedAnswers}${s.droppedMarkets > 0 ? ` · markets dropped ${s.droppedMarkets}` : ''}${s.ingestRetries > 0 ? ` · batches resent ${s.ingestRetries}` : ''} · ` +
      `${s.quotaPaused ? 'paused: quota spent · ' : ''}next in ${secondsText(s.nextPollInMs)}`
    );
  }

  private async sportKeys(): Promise<string[]> {
    if (!this.options.sports.includes('all-in-season')) return [...this.options.sports];
    const { body } = await this.client.get('/v4/sports');
    return parseSports(body)
      .filter((sport) => sport.active && leagueOfSport(sport.key) !== null)
      .map((sport) => sport.key);
  }

  /** Runs one request's work; a skipped answer is logged and yields null. ApiKeyRejected goes on up. */
  private async guard<T>(what: string, work: () => Promise<T>): Promise<T | null> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ApiKeyRejected) {
        this.stop();
        throw error;
      }
      if (error instanceof QuotaExhausted) {
        this.quotaRefusedAt = this.client.quota.remaining;
        this.log(`the-odds-api: skipped ${what}: ${error.message}`);
        return null;
      }
      if (error instanceof MalformedResponse || error instanceof ProviderRequestError) {
        this.stats.skippedAnswers++;
        this.log(`the-odds-api: skipped ${what}: ${error.message}`);
        return null;
      }
      throw error;
    }
  }

  private async pollSport(sport: string): Promise<number> {
    const mapping = leagueOfSport(sport);
    if (mapping === null) {
      this.log(`the-odds-api: no league for sport key ${sport} (add it to SPORT_LEAGUES in feeds/theOddsApi/mappingTables.ts)`);
      return 0;
    }
    const outright = isOutrightSport(sport);
    const changes: IngestChange[] = [];
    const now = this.now();
    const common = { regions: this.options.regions, oddsFormat: 'american', dateFormat: 'iso' };
    const markets = this.marketsOf(sport);
    if (markets.sport.length > 0) {
      const answers = await this.guard(`${sport} odds`, () =>
        this.byMarkets(sport, 'sport', markets.sport, async (keys) => parseOddsList((await this.client.get(`/v4/sports/${sport}/odds`, { ...common, markets: keys.join(',') })).body)),
      );
      for (const { value: events, markets: keys } of answers ?? []) {
        const covered = new Set(keys);
        for (const event of events) this.mirror.diffEvent(mapEvent(event, mapping, outright), sport, covered, now, changes);
        this.pullVanished(sport, new Set(events.map((e) => e.id)), covered, now, changes);
      }
    }
    const lastPass = this.lastEventPass.get(sport);
    if (markets.event.length > 0 && (lastPass === undefined || now - lastPass >= this.eventIntervalMs)) {
      this.lastEventPass.set(sport, now);
      const list = await this.guard(`${sport} events`, async () => parseEvents((await this.client.get(`/v4/sports/${sport}/events`, { dateFormat: 'iso' })).body));
      if (list !== null) this.eventCounts.set(sport, list.length);
      for (const listed of list ?? []) {
        if (this.stopped || this.quotaSpent()) break;
        // a market dropped on an earlier event of this pass is not asked for again
        const keys = this.marketsOf(sport).event;
        if (keys.length === 0) break;
        const answers = await this.guard(`${sport} event ${listed.id} odds`, () =>
          this.byMarkets(sport, 'event', keys, async (ks) => parseEventOdds((await this.client.get(`/v4/sports/${sport}/events/${listed.id}/odds`, { ...common, markets: ks.join(',') })).body)),
        );
        for (const { value: event, markets: covered } of answers ?? []) {
          if (!sameEvent(event, listed)) {
            this.stats.skippedAnswers++;
            this.log(`the-odds-api: skipped ${sport} event ${listed.id} odds: the answer is about event ${event.id}`);
            continue;
          }
          this.mirror.diffEvent(mapEvent(event as ProviderEventOdds, mapping, false), sport, new Set(covered), now, changes);
        }
      }
    }
    if (!outright && !this.quotaSpent()) await this.finishGames(sport, now, changes);
    return this.submit(changes);
  }

  /**
   * One request for `markets`; on a 422 about markets, one request per market, so the
   * markets the endpoint refuses are found (and dropped for this sport) while the others
   * are still answered in this poll. A 422 costs no credits.
   */
  private async byMarkets<T>(sport: string, endpoint: 'sport' | 'event', markets: readonly string[], fetch: (markets: readonly string[]) => Promise<T>): Promise<{ value: T; markets: string[] }[]> {
    try {
      return [{ value: await fetch(markets), markets: [...markets] }];
    } catch (error) {
      if (!(error instanceof ProviderRequestError) || error.status !== 422 || !/market/i.test(error.message)) throw error;
      if (markets.length === 1) {
        this.dropMarket(sport, markets[0], endpoint, `the provider refused it on the ${endpoint === 'sport' ? 'sport odds' : 'event odds'} endpoint (${error.message})`);
        return [];
      }
      const out: { value: T; markets: string[] }[] = [];
      for (const market of markets) {
        if (this.stopped || this.quotaSpent()) break;
        out.push(...(await this.byMarkets(sport, endpoint, [market], fetch)));
      }
      return out;
    }
  }

  /** Events gone from an odds answer before they started: their books pulled them, so their rows go. */
  private pullVanished(sport: string, listed: ReadonlySet<string>, covered: ReadonlySet<string>, now: number, out: IngestChange[]): void {
    for (const event of this.mirror.openEvents(sport)) {
      if (listed.has(event.id) || event.startTime <= now) continue;
      this.mirror.pullMissing(event.id, covered, new Set(), out);
    }
  }

  private async finishGames(sport: string, now: number, out: IngestChange[]): Promise<void> {
    const started = this.mirror.openEvents(sport).filter((e) => e.startTime <= now);
    if (started.length === 0) return;
    const scores = await this.guard(`${sport} scores`, async () => parseScores((await this.client.get(`/v4/sports/${sport}/scores`, { daysFrom: '1', dateFormat: 'iso' })).body));
    if (scores === null) return;
    const open = new Set(started.map((e) => e.id));
    for (const score of scores) {
      if (!open.has(score.id)) continue;
      if (score.completed) this.mirror.statusTo(score.id, 'final', out);
      else if (score.scores !== null) this.mirror.statusTo(score.id, 'in_progress', out);
    }
  }

  /** Submits the changes in batches, each acknowledged before the next is sent. */
  private async submit(changes: IngestChange[]): Promise<number> {
    let sent = 0;
    for (let from = 0; from < changes.length; from += BATCH_CHANGES) {
      const delivered = await this.deliver(changes.slice(from, from + BATCH_CHANGES));
      if (delivered < 0) {
        // stopped while waiting, or a batch the ingest path will never take: the rest is diffed again next poll
        this.mirror.unsent(changes.slice(from));
        break;
      }
      sent += delivered;
    }
    return sent;
  }

  /**
   * Sends one batch until it is acknowledged: again after a back-off while the ingest
   * path cannot take it, and without the changes it refuses (named by index) when it
   * refuses some. Resolves with the changes applied, or -1 when the feed stopped or the
   * batch can never be taken.
   */
  private async deliver(batch: IngestChange[]): Promise<number> {
    let resends = 0;
    while (!this.stopped) {
      try {
        await this.options.sink.submit(batch);
      } catch (error) {
        if (!(error instanceof BatchRejected)) throw error;
        if (error.code === 'invalid_token') {
          this.stop();
          throw new IngestTokenRejected(`the ingest listener refused the token (${error.message})`);
        }
        if (error.retryable) {
          const ms = Math.min(this.options.retryMaxMs ?? 30_000, (this.options.retryBaseMs ?? 500) * 2 ** Math.min(resends, 20)) * (0.5 + this.random());
          resends++;
          this.stats.ingestRetries++;
          this.log(`the-odds-api: ${this.options.sink.description} did not take a batch of ${batch.length} changes (${error.code}: ${error.message}); sending the same batch again in ${(ms / 1000).toFixed(1)} s (resend ${resends}), no provider call meanwhile`);
          await this.sleep(ms, this.stopping.signal);
          continue;
        }
        if (error.errors.length === 0) {
          this.log(`the-odds-api: a batch of ${batch.length} changes was refused whole (${error.code}: ${error.message}); the next poll diffs it again`);
          return -1;
        }
        const bad = new Set(error.errors.map((e) => e.index));
        const refused = batch.filter((_, i) => bad.has(i));
        this.stats.refusedChanges += refused.length;
        const first = error.errors.slice(0, 3).map((e) => `#${e.index} ${e.code} ${e.field ?? ''}: ${e.detail}`).join('; ');
        this.log(`the-odds-api: ${refused.length} of ${batch.length} changes refused (${first}); sending the rest`);
        this.mirror.refused(batch, error.errors);
        batch = batch.filter((_, i) => !bad.has(i));
        if (batch.length === 0) return 0;
        continue;
      }
      if (resends > 0) this.log(`the-odds-api: ${this.options.sink.description} took the batch of ${batch.length} changes after ${resends} resends`);
      this.mirror.acknowledged(batch);
      this.stats.batches++;
      this.stats.changesSent += batch.length;
      return batch.length;
    }
    return -1;
  }
}
