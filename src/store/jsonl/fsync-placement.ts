/**
 * Where a big batch's journal fsync runs. Off the event loop (the thread pool), the loop can take new
 * appends while the disk works; but when the last such wait took none (writers that each wait for their
 * append before the next), the hand-off to the pool and back is pure cost, and the fsync runs on the loop
 * instead. Every `probeEvery` batches it goes off the loop again, to see whether waiting pays by then.
 */
export class FsyncPlacement {
  private onLoop = false;
  private onLoopSince = 0;

  constructor(private readonly probeEvery: number) {}

  /** Whether the next big batch fsyncs on the event loop. */
  next(): boolean {
    if (!this.onLoop) return false;
    if (++this.onLoopSince < this.probeEvery) return true;
    this.onLoopSince = 0;
    return false;
  }

  /** After an fsync off the loop: whether appends came in meanwhile. */
  waited(tookAppends: boolean): void {
    this.onLoop = !tookAppends;
  }
}
