// The import graph of the repository's own TypeScript, read from the files as text (every
// relative `import … from`, `export … from`, `import '…'` and `import('…')`, type-only
// ones included): no cycles, and the layers point downward only, as docs/architecture.md
// lays them out (the engine knows nothing of HTTP, persistence knows neither, feeds do not
// reach into the service, nothing but the tests imports from test/).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const SOURCE_FOLDERS = ['alerts', 'bench', 'client', 'engine', 'feeds', 'fixtures', 'http', 'ingest', 'mcp', 'persistence', 'service', 'test', 'web'];
// A static import or re-export starts a line (so a script held in a string, indented, is not
// read as one); a dynamic import may stand anywhere.
const SPECIFIER = new RegExp(
  [
    String.raw`^(?:import|export)(?:\s+type)?\s*(?:\{[^}]*\}|\*\s+as\s+\w+|\w+(?:\s*,\s*\{[^}]*\})?|\*)\s*from\s*(['"])(\.{1,2}\/[^'"]+)\1`,
    String.raw`^import\s*(['"])(\.{1,2}\/[^'"]+)\3`,
    String.raw`\bimport\(\s*(['"])(\.{1,2}\/[^'"]+)\5`,
  ].join('|'),
  'gm',
);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (/\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Each file's relative imports, as repository paths ('engine/model.ts'). */
export function importGraph(files: readonly string[], read: (file: string) => string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = read(file).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const targets = new Set<string>();
    for (const match of text.matchAll(SPECIFIER)) targets.add(normalize(join(dirname(file), (match[2] ?? match[4] ?? match[6])!)));
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The strongly connected components with more than one file, or a file importing itself (Tarjan). */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** [importing folder, imported folder] pairs that point up or sideways. */
const FORBIDDEN: readonly (readonly [string, string])[] = [
  ...['http/', 'ingest/', 'persistence/', 'feeds/', 'service/', 'alerts/', 'mcp/', 'fixtures/', 'bench/', 'test/'].map((to) => ['engine/', to] as const),
  ...['http/', 'ingest/', 'feeds/', 'service/', 'alerts/', 'mcp/', 'bench/', 'test/'].map((to) => ['persistence/', to] as const),
  ...['service/', 'bench/', 'test/'].map((to) => ['feeds/', to] as const),
  ...['service/', 'bench/', 'test/'].map((to) => ['http/', to] as const),
  ...['service/', 'bench/', 'test/'].map((to) => ['ingest/', to] as const),
  ...['alerts', 'bench', 'client', 'engine', 'feeds', 'fixtures', 'http', 'ingest', 'mcp', 'persistence', 'service', 'web'].map((from) => [`${from}/`, 'test/'] as const),
];

function upwardImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      for (const [from, to] of FORBIDDEN) if (file.startsWith(from) && target.startsWith(to)) wrong.push(`${file} -> ${target}`);
    }
  }
  return wrong;
}

describe('the import graph', () => {
  const files = SOURCE_FOLDERS.flatMap((folder) => sourceFiles(folder));
  const graph = importGraph(files, (file) => readFileSync(join(ROOT, file), 'utf8'));

  it('reads the imports of every source file, and each resolves to a file of the repository', () => {
    assert.ok(files.length > 300, `only ${files.length} files found under ${relative(process.cwd(), ROOT) || '.'}`);
    const known = new Set(files);
    const dangling = [...graph].flatMap(([file, targets]) => targets.filter((t) => !known.has(t) && /\.(ts|tsx|mts)$/.test(t)).map((t) => `${file} -> ${t}`));
    assert.deepEqual(dangling, []);
    assert.ok(graph.get('service/app.ts')!.includes('service/servedBoard.ts'), 'the walker sees app.ts import servedBoard.ts');
  });

  it('has no cycles', () => {
    assert.deepEqual(cycles(graph), []);
  });

  it('points downward only', () => {
    assert.deepEqual(upwardImports(graph), []);
  });

  it('finds a cycle and an upward import when there is one', () => {
    // the check itself, on a made-up graph: a -> b -> c -> a, d alone, e imports itself
    const made = new Map<string, string[]>([
      ['engine/a.ts', ['engine/b.ts']],
      ['engine/b.ts', ['engine/c.ts', 'engine/d.ts']],
      ['engine/c.ts', ['engine/a.ts', 'http/x.ts']],
      ['engine/d.ts', []],
      ['engine/e.ts', ['engine/e.ts']],
    ]);
    assert.deepEqual(cycles(made), [['engine/a.ts', 'engine/b.ts', 'engine/c.ts'], ['engine/e.ts']]);
    assert.deepEqual(upwardImports(made), ['engine/c.ts -> http/x.ts']);
    const sample = ["import type { A } from '../service/a.ts';", "// import { B } from './b.ts';", "export {\n  C,\n} from './c.ts';", "const d = await \u0069mport('../engine/d.ts');", "import './e.ts';", "  const script = `\u0069mport { F } from './f.ts'`;"];
    const parsed = importGraph(['feeds/f.ts'], () => sample.join('\n'));
    assert.deepEqual(parsed.get('feeds/f.ts'), ['engine/d.ts', 'feeds/c.ts', 'feeds/e.ts', 'service/a.ts']);
  });
});
