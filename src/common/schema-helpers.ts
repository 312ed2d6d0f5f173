import { z } from 'zod';

/** A numeric string from `${ENV}` substitution counts as a number. */
function numericString(value: unknown): unknown {
  return typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
}

function booleanString(value: unknown): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

/** An integer from `min` to `max` inclusive, with one message for every way it can be wrong. */
export function intIn(min: number, max: number) {
  const message = `must be an integer from ${min} to ${max}`;
  return z.preprocess(
    numericString,
    z.number({ error: message }).int({ error: message }).min(min, { error: message }).max(max, { error: message }),
  );
}

/** A finite number from `min` to `max` inclusive. */
export function numberIn(min: number, max: number) {
  const message = `must be a number from ${min} to ${max}`;
  return z.preprocess(
    numericString,
    z.number({ error: message }).min(min, { error: message }).max(max, { error: message }),
  );
}

export function bool() {
  return z.preprocess(booleanString, z.boolean({ error: 'must be true or false' }));
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

/** Names of lanes, tools, tenants, models: they become metric labels and URL segments. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const name = () =>
  z.string({ error: 'must be a string' }).regex(NAME_PATTERN, {
    error: 'must be 1-64 letters, digits, "_", "-" or ".", starting with a letter or digit',
  });

export function nonEmptyString() {
  return z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' });
}

/** An absolute http or https URL. */
export function httpUrl() {
  return z.string({ error: 'must be a string' }).refine(
    (value) => {
      try {
        const { protocol } = new URL(value);
        return protocol === 'http:' || protocol === 'https:';
      } catch {
        return false;
      }
    },
    { error: 'must be an absolute http:// or https:// URL' },
  );
}

/**
 * What a caller may pass for options a schema reads: each key as the schema gives it back (numbers
 * as numbers, not the strings `${ENV}` substitution may leave), optional where the schema has a
 * default or allows none. The type of a module's options, written once, by its schema.
 */
export type OptionsOf<S extends z.ZodType> = {
  [K in keyof z.input<S>]: K extends keyof z.output<S> ? z.output<S>[K] : never;
};
