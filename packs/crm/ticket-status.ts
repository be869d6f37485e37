/** The support ticket status machine of CONTRACT 11.5. */
export const TICKET_STATUSES = ['new', 'open', 'pending_customer', 'resolved', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** Where each status may go; anything else (the same status included) is 409 invalid_transition. */
export const TICKET_TRANSITIONS: Record<TicketStatus, readonly TicketStatus[]> = {
  new: ['open', 'resolved'],
  open: ['pending_customer', 'resolved'],
  pending_customer: ['open', 'resolved'],
  resolved: ['closed', 'open'],
  closed: [],
};

export function canMove(from: string, to: string): boolean {
  return (TICKET_TRANSITIONS[from as TicketStatus] ?? []).includes(to as TicketStatus);
}
