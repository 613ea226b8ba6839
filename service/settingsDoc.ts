// The settings table of docs/operations.md, written from service/config.ts's SETTINGS (the
// one table readConfig and `npm start -- --help` read), so the documentation cannot
// drift from what the process accepts: `npm run docs:settings` rewrites the table between
// its two markers, and test/service/settings-doc.test.ts fails when the file differs.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SETTINGS } from './config.ts';

export const OPERATIONS_DOC = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'operations.md');
export const TABLE_START = '<!-- settings table: written by `npm run docs:settings` from service/config.ts; do not edit by hand -->';
export const TABLE_END = '<!-- end of settings table -->';

/** Text for a GFM table cell: pipes escaped, and tildes too (GitHub takes a pair of single tildes for strikethrough). */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/~/g, '\\~');
}

/** The table: every setting in SETTINGS order, with its default, what it allows and what it does. */
export function settingsTable(): string {
  const rows = SETTINGS.map((s) => {
    const fallback = s.fallback === '' ? '(unset)' : `\`${s.fallback}\``;
    return `| \`${s.name}\` | ${cell(fallback)} | ${cell(s.allowed)} | ${cell(s.help)}${s.secret === true ? ' (a secret: never logged)' : ''} |`;
  });
  return ['| variable | default | allowed | what it does |', '|---|---|---|---|', ...rows].join('\n');
}

/** The document with its table replaced by the current one. */
export function withCurrentTable(doc: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${OPERATIONS_DOC}: the settings table markers are missing`);
  return `${doc.slice(0, start + TABLE_START.length)}\n\n${settingsTable()}\n\n${doc.slice(end)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const doc = readFileSync(OPERATIONS_DOC, 'utf8');
  const next = withCurrentTable(doc);
  if (next !== doc) writeFileSync(OPERATIONS_DOC, next);
  process.stdout.write(next === doc ? `${OPERATIONS_DOC}: the settings table is current\n` : `${OPERATIONS_DOC}: settings table rewritten\n`);
}
