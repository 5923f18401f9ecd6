/**
 * Aborts `controller` with `parent`'s reason once `parent` aborts, until the returned function detaches
 * it. `AbortSignal.any` does the same with a weak reference and a finalizer per signal, which the
 * collector pays for on every turn; a turn knows when it ends, so it detaches instead.
 */
export function followSignal(controller: AbortController, parent: AbortSignal | undefined): () => void {
  if (!parent) return noop;
  if (parent.aborted) {
    controller.abort(parent.reason);
    return noop;
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return () => parent.removeEventListener("abort", onAbort);
}

function noop(): void {}
