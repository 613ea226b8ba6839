import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` until it holds or `timeoutMs` has passed, and says whether it held.
 * For background work (timers, write-behind, socket teardown): a fixed sleep before an
 * assertion is a timing assertion in disguise and fails on a loaded CI machine, while
 * polling only waits longer there.
 */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, stepMs = 10): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(stepMs);
  }
}
