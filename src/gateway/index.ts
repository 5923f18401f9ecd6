export { createGatewayApp, type GatewayApp } from "./app.js";
export type { GatewayDeps, GatewayLogger } from "./deps.js";
export {
  DEFAULT_GRACE_MS,
  DEFAULT_HOST,
  DEFAULT_PORT,
  type RunningGateway,
  type StartGatewayOptions,
  startGateway,
} from "./server.js";
export type { GatewayOptions } from "./types.js";
