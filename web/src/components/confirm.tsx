import { useEffect, useId, useRef } from "preact/hooks";

/** A modal question; Escape or Cancel closes it, focus returns to where it was. */
export function Confirm({
  open,
  title,
  body,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  body: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  // Its own id: a page may hold more than one question (delete, rewind).
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);
  return (
    <dialog ref={dialog} class="card dialog" aria-labelledby={titleId} onClose={onCancel}>
      <h2 id={titleId}>{title}</h2>
      <p>{body}</p>
      <div class="actions">
        <button type="button" class="ghost" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
