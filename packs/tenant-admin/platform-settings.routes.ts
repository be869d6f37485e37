import { readFileSync } from 'node:fs';
import { Conflict, fromRoot, type PackContext, type PackRouter, ValidationFailed } from '../../core/pack-api.js';
import { SmtpFailed } from './tenant-admin.errors.js';

const { $id: _id, ...settingsSchema } = JSON.parse(
  readFileSync(fromRoot('schemas', 'platform', 'platform-settings.schema.json'), 'utf8'),
) as Record<string, unknown>;

/** Platform settings (superadmin): SMTP and the front-end URLs; the SMTP password stays encrypted and masked. */
export function platformSettingsRoutes(router: PackRouter, pack: PackContext): void {
  const { settings } = pack;

  router.get('/platform/settings', {
    summary: 'Read the platform settings', description: 'SMTP_PASSWORD shows as "********" (null when unset).',
    tags: ['platform'], auth: 'superadmin', response: settingsSchema, errors: ['unauthenticated', 'superadmin_required'],
  }, () => settings.masked());

  router.patch('/platform/settings', {
    summary: 'Change platform settings',
    description: 'A partial map of the keys; null unsets a key. SMTP_PASSWORD is encrypted at rest (AES-256-GCM); sending the mask keeps it. '
      + 'Emits platform.settings.updated with the changed key names.',
    tags: ['platform'], auth: 'superadmin', body: settingsSchema, response: settingsSchema,
    errors: ['validation_failed', 'unauthenticated', 'superadmin_required'],
  }, (ctx) => pack.audit.within(ctx.state.rc, { action: 'platform_settings.updated', target: `platform_settings/${Object.keys(ctx.state.body).sort().join(',')}` },
    (rc) => settings.update(rc, ctx.state.body)));

  router.post('/platform/settings/smtp/test', {
    summary: 'Send a test e-mail',
    description: 'Sends a real message with the current SMTP settings; 502 smtp_failed carries the server\'s reason. '
      + 'Without SMTP_HOST there is no server to ask: 409 conflict.',
    tags: ['platform'], auth: 'superadmin',
    body: { type: 'object', additionalProperties: false, properties: { to: { type: 'string', format: 'email', maxLength: 254 } } },
    response: { type: 'object', properties: { delivered: { type: 'boolean' }, messageId: { type: 'string' } } },
    errors: ['validation_failed', 'conflict', 'unauthenticated', 'superadmin_required', SmtpFailed],
  }, async (ctx) => {
    const smtp = await settings.getSmtp();
    const to = (ctx.state.body.to as string | undefined) ?? ctx.state.principal?.email ?? smtp.from;
    if (!to) throw ValidationFailed('No recipient', [{ path: '/to', message: 'is required when SMTP_FROM is not set' }]);
    if (!smtp.host) throw Conflict('SMTP_HOST is not configured: set it with PATCH /platform/settings');
    try {
      const { messageId } = await pack.mail.send({
        to, subject: 'SMTP test', text: 'This is a test message from the platform settings. Your SMTP settings work.',
        html: '<p>This is a test message from the platform settings. Your SMTP settings work.</p>', reference: 'smtp-test',
      }, smtp);
      return { delivered: true, messageId };
    } catch (err) {
      const e = err as { response?: string; message?: string; code?: string };
      throw SmtpFailed(String(e.response ?? e.message ?? e.code ?? 'unknown error').slice(0, 300));
    }
  });
}
