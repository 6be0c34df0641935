import { agentsSubject } from "./built-in-children.js";
import { describeChildContract } from "./contract.js";

describeChildContract({
  title: "the built-in agents child (on the fake ACP agent)",
  stateAfterClose: "running",
  cancelsInFlight: true,
  crashes: false,
  build: agentsSubject,
});
