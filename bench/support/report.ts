import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';

const RESULTS_DIR = resolve(__dirname, '..', 'results');

/** Prints rows as an aligned text table. */
export function printTable(title: string, rows: ReadonlyArray<Record<string, string | number>>): void {
  console.log(`\n${title}`);
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const cell = (value: string | number) => (typeof value === 'number' ? formatNumber(value) : value);
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => cell(row[column] ?? '').length)));
  const line = (values: string[]) => values.map((value, i) => value.padEnd(widths[i]!)).join('  ');
  console.log(line(columns));
  console.log(line(widths.map((width) => '-'.repeat(width))));
  for (const row of rows) console.log(line(columns.map((column) => cell(row[column] ?? ''))));
}

/** Writes bench/results/<name>.json: the figures, the machine and when. */
export function writeResults(name: string, results: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = resolve(RESULTS_DIR, `${name}.json`);
  const machine = {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpus: cpus().length,
  };
  writeFileSync(file, `${JSON.stringify({ name, at: new Date().toISOString(), machine, results }, null, 2)}\n`);
  return file;
}

/** {@link writeResults}, then says where; a quick run writes nothing and says so. */
export function writeResultsUnlessQuick(name: string, quick: boolean, results: unknown): void {
  if (quick) process.stdout.write('quick mode: results not written\n');
  else process.stdout.write(`wrote ${writeResults(name, results)}\n`);
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(3);
}

/** A series as a table shows it: its median and spread. */
export type Stat = { median: number; min: number; max: number };

/** `value` to `digits` decimals; `n/a` when it is not a finite number. */
export const fixed = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** `median (min-max)`. */
export const range = (s: Stat, digits = 2): string =>
  `${fixed(s.median, digits)} (${fixed(s.min, digits)}-${fixed(s.max, digits)})`;
