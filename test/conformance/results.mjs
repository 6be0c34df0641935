// Reading the conformance suite's results: which scenarios a requirement set scores, the checks each
// scenario wrote (-o DIR: one DIR/[server-]<scenario>-<timestamp>/checks.json per scenario), the totals,
// and baseline (--expected-failures) files.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The scenarios a requirement set scores, per leg: { server: [...], client: [...] } (from requirements/<R>.yaml). */
export function scoredScenarios(suiteDir, requirements) {
  const scored = { server: [], client: [] };
  let section;
  for (const line of readFileSync(join(suiteDir, "requirements", `${requirements}.yaml`), "utf8").split("\n")) {
    const top = /^([a-z_]+):/.exec(line);
    if (top !== null) section = scored[top[1]];
    const item = /^ {2}- ([^\s#]+)\s*(?:#.*)?$/.exec(line);
    if (item !== null && section !== undefined) section.push(item[1]);
  }
  return scored;
}

const RESULT_DIR = /^(?:server-)?(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

/** Checks per scenario found under an output directory: Map<scenario, check[]>. */
export function readChecks(outDir, prefix = "", byScenario = new Map()) {
  if (!existsSync(outDir)) return byScenario;
  for (const entry of readdirSync(outDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const scenario = RESULT_DIR.exec(entry.name)?.[1];
    const file = scenario && join(outDir, entry.name, "checks.json");
    if (file && existsSync(file)) byScenario.set(`${prefix}${scenario}`, JSON.parse(readFileSync(file, "utf8")));
    // A scenario named with a slash (auth/metadata-default) has its results one folder down.
    else if (!scenario) readChecks(join(outDir, entry.name), `${prefix}${entry.name}/`, byScenario);
  }
  return byScenario;
}

const failing = (check) => check.status === "FAILURE" || check.status === "WARNING";

/**
 * Totals over `scenarios` (the scored ones that were run). A scenario passes as the suite judges it: no FAILURE
 * (server leg) or no FAILURE and no WARNING (client leg); a scenario that wrote no checks failed. Checks count
 * SUCCESS against SUCCESS + FAILURE + WARNING (INFO and SKIPPED are not verdicts).
 */
export function tally(checksByScenario, scenarios, leg) {
  const totals = { scenarios: scenarios.length, passed: 0, checks: 0, checksPassed: 0, warnings: 0, failing: [] };
  for (const scenario of scenarios) {
    const checks = checksByScenario.get(scenario);
    const verdicts = (checks ?? []).filter((check) => check.status === "SUCCESS" || failing(check));
    totals.checks += verdicts.length;
    totals.checksPassed += verdicts.filter((check) => check.status === "SUCCESS").length;
    totals.warnings += verdicts.filter((check) => check.status === "WARNING").length;
    const failed = checks === undefined || verdicts.some((check) => check.status === "FAILURE" || (leg === "client" && check.status === "WARNING"));
    if (!failed) totals.passed += 1;
    if (checks === undefined || verdicts.some(failing)) totals.failing.push(scenario);
  }
  return totals;
}

/** Every FAILURE and WARNING of the given scenarios, for the report: [{ scenario, status, id, message }]. */
export function problems(checksByScenario, scenarios) {
  return scenarios.flatMap((scenario) =>
    (checksByScenario.get(scenario) ?? [{ status: "FAILURE", id: scenario, errorMessage: "the scenario wrote no results" }])
      .filter(failing)
      .map((check) => ({
        scenario,
        status: check.status,
        id: check.id,
        message: check.errorMessage ?? check.details?.message ?? check.description ?? "",
      })),
  );
}

/** Writes a baseline: the scenarios the suite will tolerate failing (a FAILURE or WARNING), whole-scenario entries. */
export function writeBaseline(file, { leg, title, scenarios }) {
  const lines = [
    `# ${title}`,
    "# Baseline for --expected-failures: a failure not listed here, or a listed scenario that now passes, fails the run.",
    "# Regenerate from a run's real results with: node test/conformance/run.mjs --update-baselines",
    scenarios.length === 0 ? `${leg}: []` : `${leg}:`,
    ...scenarios.map((scenario) => `  - ${scenario}`),
    "",
  ];
  writeFileSync(file, lines.join("\n"));
}
