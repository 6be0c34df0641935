import { describeChildContract } from "./contract.js";
import { stdioSubject } from "./real-children.js";

describeChildContract({
  title: "a stdio child (the echo fixture)",
  stateAfterClose: "stopped",
  cancelsInFlight: true,
  crashes: true,
  build: stdioSubject,
});
