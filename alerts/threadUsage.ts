// What one thread of this process got from the CPU scheduler, read from Linux's
// per-thread schedstat (/proc/<pid>/task/<tid>/schedstat: nanoseconds run on a CPU,
// nanoseconds spent runnable but waiting for a CPU, time slices). The second number is
// the one that tells why an event loop was late: work of its own (run time) or waiting
// behind other threads and processes for a core (run-queue wait). The bench
// (bench/alerts.bench.ts) reads it for the main thread, the delivery thread (which
// reports its own through its stats call) and the webhook receivers' process.
//
// Also here: lowering the calling thread's scheduling priority (its nice value; on
// Linux the nice value belongs to each thread, setpriority(2) with a thread id). The
// delivery thread lowers its own when ALERTS_THREAD_NICE says so, so where the CPU is
// short the main thread (ingest acknowledgements, reads, the push stream) gets a core
// before the fan-out does.
import { readFileSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

export interface ThreadUsage {
  /** ms run on a CPU. */
  cpuMs: number;
  /** ms runnable but waiting for a CPU (behind other threads and processes). */
  waitMs: number;
}

/** A thread's usage by its schedstat path; null where there is none (not Linux, or the thread or process has ended). */
export function readUsage(schedstatPath: string): ThreadUsage | null {
  let text: string;
  try {
    text = readFileSync(schedstatPath, 'latin1');
  } catch {
    return null;
  }
  const [run, wait] = text.trim().split(' ');
  const cpu = Number(run);
  const waited = Number(wait);
  if (!Number.isFinite(cpu) || !Number.isFinite(waited)) return null;
  return { cpuMs: cpu / 1e6, waitMs: waited / 1e6 };
}

/** The calling thread's usage (its own schedstat). */
export function ownUsage(): ThreadUsage | null {
  return readUsage('/proc/thread-self/schedstat');
}

/** The main thread's usage, from any thread of the process (its thread id is the process id). */
export function mainThreadUsage(): ThreadUsage | null {
  return readUsage(`/proc/${process.pid}/task/${process.pid}/schedstat`);
}

/** A process's usage (its main thread) by its pid. */
export function processUsage(pid: number): ThreadUsage | null {
  return readUsage(`/proc/${pid}/schedstat`);
}

/** The calling thread's id (Linux), or null. */
export function ownThreadId(): number | null {
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/**
 * Raises the calling thread's nice value by `by` (at most to 19): it then gets less of a
 * busy core than the other threads of the process. Lowering a priority needs no
 * privilege. Returns the nice value set, or null where threads cannot be told apart
 * (not Linux) or the call was refused; the thread then runs at the process's priority.
 */
export function lowerOwnPriority(by: number): number | null {
  if (by <= 0) return null;
  const tid = ownThreadId();
  if (tid === null) return null;
  try {
    const nice = Math.min(19, getPriority(tid) + by);
    setPriority(tid, nice);
    return nice;
  } catch {
    return null;
  }
}
