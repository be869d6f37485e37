import type { PackContext } from '../../core/pack-api.js';
export interface InvitationMailInput {
  to: string;
  tenantName: string;
  role: string;
  link: string;
  expiresAt: string;
  invitationId: string;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The invitation e-mail, with a text and an HTML part. */
export function invitationMail(input: InvitationMailInput): Parameters<PackContext['mail']['send']>[0] {
  const until = new Date(input.expiresAt).toUTCString();
  const text = [
    'Hello,',
    '',
    `you have been invited to join ${input.tenantName} as ${input.role}.`,
    '',
    'Accept the invitation by signing in here:',
    input.link,
    '',
    `The link is valid until ${until}. If you did not expect this invitation, you can ignore this e-mail.`,
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:sans-serif">
<p>Hello,</p>
<p>you have been invited to join <strong>${escapeHtml(input.tenantName)}</strong> as <strong>${escapeHtml(input.role)}</strong>.</p>
<p><a href="${escapeHtml(input.link)}">Accept the invitation</a></p>
<p style="color:#555">The link is valid until ${escapeHtml(until)}. If you did not expect this invitation, you can ignore this e-mail.</p>
</body></html>`;
  return {
    to: input.to,
    subject: `You are invited to ${input.tenantName}`,
    text,
    html,
    reference: `invitation:${input.invitationId}`,
  };
}
