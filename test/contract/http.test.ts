import { describeChildContract } from "./contract.js";
import { remoteSubject } from "./real-children.js";

describeChildContract({
  title: "a Streamable HTTP child (the echo fixture)",
  stateAfterClose: "stopped",
  cancelsInFlight: true,
  crashes: true,
  build: (switchboard) => remoteSubject(switchboard, "http"),
});
