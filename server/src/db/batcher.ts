/** How a Batcher groups work. */
export interface BatcherOptions {
  /** Most items one call of `run` gets. */
  readonly maxBatch: number;
  /**
   * Most calls of `run` in flight at once. While they are busy, new items wait and go
   * out together in the next call (group commit); Infinity flushes every tick.
   */
  readonly maxInFlight: number;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (out: O) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * Group commit: items submitted in the same tick, or while earlier batches are in flight,
 * are handed to `run` together; `run` answers with one result per item, in order. A
 * rejected `run` rejects every item of its batch.
 */
export class Batcher<I, O> {
  private queue: Array<Waiting<I, O>> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions,
  ) {
    if (!(options.maxBatch >= 1) || !(options.maxInFlight >= 1)) throw new RangeError('Batcher: maxBatch and maxInFlight must be at least 1');
  }

  /** Items waiting for a batch (not counting those in flight). */
  get waiting(): number {
    return this.queue.length;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) this.start(this.queue.splice(0, this.options.maxBatch));
    });
  }

  private start(batch: Array<Waiting<I, O>>): void {
    this.inFlight++;
    let result: Promise<O[]>;
    try {
      result = this.run(batch.map((w) => w.item));
    } catch (e) {
      result = Promise.reject(e);
    }
    result
      .then(
        (outs) => {
          if (outs.length !== batch.length) throw new Error(`Batcher: run answered ${outs.length} results for ${batch.length} items`);
          batch.forEach((w, i) => w.resolve(outs[i]!));
        },
      )
      .catch((e: unknown) => {
        for (const w of batch) w.reject(e);
      })
      .finally(() => {
        this.inFlight--;
        this.schedule();
      });
  }
}
