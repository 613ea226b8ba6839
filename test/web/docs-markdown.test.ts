// The front door as a newcomer meets it. README.md and every docs/*.md page:
// - render as GitHub renders them (marked's GFM rules: tables, one- or two-tilde
//   strikethrough): no strikethrough, no table row whose cells do not match its header,
//   no relative link to a missing file or heading; README.md at most 250 lines;
// - every code block runs, in the order a reader meets them, from a scratch folder with
//   this checkout's node_modules: README.md's quick start (`npm ci`, then `npm start`)
//   starts the service every later block talks to (the board is BOARD=small here to keep
//   the test quick; the command is the same), its ports mapped to free ones. sh blocks run
//   in bash with -e and pipefail, curl failing on any HTTP error; a command that keeps
//   running (`npm start`, `nats-server`, a polling feed) is started in the background and
//   waited for until it says it is ready, and stopped after its page. js blocks run with
//   node, ts blocks with tsx, python blocks with python3 (needs requests; a block whose
//   first line is `# requires: pandas, pyarrow` is skipped where those do not import). `npm` and `npx`
//   are small shims running this checkout's scripts, so `npm ci` is the one command left
//   out (the test runs on what it installed). The Odds API feed polls a local stub of
//   the provider; the replicas page runs a real nats-server.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { STUB_API_KEY, StubProvider, providerEventsFrom } from '../../fixtures/harness/stubProvider.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { freePort } from '../../fixtures/harness/natsServer.ts';
import { anchors, codeBlocks, markdownFiles, relativeLinks, renderingProblems, REPO, type CodeBlock } from '../helpers/markdownDocs.ts';

const README_MAX_LINES = 250;

describe('README.md and docs/ as GitHub renders them', () => {
  it(`README.md has at most ${README_MAX_LINES} lines`, () => {
    const lines = spawnSync('wc', ['-l', join(REPO, 'README.md')], { encoding: 'utf8' }).stdout;
    assert.ok(Number.parseInt(lines, 10) <= README_MAX_LINES, `README.md: ${lines}`);
  });

  it('no strikethrough, and every table row has as many cells as its header', () => {
    assert.deepEqual(markdownFiles().flatMap(renderingProblems), []);
  });

  it('every relative link points at a file and heading that exist', () => {
    const problems: string[] = [];
    for (const file of markdownFiles()) {
      for (const href of relativeLinks(file)) {
        const [path, anchor] = href.split('#') as [string, string | undefined];
        const target = path === '' ? file : join(dirname(file), path);
        if (!existsSync(join(REPO, target))) problems.push(`${file}: ${href}: no file ${target}`);
        else if (anchor !== undefined && target.endsWith('.md') && !anchors(target).has(anchor)) problems.push(`${file}: ${href}: no heading #${anchor} in ${target}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('every code block is one the test can run (sh, js, ts or python), and none runs the test suite or a bench', () => {
    const problems: string[] = [];
    for (const block of markdownFiles().flatMap(codeBlocks)) {
      if (!RUNNERS.includes(block.lang)) problems.push(`${block.file}:${block.line}: a ${block.lang || 'plain'} block cannot be run`);
      if (/\bnpm (test|run bench)\b/.test(block.text)) problems.push(`${block.file}:${block.line}: runs the tests or a bench (say it in prose)`);
    }
    assert.deepEqual(problems, []);
  });
});

const RUNNERS = ['sh', 'js', 'ts', 'python'];

/** Commands that keep running, and the line each prints once it is ready. */
const LONG_RUNNING: { pattern: RegExp; ready: string }[] = [
  { pattern: /(^|\s)npm start\b/, ready: ' ready in ' },
  { pattern: /^nats-server\b/, ready: 'Server is ready' },
  { pattern: /\bnpm run feed -- the-odds-api\b/, ready: 'poll 1 ' },
];

const PRELUDE = `set -eo pipefail
# curl fails on HTTP errors, unless the example prints the status itself (-w); a reader that
# stops early (head) or a stream's --max-time is a normal end
curl() {
  local rc=0
  case " $* " in *" -w "*) command curl "$@" || rc=$? ;; *) command curl --fail-with-body "$@" || rc=$? ;; esac
  if [ "$rc" = 23 ] || [ "$rc" = 28 ]; then rc=0; fi
  return $rc
}
wait_ready() {
  for _ in $(seq 1 1500); do
    if grep -q -- "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  echo "not ready after 300 s: $3" >&2; tail -c 3000 "$1" >&2; return 1
}
`;

/** `npm start`'s entry point (named in parts: test/run.ts runs a file naming it on both transports, and once is enough here). */
const START_ENTRY = join(REPO, 'service', ['main', 'ts'].join('.'));

/** bin/npm and bin/npx as the examples use them, on this checkout, from any folder. */
function writeShims(bin: string): void {
  mkdirSync(bin, { recursive: true });
  const npm = `#!/usr/bin/env bash
case "$1" in
  ci) echo "npm ci: not run by the docs test (it runs on this checkout's node_modules)"; exit 0 ;;
  start) shift; [ "$1" = "--" ] && shift; exec node --import tsx "${START_ENTRY}" "$@" ;;
  run)
    shift; [ "$1" = "-s" ] && shift
    name=$1; shift; [ "$1" = "--" ] && shift
    script=$(node -p "require('${REPO}/package.json').scripts['$name'] ?? ''")
    case "$script" in
      "tsx "*) exec node --import tsx "${REPO}/\${script#tsx }" "$@" ;;
      *) echo "npm shim: cannot run the script '$name' ($script)" >&2; exit 127 ;;
    esac ;;
  *) echo "npm shim: 'npm $1' is not something the docs test runs" >&2; exit 127 ;;
