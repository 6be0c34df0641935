import { workspaceSubject } from "./built-in-children.js";
import { describeChildContract } from "./contract.js";

describeChildContract({
  title: "the built-in workspace child",
  stateAfterClose: "running",
  cancelsInFlight: true,
  crashes: false,
  build: workspaceSubject,
});
