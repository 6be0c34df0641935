import { teamSubject } from "./built-in-children.js";
import { describeChildContract } from "./contract.js";

describeChildContract({
  title: "the built-in team child (on the fake goose)",
  stateAfterClose: "running",
  cancelsInFlight: false,
  crashes: false,
  build: teamSubject,
});
