// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests:
// every line is a # HELP, a # TYPE or a sample `name{label="value",...} number`; a
// sample's family must have been declared by # TYPE before it; anything else throws.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of the sample with this name and exactly these labels, or undefined. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;
const SUFFIXES = ['_bucket', '_sum', '_count', ''];

export function parsePrometheus(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) continue;
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      if (!NAME.test(name ?? '') || !['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type ?? '')) throw new Error(`bad TYPE line: ${line}`);
      types.set(name!, type!);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (match[3] !== undefined && match[3] !== '') {
      LABEL.lastIndex = 0;
      let consumed = 0;
      for (let m = LABEL.exec(match[3]); m !== null; m = LABEL.exec(match[3])) {
        labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
        consumed = LABEL.lastIndex;
        if (m[3] === '') break;
      }
      if (consumed !== match[3].length) throw new Error(`bad labels: ${line}`);
    }
    // float text as Prometheus reads it (Go's ParseFloat): NaN and Inf in any case
    const word = match[4]!.toLowerCase();
    const value = word === '+inf' || word === 'inf' ? Infinity : word === '-inf' ? -Infinity : word === 'nan' ? NaN : Number(match[4]);
    if (Number.isNaN(value) && word !== 'nan') throw new Error(`bad value: ${line}`);
    const name = match[1]!;
    if (!SUFFIXES.some((suffix) => name.endsWith(suffix) && types.has(name.slice(0, name.length - suffix.length)))) throw new Error(`sample without a TYPE: ${line}`);
    samples.push({ name, labels, value });
  }
  return {
    types,
    samples,
    value(name, labels = {}) {
      const wanted = JSON.stringify(Object.entries(labels).sort());
      return samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted)?.value;
    },
  };
}
