import { processSubject } from "./built-in-children.js";
import { describeChildContract } from "./contract.js";

describeChildContract({
  title: "the built-in process child",
  stateAfterClose: "running",
  cancelsInFlight: false,
  crashes: false,
  build: processSubject,
});
