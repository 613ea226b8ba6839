// The Odds API feed: polls the provider, maps each answer, diffs it against what the
// board holds (BoardMirror) and submits the difference to a BatchSink.
//
// One poll, per sport key:
//   GET /v4/sports/{sport}/odds       the featured markets (h2h, spreads, totals;
//                                      outrights on a futures sport key)
//   GET /v4/sports/{sport}/events     (free) then GET .../events/{id}/odds per event
//                                      for the other markets (player props, alternates,
//                                      team totals, periods): only that endpoint has them
//   GET /v4/sports/{sport}/scores?daysFrom=1   once one of our games has started:
//                                      completed games drop out of the odds answers,
//                                      and this is where they show up as finished
// `all-in-season` asks GET /v4/sports (free) for the active sport keys first.
// Between polls it waits the interval, or longer when the credit budget says so: a
// poll that cost C credits (the sum of x-requests-last) under a budget of B per day
// is followed by at least C / B of a day, so no 24 hours spend more than B.
// A malformed answer or a refused request skips that part of the poll (and says
// why); only a refused API key (401) stops the feed.

import type { IngestChange } from '../../ingest/changes.ts';
import { BatchRejected, type BatchSink } from '../batchSink.ts';
import { BoardMirror } from './boardMirror.ts';
import { mapEvent } from './mapEvent.ts';
import { leagueOfSport } from './mappingTables.ts';
import { ApiKeyRejected, ProviderClient, ProviderRequestError } from './providerClient.ts';
import { MalformedResponse, parseEventOdds, parseEvents, parseOddsList, parseScores, parseSports, type ProviderEventOdds } from './providerTypes.ts';

/** Markets the sport-wide /odds endpoint serves; every other key needs the per-event endpoint. */
const FEATURED_MARKETS = new Set(['h2h', 'spreads', 'totals', 'h2h_3_way', 'outrights']);
const DAY_MS = 86_400_000;
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
  now?: () => number;
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
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

export class TheOddsApiFeed {
  readonly mirror = new BoardMirror();
  readonly stats: FeedStats = { polls: 0, changesSent: 0, batches: 0, skippedAnswers: 0, refusedChanges: 0, creditsSpent: 0, creditsRemaining: null, lastPollCost: 0, nextPollInMs: 0 };
  private readonly client: ProviderClient;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly log: (line: string) => void;
  private readonly stopping = new AbortController();
  private readonly featured: string[];
  private readonly perEvent: string[];

  constructor(private readonly options: TheOddsApiFeedOptions) {
    this.client = options.client;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? abortableSleep;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.featured = options.markets.filter((m) => FEATURED_MARKETS.has(m));
    this.perEvent = options.markets.filter((m) => !FEATURED_MARKETS.has(m));
  }

  stop(): void {
    this.stopping.abort();
  }

