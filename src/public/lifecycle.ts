/** `sessiond/lifecycle`: the clock the engine decides by, and titles. */
export { type Clock, ManualClock, systemClock } from "../lifecycle/clock.js";
export { offlineTitle, titleFromExchange } from "../lifecycle/titles.js";
