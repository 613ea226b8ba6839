// The files of a directory whose names carry a number (log segments, checkpoints),
// found by one pattern whose first group is the number. A directory that does not
// exist yet holds none: a fresh DATA_DIR is not an error.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface NumberedFile {
  path: string;
  name: string;
  number: number;
}

/** Every file of `dir` matching `pattern`, in ascending number order. */
export function numberedFiles(dir: string, pattern: RegExp): NumberedFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const out: NumberedFile[] = [];
  for (const name of names) {
    const match = pattern.exec(name);
    if (match !== null) out.push({ path: join(dir, name), name, number: Number(match[1]) });
  }
  return out.sort((a, b) => a.number - b.number);
}
