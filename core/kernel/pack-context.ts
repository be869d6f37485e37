import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { PackServices } from './pack-services.js';
import type { KernelServices } from './services.js';

/** A service some pack provides, as `<pack>.<service>`. */
export type ServiceName = keyof PackServices & string;

/**
 * What a pack gets from the kernel: the kernel services, its own config and logger, and the services it
 * declared in `requires` (and its own), read with `use`. Packs reach nothing else: no globals, no
 * app.context, no other pack's files.
 */
export interface PackContext extends KernelServices {
  readonly name: string;
  readonly config: Config;
  readonly logger: Logger;
  /** A required service (or one of the pack's own). Throws if the pack did not declare it in `requires`. */
  use<K extends ServiceName>(service: K): PackServices[K];
  /** An optional requirement (declared `'crm.coupons?'`): undefined when no loaded pack provides it. */
  use<K extends ServiceName>(service: `${K}?`): PackServices[K] | undefined;
}
