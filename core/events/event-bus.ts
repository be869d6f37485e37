import { EventEmitter } from 'eventemitter3';
import type { Logger } from 'pino';
import { eventMatches, type PlatformEvent } from './event.js';

export type BusHandler = (event: PlatformEvent) => Promise<void> | void;

/**
 * In-process subscribers, after commit. EventEmitter3's emit is synchronous and ignores promises,
 * so every handler is wrapped to catch and log its failure.
 */
export class EventBus {
  private readonly emitter = new EventEmitter();
  private readonly patterns: Array<{ pattern: string; handler: BusHandler }> = [];

  constructor(private readonly logger: Logger) {
    this.emitter.on('event', (event: PlatformEvent) => {
      for (const { pattern, handler } of this.patterns) {
        if (!eventMatches(pattern, event.name)) continue;
        Promise.resolve()
          .then(() => handler(event))
          .catch((err) => this.logger.error({ err, event: event.name, eventId: event.id }, 'event handler failed'));
      }
    });
  }

  on(pattern: string, handler: BusHandler): void {
    this.patterns.push({ pattern, handler });
  }

  emit(event: PlatformEvent): void {
    this.emitter.emit('event', event);
  }
}
