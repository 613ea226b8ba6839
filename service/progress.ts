// Progress of a long step (generating or loading a board, restoring a checkpoint and
// replaying the log, a bench section). On a terminal: one bar redrawn in place, at most
// ten times a second, with the count, the rate and the time left. Anywhere else (a log
// file, CI, a pipe): one line when the step starts and one when it ends, plus one per
// named phase, so logs stay short and greppable.
//
//   const bar = startProgress('loading odds rows', board.oddsCount);
//   for (...) bar.update(done);      // cheap: a clock read only every 1024 calls
//   bar.finish();                    // the final line: count, elapsed, rate
export interface Progress {
  /** done: units finished so far (of total, when the total is known). */
  update(done: number): void;
  /** A named phase inside the step; always printed (on a terminal, above the bar). */
  phase(note: string): void;
  finish(note?: string): void;
}

export interface ProgressOptions {
  /** Default process.stderr. */
  stream?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Default: whether stream is a terminal. */
  tty?: boolean;
  /** Unit of update()'s count in messages (default 'rows'). */
  unit?: string;
}

const REDRAW_MS = 100;
const BAR_WIDTH = 24;

export function startProgress(label: string, total: number | null, options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? stream.isTTY === true;
  const unit = options.unit ?? 'rows';
  const started = performance.now();
  let lastDraw = 0;
  let calls = 0;
  let done = 0;
  let finished = false;

  const seconds = () => (performance.now() - started) / 1000;
  const line = (): string => {
    const elapsed = seconds();
    const rate = elapsed > 0 ? done / elapsed : 0;
    const parts = [label];
    if (total !== null && total > 0) {
      const share = Math.min(1, done / total);
      const filled = Math.round(share * BAR_WIDTH);
      parts.push(`[${'='.repeat(filled)}${' '.repeat(BAR_WIDTH - filled)}] ${(share * 100).toFixed(0).padStart(3)}%`);
      parts.push(`${count(done)}/${count(total)} ${unit}`);
      parts.push(`${count(Math.round(rate))}/s`);
      parts.push(`ETA ${rate > 0 ? duration((total - done) / rate) : '?'}`);
    } else {
      parts.push(`${count(done)} ${unit}`, `${count(Math.round(rate))}/s`, duration(elapsed));
    }
    return parts.join('  ');
  };
  const draw = () => {
    lastDraw = performance.now();
    stream.write(`\r${line()}\u001b[K`);
  };

  if (!tty) stream.write(`${label}: started${total !== null ? ` (${count(total)} ${unit})` : ''}\n`);
  return {
    update(value) {
      done = value;
      if (!tty || (++calls & 1023) !== 0 && calls > 1) return;
      if (performance.now() - lastDraw >= REDRAW_MS) draw();
    },
    phase(note) {
      if (tty) stream.write(`\r\u001b[K${label}: ${note} (${duration(seconds())})\n`);
      else stream.write(`${label}: ${note} (${duration(seconds())})\n`);
      if (tty) draw();
    },
    finish(note) {
      if (finished) return;
      finished = true;
      const elapsed = seconds();
      const rate = elapsed > 0 && done > 0 ? `, ${count(Math.round(done / elapsed))} ${unit}/s` : '';
      const summary = `${label}: done${done > 0 ? `, ${count(done)} ${unit}` : ''} in ${duration(elapsed)}${rate}${note !== undefined ? ` (${note})` : ''}`;
      stream.write(tty ? `\r\u001b[K${summary}\n` : `${summary}\n`);
    },
  };
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function duration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 10) return `${s.toFixed(1)}s`;
  if (s < 600) return `${Math.round(s)}s`;
  return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
}
