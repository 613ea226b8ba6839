// On a process allowed one core, V8's garbage-collection helper threads (concurrent
// marking, parallel scavenges) run on the event loop's core and take it from the
// event loop in slices of several milliseconds. Measured on the large board with the
// server pinned to one core (docs/benchmarks.md, "Snapshot"): plain
// snapshot polls' time to first byte p99 was 14-39 ms with the helper threads and
// 11-16 ms with node's --single-threaded-gc, in three interleaved rounds; with a
// second core the helpers run beside the event loop and the flag would only slow
// collections down.
//
// The flag must be given when node starts: NODE_OPTIONS refuses it, and changing V8
// flags after start (v8.setFlagsFromString) is unsafe once the heap is in use. So a
// process that should have it and does not replaces itself, before it opens
// anything, with the same command plus the flag: process.execve (Node 22.15 and
// later) keeps the process id, so whoever started it (npm, tsx, a supervisor, a test)
// still holds the right process. Where node has no execve, the process goes on
// without the flag and says so.

import { availableParallelism } from 'node:os';

export const SINGLE_THREADED_GC_FLAG = '--single-threaded-gc';

/** The SINGLE_THREADED_GC setting: auto (when the process may use one core only), on, off. */
export type SingleThreadedGcSetting = 'auto' | 'on' | 'off';

/** What the start does about the flag. */
export type SingleThreadedGcOutcome =
  /** Node runs with the flag (given on its command line, or relaunched with it). */
  | { kind: 'on' }
  /** Not wanted: more than one core, or the setting is off. */
  | { kind: 'off' }
  /** Wanted, but this node cannot replace its process: it runs with the helper threads. */
  | { kind: 'unavailable'; reason: string };

export function wantsSingleThreadedGc(setting: SingleThreadedGcSetting, cores = availableParallelism()): boolean {
  return setting === 'on' || (setting === 'auto' && cores <= 1);
}

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

/**
 * Gives the process the flag if the setting wants it: relaunches it in place (never
 * returns then), or says why it runs as it is. Call it before opening files,
 * sockets or threads: the new image starts from scratch.
 */
export function ensureSingleThreadedGc(setting: SingleThreadedGcSetting, cores = availableParallelism()): SingleThreadedGcOutcome {
  if (process.execArgv.includes(SINGLE_THREADED_GC_FLAG)) return { kind: 'on' };
  if (!wantsSingleThreadedGc(setting, cores)) return { kind: 'off' };
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (typeof execve !== 'function') return { kind: 'unavailable', reason: `node ${process.version} has no process.execve (Node 22.15 and later have it)` };
  // A parent's IPC channel (a fork()ed service) is not known to survive the new image.
  if (process.channel !== undefined) return { kind: 'unavailable', reason: 'started with an IPC channel to its parent, which a relaunch could lose' };
  // argv[0] is the node binary, argv[1] the script (tsx's loader is in execArgv): the same command, one flag more.
  execve.call(process, process.execPath, [process.execPath, SINGLE_THREADED_GC_FLAG, ...process.execArgv, ...process.argv.slice(1)], process.env);
  return { kind: 'unavailable', reason: 'process.execve returned' }; // unreachable: execve throws or never returns
}
