/**
 * A reader for the Prometheus text exposition format (version 0.0.4), enough to take counters and
 * gauges out of the servers' `/metrics`: samples with labels (escapes `\\`, `\"`, `\n`), special
 * values (`NaN`, `+Inf`, `-Inf`, in any case), optional timestamps, comments skipped. A malformed
 * line is an error naming the line, since a silently dropped sample would falsify the offload.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export type LabelMatch = Readonly<Record<string, string>>;

export class PrometheusFormatError extends Error {
  override name = 'PrometheusFormatError';
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** Prometheus reads these case-insensitively (Go's ParseFloat), and prom-client writes "Nan". */
function parseValue(text: string, line: number): number {
  switch (text.toLowerCase()) {
    case 'nan':
      return Number.NaN;
    case '+inf':
    case 'inf':
      return Number.POSITIVE_INFINITY;
    case '-inf':
      return Number.NEGATIVE_INFINITY;
  }
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new PrometheusFormatError(`line ${line}: "${text}" is not a sample value`);
  return value;
}

/** Reads `{a="x",b="y"}` starting at `start` (the `{`); returns the labels and the index after `}`. */
function parseLabels(text: string, start: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  const fail = (what: string): never => {
    throw new PrometheusFormatError(`line ${line}: ${what} at column ${i + 1}`);
  };
  for (;;) {
    while (text[i] === ' ') i++;
    if (text[i] === '}') return { labels, end: i + 1 };
    const name = LABEL_NAME.exec(text.slice(i))?.[0] ?? fail('expected a label name');
    i += name.length;
    while (text[i] === ' ') i++;
    if (text[i] !== '=') fail('expected "="');
    i++;
    while (text[i] === ' ') i++;
    if (text[i] !== '"') fail('expected a quoted label value');
    i++;
    let value = '';
    for (;;) {
      const ch = text[i] ?? fail('unterminated label value');
      if (ch === '"') break;
      if (ch === '\\') {
        const escaped = text[i + 1];
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else fail('unknown escape');
        i += 2;
      } else {
        value += ch;
        i++;
      }
    }
    i++;
    labels[name] = value;
    while (text[i] === ' ') i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') fail('expected "," or "}"');
  }
}

export function parsePrometheusText(text: string): PrometheusSamples {
  const samples: Sample[] = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n] ?? '';
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (name === undefined) throw new PrometheusFormatError(`line ${n + 1}: expected a metric name`);
    let rest = name.length;
    let labels: Record<string, string> = {};
    if (line[rest] === '{') ({ labels, end: rest } = parseLabels(line, rest, n + 1));
    const fields = line.slice(rest).trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2) throw new PrometheusFormatError(`line ${n + 1}: expected a value and an optional timestamp`);
    samples.push({ name, labels, value: parseValue(fields[0] ?? '', n + 1) });
  }
  return new PrometheusSamples(samples);
}

export class PrometheusSamples {
  readonly #samples: readonly Sample[];

  constructor(samples: readonly Sample[]) {
    this.#samples = samples;
  }

  get all(): readonly Sample[] {
    return this.#samples;
  }

  /** Samples of one name whose labels include every pair in `match`. */
  select(name: string, match: LabelMatch = {}): Sample[] {
    const pairs = Object.entries(match);
    return this.#samples.filter((s) => s.name === name && pairs.every(([k, v]) => s.labels[k] === v));
  }

  /** The sum over `select(name, match)`; 0 when nothing matches, as for a counter never incremented. */
  sum(name: string, match: LabelMatch = {}): number {
    return this.select(name, match).reduce((total, s) => total + s.value, 0);
  }

  /** The one sample that matches, or undefined. More than one is an error: the caller's labels are too loose. */
  value(name: string, match: LabelMatch = {}): number | undefined {
    const found = this.select(name, match);
    if (found.length > 1) throw new PrometheusFormatError(`${name} ${JSON.stringify(match)} matches ${found.length} samples`);
    return found[0]?.value;
  }
}
