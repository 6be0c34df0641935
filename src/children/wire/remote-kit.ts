// What only remote children use: their transports, their sign-in, their listen streams, and how their errors
// read. It is loaded with the first remote child's first session (see loadRemoteKit in child-session.ts), so a
// gaggle of stdio children neither loads nor holds the SDK's HTTP client and OAuth code.
export { httpListenChannel } from "./http-listen.js";
export { ChildOAuthProvider } from "../oauth/provider.js";
export { connectionLost, neverReached, remoteTransport, streamBroken, terminateRemoteSession } from "./remote-transport.js";
