/**
 * `sessiond/store/testing`: the store contract, for the author of a backend (a `StoreDriver` run by the
 * `LogStore` of `sessiond/store`, or a `Store` of one's own). `runStoreContract(factory)` declares its
 * cases with vitest's `describe`/`it`, so call it at the top level of a vitest test file; vitest is an
 * optional peer dependency, needed by this entry point only.
 */
export type { Ack, ChildStore } from "../store/testing/children.js";
export { runStoreContract } from "../store/testing/contract.js";
export {
  answerOf,
  type FaultyWriter,
  faultInit,
  type StoreFactory,
  type StoreFaults,
  type WriteAnswer,
} from "../store/testing/factory.js";
