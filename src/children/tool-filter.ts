// `tools.allow` / `tools.deny` globs: which of a child's tools are visible (and so callable) through gaggle.

/** `*` matches any run of characters, `?` one character; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}

export function toolFilter(rules: { allow?: string[] | undefined; deny: string[] }): (name: string) => boolean {
  const allow = rules.allow?.map(globToRegExp);
  const deny = rules.deny.map(globToRegExp);
  return (name) => (!allow || allow.some((re) => re.test(name))) && !deny.some((re) => re.test(name));
}
