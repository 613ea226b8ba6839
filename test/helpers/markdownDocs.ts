// The repository's Markdown (README.md and docs/*.md) as GitHub shows it: lexed with
// marked's GitHub Flavored Markdown rules (tables, strikethrough with one or two
// tildes, fenced code), for the tests that render the front door and run its examples.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { marked } from 'marked';

export const REPO = join(import.meta.dirname, '..', '..');

/** README.md first, then docs/*.md by name: the order a reader meets them. */
export function markdownFiles(): string[] {
  const docs = readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join('docs', name));
  return ['README.md', ...docs];
}

export function lex(file: string): marked.TokensList {
  return marked.lexer(readFileSync(join(REPO, file), 'utf8'), { gfm: true });
}

export interface CodeBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word ('' for none; 'indented' for an indented block). */
  lang: string;
  text: string;
}

/** Every code block, fenced or indented, with the line it starts on. */
export function codeBlocks(file: string): CodeBlock[] {
  const source = readFileSync(join(REPO, file), 'utf8');
  const blocks: CodeBlock[] = [];
  let offset = 0;
  for (const token of lex(file)) {
    const at = source.indexOf(token.raw, offset);
    if (at >= 0) offset = at + token.raw.length;
    if (token.type !== 'code') continue;
    const line = source.slice(0, Math.max(0, at)).split('\n').length;
    const lang = token.codeBlockStyle === 'indented' ? 'indented' : (token.lang ?? '').split(/\s+/)[0]!;
    blocks.push({ file, line, lang, text: token.text });
  }
  return blocks;
}

/** Cells of one raw table line, as GFM splits them: leading and trailing pipes dropped, `\|` not a separator. */
export function tableCells(line: string): number {
  let text = line.trim();
  if (text.startsWith('|')) text = text.slice(1);
  if (text.endsWith('|') && !text.endsWith('\\|')) text = text.slice(0, -1);
  let cells = 1;
  let inCode = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '`') inCode = !inCode;
    else if (c === '|') cells++;
  }
  return cells;
}

/** What GitHub would show wrongly: strikethrough, and table lines whose cells do not match the header. */
export function renderingProblems(file: string): string[] {
  const problems: string[] = [];
  const walk = (tokens: marked.Token[]) => {
    marked.walkTokens(tokens, (token) => {
      if (token.type === 'del') problems.push(`${file}: strikethrough: ${JSON.stringify(token.raw.slice(0, 80))}`);
      if (token.type === 'table') {
        const lines = token.raw.trimEnd().split('\n');
        const header = tableCells(lines[0]!);
        for (const line of lines.slice(2)) {
          const cells = line.includes('|') ? tableCells(line) : 1;
          if (cells !== header) problems.push(`${file}: a table row has ${cells} cells, its header ${header}: ${JSON.stringify(line.slice(0, 80))}`);
        }
      }
    });
  };
  walk(lex(file));
  return problems;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/[`*_[\]]/g, '')
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

export function anchors(file: string): Set<string> {
  const found = new Set<string>();
  marked.walkTokens(lex(file), (token) => {
    if (token.type === 'heading') found.add(slug(token.text));
  });
  return found;
}

/** Relative links and images (a file, a file#anchor or #anchor), each as written. */
export function relativeLinks(file: string): string[] {
  const links: string[] = [];
  marked.walkTokens(lex(file), (token) => {
    if ((token.type === 'link' || token.type === 'image') && !/^[a-z]+:/i.test(token.href)) links.push(token.href);
  });
  return links;
}
