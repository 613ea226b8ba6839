// Finds a native uWebSockets.js binary for this platform, CPU, Node ABI and glibc, and
// loads the `.node` file itself. The packages' own entry points are never used: one of
// them silently switches to a JavaScript fallback that crashes on the first request
// with a query string, the other throws a generic message.
//
// Looked for in this order:
//   1. `uWebSockets.js`: an official build the user installed from its GitHub release
//      (package.json no longer claims that name, so it is free for them);
//   2. `uws-btc-vision` = @btc-vision/uwebsockets.js 20.57.0, binaries for Node 20, 22,
//      24 and 25, linked against glibc 2.38;
//   3. `uws-trufflesuite` = @trufflesuite/uws-js-unofficial 20.30.0, binaries for Node
//      16, 18 and 20, old glibc.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as UwsModule from 'uws-btc-vision';

export type Uws = typeof UwsModule;

interface Candidate {
  /** The name it is installed under in node_modules. */
  installedAs: string;
  /** The upstream name, for messages. */
  label: string;
  /** Oldest glibc the binaries link against, when known ([major, minor]). */
  minGlibc?: readonly [number, number];
}

const CANDIDATES: readonly Candidate[] = [
  { installedAs: 'uWebSockets.js', label: 'uWebSockets.js (official build)' },
  { installedAs: 'uws-btc-vision', label: '@btc-vision/uwebsockets.js', minGlibc: [2, 38] },
  { installedAs: 'uws-trufflesuite', label: '@trufflesuite/uws-js-unofficial' },
];

export interface UwsLoaded {
  ok: true;
  uws: Uws;
  /** 'uWebSockets.js 20.57 native' */
  description: string;
  /** The package it came from and the binary file. */
  source: string;
  /** Major.minor of the build, e.g. [20, 57]. */
  version: readonly [number, number];
}

export interface UwsMissing {
  ok: false;
  /** One line for the ready line: 'no uWebSockets.js binary for Node 24 / glibc 2.36'. */
  summary: string;
  /** Why each candidate was passed over. */
  attempts: readonly string[];
}

export type UwsLoad = UwsLoaded | UwsMissing;

let loaded: UwsLoad | undefined;

/** Loads once per process (a native module cannot be unloaded; later calls get the same answer). */
export function loadUws(): UwsLoad {
  loaded ??= findUws();
  return loaded;
}

/** glibc version of the running process, or null (not Linux, or musl). */
export function runtimeGlibc(): string | null {
  if (process.platform !== 'linux') return null;
  const report = process.report as unknown as { excludeNetwork: boolean; getReport(): { header: { glibcVersionRuntime?: string } } };
  report.excludeNetwork = true;
  return report.getReport().header.glibcVersionRuntime ?? null;
}

function findUws(): UwsLoad {
  const require = createRequire(import.meta.url);
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const glibc = runtimeGlibc();
  const nodeMajor = process.versions.node.split('.')[0]!;
  const attempts: string[] = [];
  for (const candidate of CANDIDATES) {
    const dir = packageDir(require, candidate.installedAs);
    if (dir === null) {
      attempts.push(`${candidate.label}: not installed (as ${candidate.installedAs})`);
      continue;
    }
    const version = versionOf(join(dir, 'package.json'));
    const label = `${candidate.label} ${version}`;
    const file = [join(dir, binary), join(dir, 'binaries', binary)].find((path) => existsSync(path));
    if (file === undefined) {
      attempts.push(`${label}: no ${binary} (Node ${nodeMajor}, ABI ${process.versions.modules})`);
      continue;
    }
    if (process.platform === 'linux' && glibc === null) {
      attempts.push(`${label}: the binaries need glibc, this Linux has none (musl?)`);
      continue;
    }
    if (candidate.minGlibc !== undefined && glibc !== null && olderThan(glibc, candidate.minGlibc)) {
      attempts.push(`${label}: needs glibc >= ${candidate.minGlibc.join('.')}, this machine has ${glibc}`);
      continue;
    }
    let uws: Uws;
    try {
      uws = require(file) as Uws;
    } catch (error) {
      attempts.push(`${label}: ${file} did not load: ${firstLine(error)}`);
      continue;
    }
    if (typeof uws.App !== 'function') {
      attempts.push(`${label}: ${file} has no App()`);
      continue;
    }
    const [major, minor] = version.split('.').map((part) => Number.parseInt(part, 10));
    return {
      ok: true,
      uws,
      description: `uWebSockets.js ${major}.${minor} native`,
      source: `${label} (${file})`,
      version: [major ?? 0, minor ?? 0],
    };
  }
  const where = glibc === null ? `${process.platform}-${process.arch}` : `glibc ${glibc}`;
  return { ok: false, summary: `no uWebSockets.js binary for Node ${nodeMajor} / ${where}`, attempts };
}

/**
 * The package's folder in the node_modules the resolver would search. Not
 * require.resolve('<name>/package.json'): a package whose `exports` does not list
 * ./package.json (@btc-vision/uwebsockets.js) makes that throw although it is installed.
 */
function packageDir(require: NodeJS.Require, name: string): string | null {
  for (const folder of require.resolve.paths(name) ?? []) {
    const dir = join(folder, name);
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  return null;
}

function versionOf(packageJson: string): string {
  try {
    const version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : '?';
  } catch {
    return '?';
  }
}

function olderThan(version: string, min: readonly [number, number]): boolean {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  return major < min[0] || (major === min[0] && minor < min[1]);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
