import { imagenSubject } from "./built-in-children.js";
import { describeChildContract } from "./contract.js";

describeChildContract({
  title: "the built-in imagen child",
  stateAfterClose: "running",
  cancelsInFlight: false,
  crashes: false,
  build: imagenSubject,
});
