import type { Logger } from '../config/logger';

/** A background job run by worker processes (`wcs start` or `wcs start --workers-only`). */
export interface Worker {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs a task every intervalMs, never overlapping itself; errors are logged and retried next tick. */
export class IntervalWorker implements Worker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    readonly name: string,
    private readonly intervalMs: number,
    private readonly task: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const tick = () => {
      if (this.running) return;
      this.running = this.task()
        .catch((e: unknown) => {
          this.logger.error('worker task failed', { worker: this.name, error: e });
        })
        .finally(() => {
          this.running = null;
        });
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
