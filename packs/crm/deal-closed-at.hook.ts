import { type FilterHook, nowIso } from '../../core/pack-api.js';

const CLOSED_STAGES = new Set(['won', 'lost']);

/**
 * `crm.deal.create|update`: the server owns `closedAt`. A deal that moves to `won` or `lost` gets the
 * current time; one that stays in the same closed stage keeps its date; an open deal (new, or reopened
 * from a closed stage) has `closedAt: null`.
 */
export const dealClosedAt: FilterHook = ({ data, previous }) => {
  if (!CLOSED_STAGES.has(String(data.stage))) return { ...data, closedAt: null };
  const unchanged = previous !== null && previous.stage === data.stage && typeof previous.closedAt === 'string';
  return { ...data, closedAt: unchanged ? previous.closedAt : nowIso() };
};
