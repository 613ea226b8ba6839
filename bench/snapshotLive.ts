// The snapshot bench's live polls in a process of their own, so that the server under
// them starts as a service given one core starts (bench/snapshot.bench.ts
// livePollsInChild runs it under taskset on core 0, with the node flags that implies):
//
//   node [--single-threaded-gc] --expose-gc --import tsx bench/snapshotLive.ts <board> <rates> <seconds>
//
// Generates the board (the bench's seed and time), runs the live polls at each rate
// (comma-separated updates/s) for <seconds> each, and prints the measurements as one
// JSON line on stdout (traces and errors on stderr).
import { availableParallelism } from 'node:os';
import type { BoardSize } from '../engine/model.ts';
import { compressionThreads, setCompressionThreads } from '../engine/snapshot/compressionWorkers.ts';
import { SINGLE_THREADED_GC_FLAG } from '../service/singleThreadedGc.ts';
import { livePolls, loadEngine } from './snapshot.bench.ts';

const [size, ratesText, secondsText] = process.argv.slice(2);
const rates = (ratesText ?? '').split(',').map(Number);
const seconds = Number(secondsText);
if (size === undefined || rates.some((rate) => !(rate > 0)) || !(seconds > 0)) {
  process.stderr.write('usage: snapshotLive.ts <board> <rates> <seconds>\n');
  process.exit(2);
}
if (process.env.BENCH_SNAPSHOT_THREADS !== undefined) setCompressionThreads(Number(process.env.BENCH_SNAPSHOT_THREADS));
const out: Record<string, number | string> = {};
out['live server: cores it may use / compression threads / --single-threaded-gc'] = `${availableParallelism()} / ${compressionThreads()} / ${process.execArgv.includes(SINGLE_THREADED_GC_FLAG) ? 'on' : 'off'}`;
const { engine, clock } = loadEngine(size as BoardSize);
for (const rate of rates) await livePolls(engine, clock, rate, seconds, true, out);
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
