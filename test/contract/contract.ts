// The Child contract: the same cases, run against every kind of child through the router that serves them all.
import { afterEach, describe, expect, it } from "vitest";
import { Cancellation } from "../../src/children/calls/cancellation.js";
import type { ChildStatus } from "../../src/children/child.js";
import { Router } from "../../src/children/router.js";
import { Switchboard } from "../../src/children/switchboard.js";
import { until } from "../helpers/poll.js";
import { textOf } from "../helpers/gaggle.js";
import { ObservedChild, type ContractSubject, type Subject } from "./harness.js";

const STATES: ChildStatus["state"][] = ["not_started", "starting", "running", "stopping", "stopped", "failed"];
const KINDS: ChildStatus["kind"][] = ["stdio", "http", "sse", "virtual"];
const STATUS_KEYS = ["kind", "lastError", "needsAuth", "pid", "protocol", "restarts", "startedAt", "state", "stderrTail", "stdoutNoise", "toolCount"];

interface Setup extends Subject {
  name: string;
  router: Router;
  observed: ObservedChild;
}

export function describeChildContract(subject: ContractSubject): void {
  describe(`the Child contract: ${subject.title}`, () => {
    let current: Setup | undefined;

    /** A fresh child, behind a router that lets `concurrency` of its calls run at once. */
    async function setup(concurrency = 1): Promise<Setup> {
      const built = await subject.build(new Switchboard());
      const observed = new ObservedChild(built.child);
      current = { ...built, name: built.child.name, observed, router: new Router([{ child: observed, concurrency }]) };
      return current;
    }

    afterEach(async () => {
      const done = current;
      current = undefined;
      if (!done) return;
      await done.child.close().catch(() => {});
      await done.dispose();
    });

    it("lists its tools, each taking an object, and knows them once listed without starting anything", async () => {
      const { child, good, bad } = await setup();
      const before = child.status().state;
      child.knownTool(good.tool);
      expect(child.status().state).toBe(before);
      const tools = await child.tools();
      const names = tools.map((tool) => tool.name);
      expect(names).toContain(good.tool);
      expect(names).toContain(bad.tool);
      for (const tool of tools) expect(tool.inputSchema.type).toBe("object");
      expect(child.knownTool(good.tool)).toBe(tools.find((tool) => tool.name === good.tool));
      expect(child.knownTool("no_such_tool")).toBeUndefined();
    });

    it("gives its schema: the tools it lists, and its resources, resource templates and prompts", async () => {
      const { child } = await setup();
      const schema = await child.schema();
      expect(schema.tools.map((tool) => tool.name)).toEqual((await child.tools()).map((tool) => tool.name));
      for (const list of [schema.resources, schema.resourceTemplates, schema.prompts]) expect(Array.isArray(list)).toBe(true);
      for (const resource of schema.resources) expect(typeof resource.uri).toBe("string");
      for (const template of schema.resourceTemplates) expect(typeof template.uriTemplate).toBe("string");
    });

    it("reports its status in the one shape, and the router adds what it counts of the calls", async () => {
      const { child, router, name, good } = await setup();
      expectStatusShape(child.status());
      await router.callTool(name, good.tool, good.args, {});
      const after = child.status();
      expectStatusShape(after);
      expect(after.state).toBe("running");
      expect(after.toolCount).toBe((await child.tools()).length);
      expect(router.status(name)).toEqual({ ...child.status(), name, callsServed: 1, queue: { running: 0, waiting: 0 } });
    });

    it("answers a good call through the router", async () => {
      const { router, name, good, observed } = await setup();
      expect(textOf(await router.callTool(name, good.tool, good.args, {}))).toMatch(good.answers);
      expect(observed.reached).toEqual([{ tool: good.tool, args: good.args }]);
    });

    it("refuses arguments that break the tool's input schema before they reach the child", async () => {
      const { router, name, bad, observed } = await setup();
      await expect(router.callTool(name, bad.tool, bad.args, {})).rejects.toMatchObject({
        code: "INVALID_ARGS",
        message: expect.stringMatching(new RegExp(`^invalid arguments for ${name}\\.${bad.tool}: arguments`)),
        hint: `call get_schema("${name}", "${bad.tool}") for its input schema`,
      });
      expect(observed.reached).toEqual([]);
      expect(router.status(name).callsServed).toBe(0);
    });

    it("names an unknown tool and an unknown child, and calls neither", async () => {
      const { router, name, good, observed } = await setup();
      await expect(router.callTool(name, "no_such_tool", {}, {})).rejects.toMatchObject({
        code: "TOOL_NOT_FOUND",
        message: `${name} has no tool named "no_such_tool"`,
        hint: expect.stringContaining(`get_schema("${name}")`),
      });
      await expect(router.callTool(name.slice(0, -1), good.tool, good.args, {})).rejects.toMatchObject({
        code: "SERVER_NOT_FOUND",
        hint: `did you mean "${name}"? list_registered_children lists every name`,
      });
      expect(observed.reached).toEqual([]);
    });

    it("lets at most `concurrency` calls at it at once; the rest wait their turn in order", async () => {
      const { router, name, observed, slow } = await setup(1);
      const calls = [await slow(), await slow(), await slow()];
      const first = router.callTool(name, calls[0]!.tool, calls[0]!.args, {});
      await until(
        () => observed.active,
        (active) => active === 1,
      );
      const rest = calls.slice(1).map((call) => router.callTool(name, call.tool, call.args, {}));
      expect(router.status(name).queue).toEqual({ running: 1, waiting: 2 });
      await Promise.all([first, ...rest]);
      expect(observed.mostAtOnce).toBe(1);
      expect(observed.reached).toEqual(calls.map(({ tool, args }) => ({ tool, args })));
      expect(router.status(name)).toMatchObject({ callsServed: 3, queue: { running: 0, waiting: 0 } });
    });

    it("runs calls together up to its concurrency", async () => {
      const { router, name, observed, slow } = await setup(2);
      const [a, b] = [await slow(), await slow()];
      const calls = [router.callTool(name, a.tool, a.args, {}), router.callTool(name, b.tool, b.args, {})];
      await until(
        () => observed.active,
        (active) => active === 2,
      );
      expect(router.status(name).queue).toEqual({ running: 2, waiting: 0 });
      await Promise.all(calls);
      expect(observed.mostAtOnce).toBe(2);
    });

    it("drops a call cancelled while it waits: it leaves the line and never reaches the child", async () => {
      const { router, name, good, observed, slow } = await setup(1);
      const held = await slow();
      const running = router.callTool(name, held.tool, held.args, {});
      await until(
        () => observed.active,
        (active) => active === 1,
      );
      const cancel = new Cancellation();
      const waiting = router.callTool(name, good.tool, good.args, { cancel });
      expect(router.status(name).queue.waiting).toBe(1);
      cancel.abort(new Error("the client gave up"));
      await expect(waiting).rejects.toThrow("the client gave up");
      expect(router.status(name).queue.waiting).toBe(0);
      await running;
      expect(observed.reached).toEqual([{ tool: held.tool, args: held.args }]);
    });

    if (subject.cancelsInFlight) {
      it("stops the work of a call cancelled in flight, and the call ends with the cancellation", async () => {
        const { router, name, observed, slow, stopsCancelled } = await setup(1);
        const held = await slow();
        const cancel = new Cancellation();
        const call = router.callTool(name, held.tool, held.args, { cancel });
        await until(
          () => observed.active,
          (active) => active === 1,
        );
        // Only a call the child is working on can show that its work stopped.
        await held.working?.();
        cancel.abort(new Error("the client cancelled the call"));
        await expect(call).rejects.toThrow(/cancel/);
        await stopsCancelled!();
        expect(router.status(name).queue).toEqual({ running: 0, waiting: 0 });
      });
    }

    if (subject.crashes) {
      it("fails a call in flight at once when it crashes, and starts again on the next call", async () => {
        const { router, name, good, child, observed, slow, crash } = await setup(1);
        await router.callTool(name, good.tool, good.args, {});
        const held = await slow();
        // Caught from the start: the call fails while the crash is still being brought about.
        const failed = router.callTool(name, held.tool, held.args, {}).catch((error: unknown) => error);
        await until(
          () => observed.active,
          (active) => active === 1,
        );
        await held.working?.();
        await crash!.kill();
        expect(await failed).toMatchObject({ code: "SERVER_FAILED", message: expect.stringContaining(`${name} `) });
        expect(child.status()).toMatchObject({ state: "failed", lastError: expect.stringContaining("unexpectedly") });
        await crash!.recover();
        expect(textOf(await router.callTool(name, good.tool, good.args, {}))).toMatch(good.answers);
        expect(child.status()).toMatchObject({ state: "running", restarts: 1 });
      });
    }

    it("closes, leaving nothing it started alive, and opens again on the next call", async () => {
      const { router, name, good, child, occupy, leftovers } = await setup();
      await occupy();
      expect((await leftovers()).length).toBeGreaterThan(0);
      const { uptimeMs } = await child.close();
      expect(uptimeMs).toBeGreaterThanOrEqual(0);
      expect(await until(leftovers, (left) => left.length === 0)).toEqual([]);
      expect(child.status().state).toBe(subject.stateAfterClose);
      expect(textOf(await router.callTool(name, good.tool, good.args, {}))).toMatch(good.answers);
    });
  });
}

function expectStatusShape(status: ChildStatus): void {
  expect(Object.keys(status).sort()).toEqual(STATUS_KEYS);
  expect(STATES).toContain(status.state);
  expect(KINDS).toContain(status.kind);
  expect(status.pid === null || (Number.isInteger(status.pid) && status.pid > 0)).toBe(true);
  expect(status.startedAt === null || status.startedAt instanceof Date).toBe(true);
  expect(Number.isInteger(status.restarts) && status.restarts >= 0).toBe(true);
  expect(status.lastError === null || typeof status.lastError === "string").toBe(true);
  expect(status.stderrTail.every((line) => typeof line === "string")).toBe(true);
  expect(Number.isInteger(status.stdoutNoise.lines) && status.stdoutNoise.lines >= status.stdoutNoise.recent.length).toBe(true);
  expect(status.toolCount === null || Number.isInteger(status.toolCount)).toBe(true);
  expect([null, "2025-11-25", "2026-07-28"]).toContain(status.protocol);
}
