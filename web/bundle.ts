// The web pages' bytes, built in memory by the running service: esbuild bundles the
// TypeScript page sources under web/src (with uPlot and its CSS from node_modules; the
// stream reference page renders the AsyncAPI document with its own code), the
// Redoc standalone bundle is read from node_modules, and each page's HTML names its
// assets by content hash. Nothing is written to disk and nothing is fetched from the
// network, so a clone needs no build step and cannot serve a stale bundle.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface WebAsset {
  bytes: Buffer;
  contentType: string;
  /** Strong: a hash of the bytes. */
  etag: string;
}

export interface WebBundle {
  /** Page path ('/', '/docs', '/docs/stream') -> HTML. */
  pages: ReadonlyMap<string, WebAsset>;
  /** The site icon (SVG), linked from every page and also served at /favicon.ico for clients that ask there. */
  favicon: WebAsset;
  /** File name under /assets/ -> asset; names carry a content hash, so they never change meaning. */
  assets: ReadonlyMap<string, WebAsset>;
}

export const ASSET_PREFIX = '/assets/';
const SOURCE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'src');
const HTML = 'text/html; charset=utf-8';
const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };

/**
 * Browser-enforced: scripts, styles, images and requests only from this service, so a
 * page can neither load anything from the internet nor send the API key elsewhere.
 * Redoc injects its styles as <style> elements (unsafe-inline for styles only) and runs
 * its search index in a worker made from a blob: URL.
 */
const CSP_BOARD = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'";
const CSP_DOCS = `${CSP_BOARD}; worker-src 'self' blob:`;

function asset(bytes: Buffer, contentType: string): WebAsset {
  return { bytes, contentType, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` };
}

function hashedName(stem: string, ext: string, bytes: Buffer): string {
  return `${stem}-${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}.${ext}`;
}

/**
 * The Redoc standalone bundle as shipped, except that its sidebar credit shows no logo:
 * the bundle loads that image from Redoc's CDN, which the page must not contact.
 */
function redocStandalone(): Buffer {
  const require = createRequire(import.meta.url);
  const path = join(dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js');
  const text = readFileSync(path, 'utf8');
  const logo = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';
  if (!text.includes(logo)) throw new Error(`${path}: the Redoc logo URL moved; check what the bundle loads from the network`);
  return Buffer.from(text.replace(logo, '"data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E"'));
}

function page(title: string, csp: string, icon: string, styles: string[], scripts: string[], body: string): WebAsset {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>${title}</title>
<link rel="icon" type="image/svg+xml" href="${ASSET_PREFIX}${icon}">
${styles.map((name) => `<link rel="stylesheet" href="${ASSET_PREFIX}${name}">`).join('\n')}
</head>
<body>
${body}
${scripts.map((name) => `<script src="${ASSET_PREFIX}${name}"></script>`).join('\n')}
</body>
</html>
`;
  return asset(Buffer.from(html), HTML);
}

export async function buildWebBundle(): Promise<WebBundle> {
  const result = await build({
    entryPoints: { board: join(SOURCE_DIR, 'board', 'main.ts'), docs: join(SOURCE_DIR, 'docs', 'main.ts'), asyncapi: join(SOURCE_DIR, 'docs', 'asyncapi.ts') },
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2022',
    platform: 'browser',
    write: false,
    outdir: '/assets',
    entryNames: '[name]',
    logLevel: 'silent',
  });
  const assets = new Map<string, WebAsset>();
  const named = new Map<string, string>(); // 'board.js' -> 'board-<hash>.js'
  for (const file of result.outputFiles) {
    const plain = basename(file.path);
    const dot = plain.lastIndexOf('.');
    const bytes = Buffer.from(file.contents);
    const name = hashedName(plain.slice(0, dot), plain.slice(dot + 1), bytes);
    assets.set(name, asset(bytes, TYPES[plain.slice(dot + 1)] ?? 'application/octet-stream'));
    named.set(plain, name);
  }
  const redoc = redocStandalone();
  const redocName = hashedName('redoc.standalone', 'js', redoc);
  assets.set(redocName, asset(redoc, TYPES.js!));
  const need = (plain: string): string => {
    const name = named.get(plain);
    if (name === undefined) throw new Error(`the web bundle has no ${plain}`);
    return name;
  };

  const iconBytes = readFileSync(join(SOURCE_DIR, 'favicon.svg'));
  const favicon = asset(iconBytes, 'image/svg+xml');
  const icon = hashedName('favicon', 'svg', iconBytes);
  assets.set(icon, favicon);

  const pages = new Map<string, WebAsset>();
  pages.set('/', page('Odds board', CSP_BOARD, icon, [need('board.css')], [need('board.js')], '<div id="app"></div>'));
  pages.set('/docs', page('API reference', CSP_DOCS, icon, [need('docs.css')], [redocName, need('docs.js')], '<div id="redoc"></div>'));
  pages.set('/docs/stream', page('Push stream reference', CSP_BOARD, icon, [need('asyncapi.css')], [need('asyncapi.js')], '<div id="asyncapi"></div>'));
  return { pages, assets, favicon };
}
