// Owns the zod building blocks that make config messages read "expected X, got Y" and reject unknown keys.
import { z } from "zod";
import { isObject } from "../shared/json.js";
import { describeValue } from "./errors.js";
import { nearest } from "../shared/suggest.js";
import { MAX_TIMER_MS } from "../shared/timer-delay.js";

/** Schema params whose every issue (type or check) reads `expected <what>, got <type> <json>`. */
export function expected(what: string): { error: (issue: z.core.$ZodRawIssue) => string } {
  return { error: (issue) => `expected ${what}, got ${describeValue(issue.input)}` };
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, expected(`one of ${values.map((v) => JSON.stringify(v)).join(", ")}`));
}

/**
 * A duration in milliseconds: an integer from `min` to `max` (by default the longest wait setTimeout takes,
 * since a longer one fires at once: a timeout past it would fail every call, a start timeout past it every
 * start). `what` words the other problems; `zeroIsNone` (0 = no limit) adds what to write instead of a longer one.
 */
export function durationMs(what: string, options: { min: 0 | 1; max?: number; zeroIsNone?: boolean }) {
  const { min, max = MAX_TIMER_MS, zeroIsNone = false } = options;
  const bound = max === MAX_TIMER_MS ? `${max} (about 24.8 days)` : String(max);
  const fix = zeroIsNone ? "; use 0 for no limit" : "";
  return z
    .int(expected(what))
    .min(min)
    .max(max, { error: (issue) => `expected at most ${bound}, got ${describeValue(issue.input)}${fix}` });
}

/** An array of non-empty directory paths: the roots of duckdb and workspace, a policy's cwd_allow and redirect_allow. */
export function directoryPaths() {
  return z.array(z.string(expected("a directory path")).min(1, "expected a non-empty directory path"), expected("an array of directory paths"));
}

/** Check option: run only when every issue so far is continuable (unknown keys), i.e. all values are well typed. */
export const onlySoftIssues = {
  when: (payload: z.core.ParsePayload): boolean => payload.issues.every((issue) => issue.continue === true),
};

/**
 * An object schema that reports each unknown key as its own issue, with a suggestion. The issues
 * are continuable so the other checks of the same object still run and every problem is reported.
 * `hints` replaces the suggestion for keys that are known to be misplaced.
 */
export function closed<S extends z.core.$ZodLooseShape>(shape: S, hints: Record<string, string> = {}) {
  const known = Object.keys(shape);
  return z.looseObject(shape, expected("a table")).superRefine(
    (value: unknown, ctx) => {
      if (!isObject(value)) return;
      for (const key of Object.keys(value)) {
        if (known.includes(key)) continue;
        // Own hints only: every object has a "constructor".
        const message = Object.hasOwn(hints, key) ? `unknown key; ${hints[key]}` : unknownKeyMessage(key, known);
        ctx.addIssue({ code: "custom", path: [key], message, input: value[key], continue: true });
      }
    },
    { when: (payload) => isObject(payload.value) },
  );
}

export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const snake = key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
  const hint = known.includes(snake) ? snake : nearest(key, known);
  return hint !== undefined
    ? `unknown key; did you mean ${JSON.stringify(hint)}?`
    : `unknown key; expected one of ${known.map((k) => JSON.stringify(k)).join(", ")}`;
}

/** `snake_case` -> `camelCase`: how a key of the file is named where gaggle reads it. */
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/** A table's keys in camelCase; index signatures (a closed table's unknown keys, refused already) left out. */
export type CamelKeys<T> = { [K in keyof T as K extends string ? (string extends K ? never : Camel<K>) : never]: T[K] };

export function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * The one mapping from a table as written (snake_case, defaults filled in by its schema) to what gaggle reads:
 * each key renamed, each value as it is. Keys absent from the table stay absent.
 */
export function camelKeys<T extends object>(table: T): CamelKeys<T> {
  return Object.fromEntries(Object.entries(table).map(([key, value]) => [camelKey(key), value])) as CamelKeys<T>;
}

/** A closed table read as `camelKeys` gives it: the usual shape of a settings table. */
export function settingsTable<S extends z.core.$ZodLooseShape>(shape: S, hints: Record<string, string> = {}) {
  return closed(shape, hints).transform(camelKeys);
}
