import { describeChildContract } from "./contract.js";
import { remoteSubject } from "./real-children.js";

describeChildContract({
  title: "an SSE child (the echo fixture)",
  stateAfterClose: "stopped",
  cancelsInFlight: true,
  crashes: true,
  build: (switchboard) => remoteSubject(switchboard, "sse"),
});
