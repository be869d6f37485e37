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
