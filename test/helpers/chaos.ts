// The chaos run's generators (chaos/lib/*.mjs), typed for the bounded versions of its attacks in the test suite.
import { pathToFileURL } from "node:url";
import { ROOT } from "./paths.js";

export interface Random {
  int(n: number): number;
  pick<T>(items: T[]): T;
  chance(p: number): boolean;
}

/** One fuzzed line: a string without a newline, or (rarely) bytes that are not UTF-8. */
export interface FuzzLine {
  kind: string;
  data: string | Buffer;
}

interface RandomModule {
  seeded(seed: number): Random;
}

interface FuzzModule {
  FUZZ_CHILD: string;
  fuzzLines(random: Random, options?: { idPrefix?: string }): { next(i: number): FuzzLine };
  answerExpected(text: string): { id: string | number; method: unknown } | undefined;
  owedAnswers(lines: FuzzLine[]): Map<string | number, FuzzLine>;
}

interface ConfigMutantsModule {
  baseDocuments(root: string): { toml: unknown; json: unknown };
  mutant(
    random: Random,
    bases: { toml: unknown; json: unknown },
    options?: { maxDepth?: number },
  ): { format: "toml" | "json"; text: string; ops: string[] };
  deepProbes(): Array<{ format: "toml" | "json"; text: string; ops: string[] }>;
}

interface Vocabulary {
  words: string[];
  redirections: string[];
  operators: string[];
}

interface BashOracleModule {
  VOCABULARY: { test: Vocabulary; wider: Vocabulary };
  corpusLine(random: Random, vocabulary: Vocabulary): string;
  bashOracle(): {
    misses(command: string, line: { commands: Array<{ name: string | undefined }>; redirects: Array<{ path: string }> }): string[];
    remove(): void;
  };
}

const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(`${ROOT}chaos/lib/${file}`).href)) as T;

export const { seeded } = await load<RandomModule>("random.mjs");
export const fuzz = await load<FuzzModule>("json-rpc-fuzz.mjs");
export const configMutants = await load<ConfigMutantsModule>("config-mutants.mjs");
export const bashOracle = await load<BashOracleModule>("bash-oracle.mjs");
export const { CURL_SPELLINGS } = await load<{ CURL_SPELLINGS: string[] }>("curl-spellings.mjs");
