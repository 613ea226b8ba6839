// The process's log on stdout (pino): one line per notable event. Events: start (the
// settings, secrets left out), ready (how long loading took, where to look), shutdown,
// 5xx answers with their request id, ingest and checkpoint problems, and, with
// ACCESS_LOG on, one line per request. Keys and tokens are never logged: the config
// line lists which secrets are set, not their values, and request lines carry the path
// and query but no headers. A password in a URL (NATS_URL=nats://user:password@host) is
// replaced by *** in every line, whichever event quotes it.
//
// Two formats of the same lines (LOG_FORMAT): JSON, one object per line, for files,
// pipes and log collectors; and readable lines (time, level, message) for a person at
// a terminal. `auto`, the default, picks readable when stdout is a terminal.
import pino, { type Logger } from 'pino';
import { redactCredentials } from '../persistence/nats/natsUrl.ts';
import type { Config, LogFormat, LogLevel } from './config.ts';

export type { Logger };

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/**
 * One JSON log line as a person reads it: `12:00:01 info  message`, plus the error's
 * message and the request id when the line carries them. A line that is not JSON (it
 * cannot happen with pino, but a destination must not throw) is passed on as it is.
 */
export function readableLine(json: string): string {
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof fields.time === 'string' ? fields.time.slice(11, 19) : '';
  const level = (LEVEL_NAMES[fields.level as number] ?? String(fields.level)).padEnd(5);
  let text = `${time} ${level} ${typeof fields.msg === 'string' ? fields.msg : ''}`;
  const err = fields.err as { message?: unknown } | undefined;
  if (err !== undefined && typeof err.message === 'string') text += `: ${err.message}`;
  if (typeof fields.requestId === 'string') text += ` [request ${fields.requestId}]`;
  return `${text}\n`;
}

/** Whether a logger of this format writes readable lines to a stream that is (or is not) a terminal. */
export function writesReadable(format: LogFormat, isTerminal: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && isTerminal);
}

/**
 * A logger writing to stdout (or to destination, as the tests do). format 'auto' looks at
 * whether stdout is a terminal; with a destination given it means JSON.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream, format: LogFormat = 'auto'): Logger {
  const out = destination ?? pino.destination({ fd: 1, sync: true });
  const readable = writesReadable(format, destination === undefined && process.stdout.isTTY === true);
  const target: pino.DestinationStream = readable ? { write: (line: string) => void out.write(readableLine(line)) } : out;
  return pino({ level, base: { service: 'odds-engine' }, timestamp: pino.stdTimeFunctions.isoTime, hooks: { streamWrite: redactCredentials } }, target);
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
