import { gooseSubject } from "./built-in-children.js";
import { describeChildContract } from "./contract.js";

describeChildContract({
  title: "the built-in goose child (on the fake goose)",
  stateAfterClose: "running",
  cancelsInFlight: true,
  crashes: false,
  build: gooseSubject,
});
