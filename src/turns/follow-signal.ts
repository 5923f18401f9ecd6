/** The controllers following each parent signal, behind the parent's one listener. */
const followers = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * Aborts `controller` with `parent`'s reason once `parent` aborts, until the returned function detaches
 * it. `AbortSignal.any` does the same with a weak reference and a finalizer per signal, which the
 * collector pays for on every turn; a turn knows when it ends, so it detaches instead. A parent shared by
 * many turns at once (a server's shutdown signal) holds one listener for all of them, not one each.
 */
export function followSignal(controller: AbortController, parent: AbortSignal | undefined): () => void {
  if (!parent) return noop;
  if (parent.aborted) {
    controller.abort(parent.reason);
    return noop;
  }
  let set = followers.get(parent);
  if (!set) {
    const created = new Set<AbortController>();
    set = created;
    followers.set(parent, created);
    parent.addEventListener(
      "abort",
      () => {
        followers.delete(parent);
        for (const follower of created) follower.abort(parent.reason);
      },
      { once: true },
    );
  }
  const following = set;
  following.add(controller);
  return () => {
    following.delete(controller);
  };
}

function noop(): void {}
