// A word as a POSIX shell reads it back: as it is when plain, else single-quoted.

/** Words made only of these need no quoting for /bin/sh. */
const PLAIN_WORD = /^[A-Za-z0-9_./=:,+@%^-]+$/;

export function shellWord(word: string): string {
  return PLAIN_WORD.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
