// Attack: one principal reaching another's work over HTTP. Ann leads a team (its member on a fake Goose), and
// starts a background process, a shell with a secret and a job, and a DuckDB table; Bob, with his own token, lists,
// reads, kills, asks her shell, queries her table, reads, messages and manages her team, reads and releases her
// gosling, resumes her paused 2026-07-28 call with her requestState, and closes every built-in child, round after
// round. Each of his attempts that succeeds, and each piece of her work
// that does not survive him, is a reach.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { exitText, orphanText } from "./lib/figures.mjs";
import { workDir } from "./lib/gaggle.mjs";
import { TOKENS, startTwoPrincipals } from "./lib/http-gaggle.mjs";
import { modernTool, openTokenSession } from "./lib/mcp-http.mjs";
import { newMark, orphansOf, watchMemory } from "./lib/procs.mjs";

export const title = "one principal reaching another's work";

const SAMPLED = { role: "assistant", content: { type: "text", text: "Paris" }, model: "m", stopReason: "endTurn" };

export async function run({ scale }) {
  const dir = workDir("principals");
  const root = join(dir.path, "root");
  mkdirSync(root);
  const mark = newMark("principals");
  const gaggle = await startTwoPrincipals({ dir: dir.path, root, mark, teams: true });
  const memory = watchMemory(gaggle.pid);
  const ann = await openTokenSession(gaggle.port, TOKENS.ann);
  const bob = await openTokenSession(gaggle.port, TOKENS.bob);
  const rounds = Math.max(2, Math.round(scale * 20));
  // Ann's team, with one member whose gosling (the fake Goose) answers and goes idle.
  const team = JSON.parse((await ann.tool("team", "gg_team_manage", { team_id: "ann-team", prompt: "[answer hi]" })).text);
  const member = team.agent_id;
  let gosling;
  for (let tries = 0; tries < 150 && !gosling; tries++) {
    const status = JSON.parse((await ann.tool("team", "gg_team_status", { team_id: "ann-team" })).text);
    if (status.members[0]?.state === "idle") gosling = status.members[0].gosling_id;
    else await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!gosling) throw new Error("Ann's team member never went idle");
  const reached = new Map();
  let attempts = 0;
  let hung = 0;
  const note = (what, outcome) => {
    attempts++;
    if (outcome.hung) hung++;
    else if (outcome.reached) reached.set(what, (reached.get(what) ?? 0) + 1);
  };
  for (let round = 0; round < rounds; round++) {
    const started = await ann.tool("process", "gg_process_run", { command: "sleep 600", timeout_ms: 0 });
    const pid = JSON.parse(started.text).pid;
    const job = (await ann.tool("workspace", "Bash", { command: `export SECRET=ann-${round}; sleep 600 > /dev/null 2>&1 & echo $!` })).text;
    const jobPid = Number(/^\d+/.exec(job)?.[0]);
    await ann.tool("duckdb", "duckdb", { query: `create or replace table t${round} as select 'ann' as who` });

    const listed = await bob.tool("process", "gg_process_status");
    note("process listed", { ...listed, reached: listed.ok && listed.text.includes(`"pid":${pid}`) });
    for (const tool of ["gg_process_status", "gg_process_kill"]) {
      const answer = await bob.tool("process", tool, { pid });
      note(`${tool} of hers`, { ...answer, reached: answer.ok });
    }
    const log = await bob.read(`process://${pid}/log`);
    note("process log read", { ...log, reached: log.ok });
    const secret = await bob.tool("workspace", "Bash", { command: 'echo "[$SECRET]"' });
    note("her shell's variables", { ...secret, reached: secret.text.includes("ann-") });
    const table = await bob.tool("duckdb", "duckdb", { query: `select who from t${round}` });
    note("her in-memory table", { ...table, reached: table.ok });
    for (const [tool, args] of [
      ["gg_team_status", { team_id: "ann-team" }],
      ["gg_team_message", { team_id: "ann-team", recipient_agent_id: member, message: "do as I say" }],
      ["gg_team_manage", { team_id: "ann-team", remove_agent_ids: [member] }],
    ]) {
      const answer = await bob.tool("team", tool, args);
      note(`${tool} of her team`, { ...answer, reached: answer.ok });
    }
    const inbox = await bob.read("team://ann-team/inbox");
    note("her team's inbox read", { ...inbox, reached: inbox.ok });
    const goslings = await bob.tool("goose", "list_goslings");
    note("her gosling listed", { ...goslings, reached: goslings.text.includes(gosling) });
    for (const tool of ["get_gosling_output", "release_gosling"]) {
      const answer = await bob.tool("goose", tool, { process_id: gosling });
      note(`${tool} of hers`, { ...answer, reached: answer.ok });
    }
    for (const server of ["process", "workspace", "duckdb", "goose", "team"]) {
      const closed = await bob.meta("close_child_session", { server_id: server });
      note(`close_child_session ${server}`, { hung: closed.hung, reached: false });
    }

    const status = await ann.tool("process", "gg_process_status", { pid });
    note("her process ended", { ...status, reached: !status.text.includes('"status":"running"') });
    const shell = await ann.tool("workspace", "Bash", { command: `echo "[$SECRET]"; kill -0 ${jobPid} && echo job-alive` });
    note("her shell ended", { ...shell, reached: !shell.text.includes(`[ann-${round}]`) || !shell.text.includes("job-alive") });
    const mine = await ann.tool("duckdb", "duckdb", { query: `select who from t${round}` });
    note("her table dropped", { ...mine, reached: !mine.ok });
    // A 2026-07-28 call of hers paused on a question: her requestState, sent by him (his client calling itself as
    // hers does), and by her for another tool, must resume nothing; her own retry must complete it.
    const paused = await modernTool(gaggle.port, TOKENS.ann, "protocol", "sample", { prompt: `round ${round}?` });
    const state = paused.result?.requestState;
    const key = Object.keys(paused.result?.inputRequests ?? {})[0];
    const retry = { requestState: state, inputResponses: { [key]: SAMPLED } };
    const stolen = await modernTool(gaggle.port, TOKENS.bob, "protocol", "sample", {}, retry);
    note("her paused call resumed", { hung: stolen.hung, reached: stolen.result?.resultType === "complete" });
    const otherTool = await modernTool(gaggle.port, TOKENS.ann, "protocol", "survey", {}, retry);
    note("her requestState taken for another tool", { hung: otherTool.hung, reached: otherTool.result !== undefined });
    const resumed = await modernTool(gaggle.port, TOKENS.ann, "protocol", "sample", {}, retry);
    const completed = resumed.result?.content?.[0]?.text === "sampled: Paris";
    note("her paused call lost", { hung: resumed.hung, reached: state === undefined || !completed });
    const status2 = await ann.tool("team", "gg_team_status", { team_id: "ann-team" });
    note("her team's member removed", { ...status2, reached: !status2.ok || JSON.parse(status2.text).members[0]?.removed_at != null });
    const gone = await ann.tool("goose", "get_gosling_status", { process_id: gosling });
    note("her gosling released", { ...gone, reached: !gone.ok || gone.text.includes("RELEASED") });
    await ann.tool("process", "gg_process_kill", { pid });
    await ann.tool("workspace", "Bash", { command: `kill ${jobPid}` });
  }
  const alive = gaggle.alive();
  await Promise.all([ann.close(), bob.close()]);
  const peakKiB = memory.stop();
  const exit = await gaggle.stop("SIGTERM");
  const orphans = await orphansOf(mark, 5000);
  dir.remove();
  const reaches = [...reached.values()].reduce((sum, n) => sum + n, 0);
  return {
    title,
    figures: [
      [
        "rounds",
        `${rounds}, ${attempts} attempts (Bob on Ann's process, log, shell, table, team, gosling, paused call and every built-in child; Ann's work checked after)`,
      ],
      ["reached", reaches === 0 ? "0" : [...reached].map(([what, n]) => `${what} ${n}`).join(", ")],
      ["hung", hung],
      ["gaggle exit", exitText(exit)],
      ["orphans", orphanText(orphans)],
    ],
    mustBeZero: { reached: reaches, hung, orphans: orphans.length, "gaggle died": alive ? 0 : 1 },
    peakKiB,
    orphans: orphans.length,
  };
}
