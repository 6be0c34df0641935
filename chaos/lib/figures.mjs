// Owns what an attack counts and how the run prints it: calls made, answered, failed by code, hung.

/** Counts the outcomes of tools/call requests: answered, failed (by gaggle's code or JSON-RPC's), or hung. */
export class CallTally {
  calls = 0;
  answered = 0;
  hung = 0;
  failed = new Map();
  /** The first message of each failure code, to say what it was. */
  failedSamples = new Map();
  /** A few hung calls, to say which. */
  hungSamples = [];

  /** `answer` is what startStdio's request resolved with. */
  record(answer, what = "") {
    this.calls++;
    if (answer.hung) {
      this.hung++;
      if (this.hungSamples.length < 5) this.hungSamples.push(`${answer.id} ${what}`.trim());
    } else if (answer.error) this.fail(`JSON-RPC ${answer.error.code}`, answer.error.message);
    else if (answer.result?.isError) this.fail(...failureOf(answer.result));
    else this.answered++;
    return answer;
  }

  fail(code, message = "") {
    this.failed.set(code, (this.failed.get(code) ?? 0) + 1);
    if (!this.failedSamples.has(code)) this.failedSamples.set(code, String(message).replace(/\s+/g, " ").slice(0, 160));
  }

  get failedTotal() {
    return [...this.failed.values()].reduce((sum, n) => sum + n, 0);
  }

  /** The figures every call-making attack prints. */
  figures() {
    return [
      ["calls", this.calls],
      ["answered", this.answered],
      ["failed", `${this.failedTotal}${this.failed.size > 0 ? ` (${byCount(this.failed)})` : ""}`],
      ...[...this.failedSamples].map(([code, message]) => [`  first ${code}`, message]),
      ["hung", this.hung + (this.hungSamples.length > 0 ? ` (${this.hungSamples.join("; ")})` : "")],
    ];
  }

  add(other) {
    this.calls += other.calls;
    this.answered += other.answered;
    this.hung += other.hung;
    this.hungSamples.push(...other.hungSamples.slice(0, 5 - this.hungSamples.length));
    for (const [code, n] of other.failed) this.failed.set(code, (this.failed.get(code) ?? 0) + n);
    for (const [code, message] of other.failedSamples) if (!this.failedSamples.has(code)) this.failedSamples.set(code, message);
  }
}

/** gaggle's failure code and message from an isError result ({"status":"failed","code":...}), or what the child said. */
function failureOf(result) {
  const text = result.content?.[0]?.text;
  try {
    const { code, error } = JSON.parse(text);
    if (typeof code === "string") return [code, error];
  } catch {
    // a tool error the child wrote itself
  }
  return ["isError from the child", text];
}

/** "A 3, B 1": a count map, largest first. */
export function byCount(map) {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key} ${n}`)
    .join(", ");
}

export const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;

/** Increments `key` in a count map. */
export function count(map, key, n = 1) {
  map.set(key, (map.get(key) ?? 0) + n);
}

/** How a gaggle ended: "code 0 after 0.3 s", "signal SIGKILL", and whether it had to be killed. */
export function exitText({ code, signal, hungOnExit, ms }) {
  const how = signal ? `signal ${signal}` : `code ${code}`;
  return hungOnExit ? `did not exit within ${(ms / 1000).toFixed(0)} s; SIGKILLed` : `${how} after ${(ms / 1000).toFixed(1)} s`;
}

export function orphanText(orphans) {
  return orphans.length === 0 ? "0" : `${orphans.length}: ${orphans.map(({ pid, command }) => `${pid} ${command}`).join("; ")}`;
}

/** What gaggle's stderr held: error lines, and lines with a stack trace by what they said. */
export function logText({ errors, stacks, stackMessages }) {
  return `${errors} error lines, ${stacks} with a stack trace${stacks > 0 ? ` (${byCount(stackMessages)})` : ""}`;
}
