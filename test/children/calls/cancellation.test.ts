import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CancelledNotificationSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { Cancellation, ClientGone } from "../../../src/children/calls/cancellation.js";
import { until } from "../../helpers/poll.js";

describe("Cancellation", () => {
  it("runs each listener once, in order, with the reason; later aborts change nothing", () => {
    const cancel = new Cancellation();
    const heard: string[] = [];
    cancel.onAbort((reason) => heard.push(`first ${String(reason)}`));
    cancel.onAbort((reason) => heard.push(`second ${String(reason)}`));
    expect(cancel.aborted).toBe(false);
    cancel.abort("client gave up");
    cancel.abort("again");
    expect(heard).toEqual(["first client gave up", "second client gave up"]);
    expect(cancel.aborted).toBe(true);
    expect(cancel.reason).toBe("client gave up");
  });

  it("runs a listener added after the abort at once, and never runs a removed one", () => {
    const cancel = new Cancellation();
    const heard: string[] = [];
    const remove = cancel.onAbort(() => heard.push("removed"));
    cancel.onAbort(() => heard.push("kept"));
    remove();
    cancel.abort("stop");
    cancel.onAbort((reason) => heard.push(`late ${String(reason)}`));
    expect(heard).toEqual(["kept", "late stop"]);
  });

  it("keeps the order listeners were added in, whichever were removed between the adds", () => {
    const cancel = new Cancellation();
    const heard: string[] = [];
    const hear = (name: string) => () => heard.push(name);
    const removeA = cancel.onAbort(hear("a"));
    cancel.onAbort(hear("b"));
    removeA();
    cancel.onAbort(hear("c"));
    const removeD = cancel.onAbort(hear("d"));
    removeD();
    // One function added twice and removed once is heard once.
    const twice = hear("e");
    cancel.onAbort(twice);
    const removeOne = cancel.onAbort(twice);
    removeOne();
    cancel.onAbort(hear("f"));
    cancel.abort("stop");
    expect(heard).toEqual(["b", "c", "e", "f"]);

    // Emptied and filled again: the one listener left, then the newer one.
    const again = new Cancellation();
    const order: string[] = [];
    const removeFirst = again.onAbort(() => order.push("first"));
    const removeSecond = again.onAbort(() => order.push("second"));
    removeFirst();
    removeSecond();
    again.onAbort(() => order.push("third"));
    again.onAbort(() => order.push("fourth"));
    again.abort("stop");
    expect(order).toEqual(["third", "fourth"]);
  });

  it("tells followers, objects and listeners alike, in the order they came; one unfollowed or late is told as a listener is", () => {
    const cancel = new Cancellation();
    const heard: string[] = [];
    const follower = (name: string) => ({ cancelled: (reason: unknown) => heard.push(`${name} ${String(reason)}`) });
    const a = follower("a");
    const gone = follower("gone");
    cancel.follow(a);
    cancel.onAbort((reason) => heard.push(`listener ${String(reason)}`));
    cancel.follow(gone);
    cancel.unfollow(gone);
    // Unfollowing one that never followed changes nothing.
    cancel.unfollow(follower("stranger"));
    cancel.follow(follower("b"));
    cancel.abort("stop");
    cancel.abort("again");
    cancel.follow(follower("late"));
    cancel.unfollow(a);
    expect(heard).toEqual(["a stop", "listener stop", "b stop", "late stop"]);
  });

  it("gives an AbortSignal that follows it, whether asked for before or after the abort", () => {
    const before = new Cancellation();
    const signal = before.signal;
    expect(before.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    before.abort("stop");
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe("stop");

    const after = new Cancellation();
    after.abort("late");
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe("late");
  });

  it("follows the signal it was made from, with a signal of its own carrying the same reason", () => {
    const controller = new AbortController();
    const cancel = new Cancellation(controller.signal);
    const heard: unknown[] = [];
    cancel.onAbort((reason) => heard.push(reason));
    const signal = cancel.signal;
    controller.abort("closed");
    expect(heard).toEqual(["closed"]);
    expect(cancel.aborted).toBe(true);
    expect(signal.reason).toBe("closed");

    const aborted = new AbortController();
    aborted.abort("already");
    expect(new Cancellation(aborted.signal).reason).toBe("already");
  });

  it("takes the reason its connection ended with, once that connection's cancellation is aborted", () => {
    const ended = new Cancellation();
    const told = new AbortController();
    const cancelledByClient = new Cancellation(told.signal, ended);
    told.abort("changed my mind");
    expect(cancelledByClient.reason).toBe("changed my mind");

    // As the SDK's Protocol does when its connection closes: an abort with no reason, after the connection's.
    const closing = new AbortController();
    const inFlight = new Cancellation(closing.signal, ended);
    const signal = inFlight.signal;
    const gone = new ClientGone("the client's session ended");
    ended.abort(gone);
    closing.abort();
    expect(inFlight.reason).toBe(gone);
    expect(signal.reason).toBe(gone);
  });
});

describe("ClientGone", () => {
  it("reads as its reason alone, also where the SDK turns it into the reason of notifications/cancelled", async () => {
    expect(String(new ClientGone("the client's session ended"))).toBe("the client's session ended");
    const server = new Server({ name: "peer", version: "0.0.0" }, { capabilities: { tools: {} } });
    const reasons: unknown[] = [];
    server.setNotificationHandler(CancelledNotificationSchema, (notification) => void reasons.push(notification.params.reason));
    server.setRequestHandler(ListToolsRequestSchema, () => new Promise(() => {}));
    const client = new Client({ name: "gaggle", version: "0.0.0" });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    const cancel = new Cancellation();
    const listing = client.listTools(undefined, { signal: cancel.signal });
    cancel.abort(new ClientGone("the client's session ended"));
    await expect(listing).rejects.toThrow("the client's session ended");
    await until(
      () => reasons,
      (seen) => seen.length === 1,
    );
    expect(reasons).toEqual(["the client's session ended"]);
    await client.close();
  });
});
