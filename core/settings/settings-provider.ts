import type { Config } from '../../config/index.js';

export interface SmtpSettings {
  host: string | null;
  port: number | null;
  secure: boolean | null;
  user: string | null;
  password: string | null;
  from: string | null;
}

/** Where the kernel reads the platform settings it needs (SMTP for mail). */
export interface SettingsProvider {
  getSmtp(): Promise<SmtpSettings>;
}

/** The first values, from the SMTP_* environment; the tenant-admin pack's settings store overrides them. */
export class EnvironmentSettings implements SettingsProvider {
  constructor(private readonly config: Config) {}

  async getSmtp(): Promise<SmtpSettings> {
    return { ...this.config.smtp };
  }
}

/** The provider the kernel holds; a pack may put its own store behind it at boot. */
export class SettingsHolder implements SettingsProvider {
  private provider: SettingsProvider;

  constructor(initial: SettingsProvider) {
    this.provider = initial;
  }

  use(provider: SettingsProvider): void {
    this.provider = provider;
  }

  getSmtp(): Promise<SmtpSettings> {
    return this.provider.getSmtp();
  }
}