esac
`;
  const npx = `#!/usr/bin/env bash
[ "$1" = "tsx" ] || { echo "npx shim: only npx tsx" >&2; exit 127; }
shift; exec node --import tsx "$@"
`;
  writeFileSync(join(bin, 'npm'), npm);
  writeFileSync(join(bin, 'npx'), npx);
  chmodSync(join(bin, 'npm'), 0o755);
  chmodSync(join(bin, 'npx'), 0o755);
}

/** Each literal port of the page replaced by its free port. */
function mapPorts(text: string, ports: ReadonlyMap<number, number>): string {
  return text.replace(/\b(\d{4})\b/g, (whole, digits: string) => String(ports.get(Number(digits)) ?? whole));
}

/** The block as bash runs it: long-running commands in the background, each waited for. */
function shellScript(text: string, logDir: string, counter: { n: number }): string {
  const logical: string[] = [];
  for (const line of text.split('\n')) {
    const last = logical.length - 1;
    if (last >= 0 && logical[last]!.endsWith('\\')) logical[last] = `${logical[last]!.slice(0, -1)} ${line.trim()}`;
    else logical.push(line);
  }
  return logical
    .map((line) => {
      const command = line.replace(/\s+#.*$/, '');
      const long = LONG_RUNNING.find((l) => l.pattern.test(command.trim()));
      if (long === undefined || command.trim().startsWith('#')) return line;
      const log = join(logDir, `background-${++counter.n}.log`);
      return `${command} > '${log}' 2>&1 &\nwait_ready '${log}' '${long.ready}' '${command.trim().replace(/'/g, '')}'`;
    })
    .join('\n');
}

