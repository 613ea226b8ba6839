// `npm run bench [section ...]`: runs each benchmark section in turn and prints one
// table per section. Sections are modules exporting one async function that returns
// named measurements; a section that fails is reported and the rest still run.
//
// BENCH_BASELINE=<file>: a bench/results/latest.json kept from an earlier run (another
// commit, or the same one before a change); each measurement that file also has, for
// the same section and name, is printed with the baseline's value beside it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { startProgress } from '../service/progress.ts';

type Measurements = Record<string, number | string>;
interface Section {
  name: string;
  load: () => Promise<() => Promise<Measurements>>;
}

const SECTIONS: Section[] = [
  { name: 'generate', load: async () => (await import('./generate.bench.ts')).benchGenerate },
  { name: 'engine', load: async () => (await import('./engine.bench.ts')).benchEngine },
  { name: 'signals', load: async () => (await import('./signals.bench.ts')).benchSignals },
  { name: 'gzip', load: async () => (await import('./gzip.bench.ts')).benchGzip },
  { name: 'snapshot', load: async () => (await import('./snapshot.bench.ts')).benchSnapshot },
  { name: 'persistence', load: async () => (await import('./persistence.bench.ts')).benchPersistence },
  { name: 'http', load: async () => (await import('./http.bench.ts')).benchHttp },
  { name: 'metrics', load: async () => (await import('./metrics.bench.ts')).benchMetrics },
  { name: 'web', load: async () => (await import('./web.bench.ts')).benchWeb },
  { name: 'stream', load: async () => (await import('./stream.bench.ts')).benchStream },
  { name: 'clients', load: async () => (await import('./clients.bench.ts')).benchClients },
  { name: 'transports', load: async () => (await import('./http-transports.bench.ts')).benchTransports },
  { name: 'feeds', load: async () => (await import('./feeds.bench.ts')).benchFeeds },
  { name: 'ingest', load: async () => (await import('./ingest.bench.ts')).benchIngest },
  { name: 'start', load: async () => (await import('./start.bench.ts')).benchStart },
  { name: 'replicas', load: async () => (await import('./replicas.bench.ts')).benchReplicas },
  { name: 'alerts', load: async () => (await import('./alerts.bench.ts')).benchAlerts },
  { name: 'alerts-catchup', load: async () => (await import('./alertsCatchUp.bench.ts')).benchAlertsCatchUp },
  { name: 'archive', load: async () => (await import('./archive.bench.ts')).benchArchive },
];

function formatValue(value: number | string): string {
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumFractionDigits: 3 });
}

/** The results of an earlier run (BENCH_BASELINE), by section; empty without one. */
function readBaseline(): Record<string, Measurements> {
  const file = process.env.BENCH_BASELINE;
  if (file === undefined || file === '') return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, Measurements>;
  } catch (error) {
    throw new Error(`BENCH_BASELINE=${file} is not a results file of npm run bench (${(error as Error).message})`);
  }
}

async function main(): Promise<void> {
  const baseline = readBaseline();
  const wanted = new Set(process.argv.slice(2));
  const results: Record<string, Measurements | { error: string }> = {};
  const chosen = SECTIONS.filter((section) => wanted.size === 0 || wanted.has(section.name));
  // progress of the whole run on stderr (a bar on a terminal, a line per section otherwise); the tables stay on stdout
  const progress = startProgress('bench', chosen.length, { unit: 'sections' });
  for (const [done, section] of chosen.entries()) {
    progress.phase(`section ${section.name} (${done + 1} of ${chosen.length})`);
    process.stdout.write(`\n## ${section.name}\n`);
    try {
      const run = await section.load();
      const measured = await run();
      results[section.name] = measured;
      const before = baseline[section.name] ?? {};
      for (const [key, value] of Object.entries(measured)) {
        const then = key in before ? `   (baseline: ${formatValue(before[key]!)})` : '';
        process.stdout.write(`${key.padEnd(56)} ${formatValue(value)}${then}\n`);
      }
    } catch (error) {
      const message = error instanceof Error ? error.stack ?? error.message : String(error);
      results[section.name] = { error: message };
      process.stdout.write(`FAILED: ${message}\n`);
    }
    progress.update(done + 1);
  }
  progress.finish();
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', JSON.stringify(results, null, 2));
  process.stdout.write('\nwritten bench/results/latest.json\n');
}

await main();
