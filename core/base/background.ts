import type { Logger } from 'pino';

export interface BackgroundTask {
  name: string;
  start(): Promise<void> | void;
  /** Stops taking new work and finishes work under way (graceful shutdown). */
  stop(): Promise<void> | void;
}

/** Background loops of the kernel (the outbox dispatcher, ...): started after boot, stopped on close. */
export class BackgroundTasks {
  private readonly tasks: BackgroundTask[] = [];
  private started = false;

  constructor(private readonly logger: Logger) {}

  register(task: BackgroundTask): void {
    this.tasks.push(task);
  }

  /** A registered task by name (operations and tests reach a task's own methods through it). */
  get(name: string): BackgroundTask | undefined {
    return this.tasks.find((t) => t.name === name);
  }

  async startAll(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const task of this.tasks) await task.start();
  }

  async stopAll(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    for (const task of [...this.tasks].reverse()) {
      try {
        await task.stop();
      } catch (err) {
        this.logger.error({ err, task: task.name }, 'background task failed to stop');
      }
    }
  }
}