  get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  /** Polls until stop() (resolves) or a refused API key (rejects with ApiKeyRejected). */
  async run(): Promise<void> {
    while (!this.stopped) {
      await this.pollOnce();
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
    return Math.max(this.options.intervalMs, byBudget);
  }

  /** One poll of every sport; resolves with the changes it submitted. Rejects only with ApiKeyRejected. */
  async pollOnce(): Promise<number> {
    const spentBefore = this.client.creditsSpent;
    let sent = 0;
    const sports = await this.guard('sports', () => this.sportKeys());
    for (const sport of sports ?? []) {
      if (this.stopped) break;
      sent += await this.pollSport(sport);
    }
    this.stats.polls++;
    this.stats.lastPollCost = this.client.creditsSpent - spentBefore;
    this.stats.creditsSpent = this.client.creditsSpent;
    this.stats.creditsRemaining = this.client.quota.remaining;
    this.stats.nextPollInMs = this.nextDelayMs();
    this.options.progress?.(this.progressLine(), this.stats);
    return sent;
  }

  progressLine(): string {
    const s = this.stats;
    const left = s.creditsRemaining === null ? '?' : s.creditsRemaining.toLocaleString('en-US');
    return (
      `the-odds-api: poll ${s.polls} · credits left ${left} (this poll ${s.lastPollCost}, spent ${s.creditsSpent}) · ` +
      `changes sent ${s.changesSent.toLocaleString('en-US')} in ${s.batches} batches · skipped answers ${s.skippedAnswers} · next in ${Math.round(s.nextPollInMs / 1000)} s`
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
    const outright = sport.endsWith('_winner');
    const changes: IngestChange[] = [];
    const now = this.now();
    const common = { regions: this.options.regions, oddsFormat: 'american', dateFormat: 'iso' };
    const featured = outright ? ['outrights'] : this.featured.filter((m) => m !== 'outrights');
    if (featured.length > 0) {
      const events = await this.guard(`${sport} odds`, async () => parseOddsList((await this.client.get(`/v4/sports/${sport}/odds`, { ...common, markets: featured.join(',') })).body));
      if (events !== null) {
        const covered = new Set(featured);
        for (const event of events) this.mirror.diffEvent(mapEvent(event, mapping, outright), sport, covered, now, changes);
        this.pullVanished(sport, new Set(events.map((e) => e.id)), covered, now, changes);
      }
    }
    if (!outright && this.perEvent.length > 0) {
      const list = await this.guard(`${sport} events`, async () => parseEvents((await this.client.get(`/v4/sports/${sport}/events`, { dateFormat: 'iso' })).body));
      const covered = new Set(this.perEvent);
      for (const listed of list ?? []) {
        if (this.stopped) break;
        const event = await this.guard(`${sport} event ${listed.id} odds`, async () =>
          parseEventOdds((await this.client.get(`/v4/sports/${sport}/events/${listed.id}/odds`, { ...common, markets: this.perEvent.join(',') })).body),
        );
        if (event !== null) this.mirror.diffEvent(mapEvent(event as ProviderEventOdds, mapping, false), sport, covered, now, changes);
      }
    }
    if (!outright) await this.finishGames(sport, now, changes);
    return this.submit(changes);
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

  /** Submits the changes in batches; a refused batch is sent again without the changes it names. */
  private async submit(changes: IngestChange[]): Promise<number> {
    let sent = 0;
    for (let from = 0; from < changes.length; from += BATCH_CHANGES) {
      const batch = changes.slice(from, from + BATCH_CHANGES);
      const ok = await this.submitBatch(batch, true);
      if (ok < 0) {
        this.mirror.unsent(changes.slice(from));
        break;
      }
      sent += ok;
    }
    return sent;
  }

  /** Changes applied, or -1 when the sink is unavailable (the rest waits for the next poll). */
  private async submitBatch(batch: IngestChange[], retryRefused: boolean): Promise<number> {
    try {
      await this.options.sink.submit(batch);
      this.mirror.acknowledged(batch);
      this.stats.batches++;
      this.stats.changesSent += batch.length;
      return batch.length;
    } catch (error) {
      if (!(error instanceof BatchRejected)) throw error;
      if (error.retryable || error.errors.length === 0 || !retryRefused) {
        this.log(`the-odds-api: a batch of ${batch.length} changes was not taken (${error.code}: ${error.message}); the next poll sends it again`);
        return -1;
      }
      const bad = new Set(error.errors.map((e) => e.index));
      const refused = batch.filter((_, i) => bad.has(i));
      this.stats.refusedChanges += refused.length;
      const first = error.errors.slice(0, 3).map((e) => `#${e.index} ${e.code} ${e.field ?? ''}: ${e.detail}`).join('; ');
      this.log(`the-odds-api: ${refused.length} of ${batch.length} changes refused (${first}); sending the rest`);
      this.mirror.refused(refused);
      const rest = batch.filter((_, i) => !bad.has(i));
      return rest.length === 0 ? 0 : this.submitBatch(rest, false);
    }
  }
}
