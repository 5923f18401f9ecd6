/** `sessiond/lanes`: one turn per key at a time, in arrival order, bounded per key. */
export { Lanes, type LanesOptions } from "../turns/lanes.js";
