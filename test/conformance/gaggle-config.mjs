// The config gaggle runs with in the conformance runs: one child, its tools under their own names (or behind the
// meta-tools), no built-in children. A scenario reads the first tools/list once, so that list waits for the child
// however long its start takes on a busy machine, rather than the default list_wait_ms.

/** `childLines` are the child's own TOML lines (command and args, or type and url). */
export function gaggleConfig(childLines, expose = "tools") {
  const virtual = ["process", "goose", "team"].flatMap((name) => [`[virtual.${name}]`, "enabled = false", ""]);
  return [
    "[gateway]",
    `expose = "${expose}"`,
    'log_level = "warn"',
    "list_wait_ms = 30000",
    "shutdown_grace_ms = 500",
    "",
    ...virtual,
    "[mcp_servers.child]",
    'prefix = ""',
    ...childLines,
    "",
  ].join("\n");
}