interface Ran {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }, groups: number[]): Promise<Ran> {
  return new Promise((resolve) => {
    // its own process group, so what it leaves running in the background is stopped with it
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    groups.push(child.pid!);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      output += `\n(killed after ${options.timeoutMs / 1000} s)`;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function stopGroups(groups: number[]): void {
  for (const pid of groups.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group has ended already
    }
  }
}

describe('every code block of README.md and docs/ runs', () => {
  let work: string;
  let bin: string;
  let stub: StubProvider;
  let env: NodeJS.ProcessEnv;
  /** The service README.md's quick start started: it serves every page after it. */
  const serviceGroups: number[] = [];
  const defaultPorts = new Map<number, number>();
  const counter = { n: 0 };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'odds-docs-'));
    symlinkSync(join(REPO, 'node_modules'), join(work, 'node_modules'));
    bin = join(work, '.bin');
    writeShims(bin);
    stub = new StubProvider();
    stub.remaining = 1_000_000;
    const events = providerEventsFrom(generateBoard({ seed: 42, size: 'small', now: NOW }), 'nba', 2, 'docs');
    events[0]!.commence_time = new Date(Date.now() + 86_400_000).toISOString();
    events[1]!.commence_time = new Date(Date.now() + 2 * 86_400_000).toISOString();
    stub.addSport('basketball_nba', events);
    await stub.start();
    defaultPorts.set(8080, await freePort());
    defaultPorts.set(8081, await freePort());
    env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? work,
      LANG: 'C.UTF-8',
      // README's quick start: `npm start` on the ports the examples are mapped to
      PORT: String(defaultPorts.get(8080)),
      INGEST_PORT: String(defaultPorts.get(8081)),
      // npm run feed's default ingest address, mapped as the ports are
      INGEST_URL: `http://127.0.0.1:${defaultPorts.get(8081)}`,
      BOARD: 'small',
      ...(process.env.TRANSPORT ? { TRANSPORT: process.env.TRANSPORT } : {}),
      ODDS_API_KEY: STUB_API_KEY,
      ODDS_API_BASE_URL: stub.url,
    };
  });

  after(async () => {
    stopGroups(serviceGroups);
    await stub?.close();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  async function runBlock(block: CodeBlock, ports: ReadonlyMap<number, number>, blockEnv: NodeJS.ProcessEnv, groups: number[]): Promise<string | null> {
    const text = mapPorts(block.text, ports).replaceAll("'./client/index.ts'", `'${join(REPO, 'client', 'index.ts')}'`);
    const name = `${block.file.replace(/\W/g, '-')}-${block.line}`;
    let ran: Ran;
    if (block.lang === 'sh') {
      ran = await run('bash', ['-c', PRELUDE + shellScript(text, work, counter)], { cwd: work, env: blockEnv, timeoutMs: 420_000 }, groups);
    } else if (block.lang === 'js') {
      writeFileSync(join(work, `${name}.mjs`), text);
      ran = await run('node', [`${name}.mjs`], { cwd: work, env: blockEnv, timeoutMs: 60_000 }, groups);
    } else if (block.lang === 'ts') {
      writeFileSync(join(work, `${name}.mts`), text);
      ran = await run('node', ['--import', 'tsx', `${name}.mts`], { cwd: work, env: blockEnv, timeoutMs: 60_000 }, groups);
    } else if (block.lang === 'python') {
      if (spawnSync('python3', ['-c', 'import requests']).status !== 0) return `${block.file}:${block.line}: python3 with requests is needed (apt-get install python3-requests)`;
      // a block whose first line is `# requires: a, b` runs only where those modules import (pandas, polars: not part of this checkout)
      const requires = /^# requires: (.+)$/m.exec(text.split('\n', 1)[0]!);
      if (requires !== null && spawnSync('python3', ['-c', `import ${requires[1]}`]).status !== 0) {
        process.stderr.write(`${block.file}:${block.line}: skipped, python3 lacks ${requires[1]}\n`);
        return null;
      }
      writeFileSync(join(work, `${name}.py`), text);
      ran = await run('python3', [`${name}.py`], { cwd: work, env: blockEnv, timeoutMs: 60_000 }, groups);
    } else {
      return `${block.file}:${block.line}: a ${block.lang} block cannot be run`;
    }
    return ran.code === 0 ? null : `${block.file}:${block.line} (${block.lang}) exited ${ran.code}:\n${text}\n--- output ---\n${ran.output.slice(-3000)}`;
  }

  for (const file of markdownFiles()) {
    it(file, async () => {
      const blocks = codeBlocks(file);
      // the replicas page starts its own fleet (NATS, a writer, two replicas) on ports of its own,
      // the archive page its own service (with ARCHIVE_DIR)
      const ownPorts = file === 'docs/replicas.md' || file === 'docs/archive.md';
      const ports = ownPorts ? new Map(await Promise.all([8080, 8081, 8090, 8091, 8100, 8101, 4222].map(async (p) => [p, await freePort()] as [number, number]))) : defaultPorts;
      const blockEnv = ownPorts ? { ...env, NATS_URL: `nats://127.0.0.1:${ports.get(4222)}` } : env;
      // what README.md starts serves every later page; what a docs page starts ends with it
      const groups = file === 'README.md' ? serviceGroups : [];
      try {
        for (const block of blocks) {
          const failure = await runBlock(block, ports, blockEnv, groups);
          assert.equal(failure, null, failure ?? '');
        }
      } finally {
        if (groups !== serviceGroups) stopGroups(groups);
      }
    });
  }
});
