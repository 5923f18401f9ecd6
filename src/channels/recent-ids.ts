/**
 * The platform message ids seen lately, oldest forgotten first once `maxBytes` is passed. It catches a
 * redelivery while the first copy's turn is still queued; the stored entry's idempotency key catches
 * the rest.
 */
export class RecentIds {
  private readonly ids = new Set<string>();
  private bytes = 0;

  constructor(private readonly maxBytes = 1024 * 1024) {}

  /** True when `id` was new (and is now remembered). */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    this.bytes += id.length;
    for (const oldest of this.ids) {
      if (this.bytes <= this.maxBytes) break;
      this.ids.delete(oldest);
      this.bytes -= oldest.length;
    }
    return true;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  delete(id: string): void {
    if (this.ids.delete(id)) this.bytes -= id.length;
  }
}
