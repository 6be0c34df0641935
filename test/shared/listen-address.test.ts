// Where a listener binds, as --http and gateway.admin take it, and what is said of an address they do not take.
import { describe, expect, it } from "vitest";
import { parseListenAddress, portProblem } from "../../src/shared/listen-address.js";

describe("a listen address", () => {
  it("is PORT on loopback, HOST:PORT or [IPV6]:PORT", () => {
    expect(parseListenAddress("8080")).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(parseListenAddress("0.0.0.0:0")).toEqual({ host: "0.0.0.0", port: 0 });
    expect(parseListenAddress("[::1]:65535")).toEqual({ host: "::1", port: 65535 });
  });

  it("with a port above 65535 is refused, and the port named as the problem", () => {
    for (const text of ["99999", "localhost:65536", "[::1]:123456789"]) {
      expect(parseListenAddress(text)).toBeUndefined();
      expect(portProblem(text)).toMatch(/^port \d+ is above 65535 \(0 picks a free one\)$/);
    }
  });

  it("of another form is refused with no port problem to add", () => {
    for (const text of ["", "http://x:80", "host:", "8080a"]) {
      expect(parseListenAddress(text)).toBeUndefined();
      expect(portProblem(text)).toBeUndefined();
    }
  });
});
