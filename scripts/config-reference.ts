// The configuration reference, docs/configuration-reference.md, drawn from the config schema
// itself (src/config/config.schema.ts): every key, its type and bounds, its default, whether it
// is required. A test (test/docs/configuration-reference.spec.ts) fails when the file is stale.
//
//   npm run config-reference            writes the file
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { configSchema } from '../src/config/config.schema';

export const REFERENCE_FILE = join(__dirname, '../docs/configuration-reference.md');

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  required?: string[];
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  format?: string;
};

interface Row {
  key: string;
  type: string;
  default: string;
  required: boolean;
  /** Only in some variants of a union: `kind` \`"http"\`. */
  when?: string;
}

const input = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Schema;
const output = z.toJSONSchema(configSchema, { io: 'output', unrepresentable: 'any' }) as Schema;

/** The same place in the output schema, where zod puts the defaults it fills in. */
function outputAt(schema: Schema | undefined, step: string): Schema | undefined {
  if (!schema) return undefined;
  if (step === '<name>')
    return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  if (step === '[]') return schema.items;
  return schema.properties?.[step];
}

function describeType(schema: Schema): string {
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants) return [...new Set(variants.map(describeType))].join(' or ');
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum) return schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(', ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'any');
  const bounds: string[] = [];
  if (schema.minimum !== undefined || schema.maximum !== undefined) {
    bounds.push(`${schema.minimum ?? '…'}–${schema.maximum ?? '…'}`);
  }
  if (schema.minLength === 1) bounds.push('not empty');
  else if (schema.minLength !== undefined && schema.minLength > 1)
    bounds.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) bounds.push(`at most ${schema.maxLength} characters`);
  if (schema.minItems !== undefined && schema.minItems > 0) bounds.push(`at least ${schema.minItems}`);
  if (schema.pattern !== undefined) bounds.push(`\`${schema.pattern}\``);
  const name = type === 'array' ? `list of ${schema.items ? describeType(schema.items) : 'any'}` : type;
  return bounds.length > 0 ? `${name} (${bounds.join(', ')})` : name;
}

function isObject(schema: Schema): boolean {
  return (
    schema.type === 'object' && (schema.properties !== undefined || typeof schema.additionalProperties === 'object')
  );
}

function walk(schema: Schema, out: Schema | undefined, path: string[], required: boolean, rows: Row[]): void {
  const variants = schema.oneOf ?? schema.anyOf;
  if (variants && variants.every(isObject)) {
    const outVariants = out?.oneOf ?? out?.anyOf ?? [];
    rows.push(...mergeVariants(variants, outVariants, path, required));
    return;
  }
  const key = path.join('.').replace(/\.\[\]/g, '[]');
  if (schema.properties) {
    if (path.length > 0) rows.push({ key, type: 'mapping', default: defaultOf(out), required });
    for (const [name, child] of Object.entries(schema.properties)) {
      walk(child, outputAt(out, name), [...path, name], schema.required?.includes(name) ?? false, rows);
    }
    return;
  }
  if (schema.type === 'object' && typeof schema.additionalProperties === 'object') {
    const names = schema.propertyNames?.pattern ? ` (names \`${schema.propertyNames.pattern}\`)` : '';
    rows.push({ key, type: `mapping by name${names}`, default: defaultOf(out), required });
    walk(schema.additionalProperties, outputAt(out, '<name>'), [...path, '<name>'], false, rows);
    return;
  }
  if (schema.type === 'array' && schema.items && isObject(schema.items)) {
    rows.push({ key, type: 'list', default: defaultOf(out), required });
    walk(schema.items, outputAt(out, '[]'), [...path, '[]'], false, rows);
    return;
  }
  rows.push({ key, type: describeType(schema), default: defaultOf(out ?? schema), required });
}

/**
 * A union of mappings (`store`, a tool by `kind`): each key once where every variant has it
 * alike, else once per group of variants that have it alike, saying which (by the variants'
 * discriminating key, the one each gives a constant).
 */
function mergeVariants(variants: Schema[], outVariants: Schema[], path: string[], required: boolean): Row[] {
  const discriminator = Object.keys(variants[0].properties ?? {}).find((name) =>
    variants.every((variant) => variant.properties?.[name]?.const !== undefined),
  );
  const labels = variants.map((variant) =>
    discriminator ? `\`${JSON.stringify(variant.properties![discriminator].const)}\`` : '',
  );
  const perVariant = variants.map((variant, index) => {
    const rows: Row[] = [];
    walk(variant, outVariants[index], path, required, rows);
    return new Map(rows.map((row) => [row.key, row]));
  });
  const keys = [...new Set(perVariant.flatMap((rows) => [...rows.keys()]))];
  const merged: Row[] = [];
  for (const key of keys) {
    if (discriminator && key === [...path, discriminator].join('.')) {
      merged.push({ key, type: labels.join(', '), default: '', required: true });
      continue;
    }
    const groups = new Map<string, { row: Row; labels: string[] }>();
    perVariant.forEach((rows, index) => {
      const row = rows.get(key);
      if (!row) return;
      const same = JSON.stringify([row.type, row.default, row.required]);
      const group = groups.get(same) ?? { row, labels: [] };
      group.labels.push(labels[index]);
      groups.set(same, group);
    });
    for (const { row, labels: some } of groups.values()) {
      const everywhere = some.length === variants.length;
      merged.push(everywhere || !discriminator ? row : { ...row, when: `${discriminator} ${some.join(', ')}` });
    }
  }
  return merged;
}

function defaultOf(schema: Schema | undefined): string {
  if (schema?.default === undefined) return '';
  const text = JSON.stringify(schema.default);
  return text === '{}' || text.length > 60 ? '' : `\`${text}\``;
}

/** The whole reference, as the file holds it. */
export function configReference(): string {
  const rows: Row[] = [];
  walk(input, output, [], true, rows);
  const escape = (text: string) => text.replace(/\|/g, '\\|');
  const lines = [
    '# Configuration reference',
    '',
    'Every key of the config file (and of `BulkheadModule.forRoot`), drawn from the schema the',
    'service validates it with (`src/config/config.schema.ts`; `npm run config-reference` writes',
    'this file, and a test fails when it is stale). What each key does: [Configuration](configuration.md)',
    'and the comments of `config/full.example.yaml`. Durations are milliseconds, money is USD;',
    '`<name>` stands for a name you choose, `[]` for each entry of a list.',
    '',
    '| key | type | default | required | only with |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| \`${escape(row.key)}\` | ${escape(row.type)} | ${escape(row.default)} | ${row.required ? 'yes' : ''} | ${escape(row.when ?? '')} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

if (require.main === module) {
  writeFileSync(REFERENCE_FILE, configReference());
  process.stdout.write(`wrote ${REFERENCE_FILE}\n`);
}
