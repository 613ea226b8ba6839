// The process's structured log: one JSON line per notable event on stdout (pino).
// Events: start (the settings, secrets left out), ready (how long loading took),
// shutdown, 5xx answers with their request id, ingest and checkpoint problems, and, with
// ACCESS_LOG on, one line per request. Keys and tokens are never logged: the config
// line lists which secrets are set, not their values, and request lines carry the path
// and query but no headers. A password in a URL (NATS_URL=nats://user:password@host) is
// replaced by *** in every line, whichever event quotes it.
import pino, { type Logger } from 'pino';
import { redactCredentials } from '../persistence/nats/natsUrl.ts';
import type { Config, LogLevel } from './config.ts';

export type { Logger };

export function createLogger(level: LogLevel, destination: pino.DestinationStream = pino.destination({ fd: 1, sync: true })): Logger {
  return pino({ level, base: { service: 'odds-engine' }, timestamp: pino.stdTimeFunctions.isoTime, hooks: { streamWrite: redactCredentials } }, destination);
}

/** The settings as they can be logged: secrets replaced by whether they are set. */
export function loggableConfig(config: Config): Record<string, unknown> {
  return {
    ...config,
    cursorSecret: config.cursorSecret !== undefined ? 'set' : 'default',
    ingestToken: config.ingestToken !== null ? 'set' : 'unset',
    oddsApiKey: config.oddsApiKey !== null ? 'set' : 'unset',
  };
}
