import { defineError } from '../../core/pack-api.js';

/** The error codes of tenant administration (CONTRACT 4, 7). */
export const FeatureRequired = defineError('feature_required', 402, (f: string) => `This requires the "${f}" feature`);
export const HostNotFound = defineError('host_not_found', 404, (h: string) => `No tenant serves the host "${h}"`);
export const DomainTaken = defineError('domain_taken', 409, (d: string) => `The domain "${d}" is held by another tenant`);
export const AlreadyMember = defineError('already_member', 409, (e: string) => `${e} is a member or has a pending invitation already`);
export const SmtpFailed = defineError('smtp_failed', 502, (m: string) => `The SMTP server refused: ${m}`);
