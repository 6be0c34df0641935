import { duckdbSubject } from "./built-in-children.js";
import { describeChildContract } from "./contract.js";

describeChildContract({
  title: "the built-in duckdb child",
  stateAfterClose: "running",
  cancelsInFlight: false,
  crashes: false,
  build: duckdbSubject,
});
