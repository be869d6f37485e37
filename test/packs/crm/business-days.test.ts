import { expect } from 'chai';
import { addBusinessDays, dateIn, endOfBusinessDay, knownTimeZone } from '../../../packs/crm/business-days.js';

/** The calendar behind a ticket's slaDueAt, on fixed dates (the HTTP tests can only use today). */
describe('support ticket SLA calendar', () => {
  it('skips weekends: 15 business days after a Friday is the Friday three weeks on', () => {
    expect(addBusinessDays({ year: 2026, month: 11, day: 20 }, 15)).to.deep.equal({ year: 2026, month: 12, day: 11 });
    expect(addBusinessDays({ year: 2026, month: 11, day: 21 }, 15)).to.deep.equal({ year: 2026, month: 12, day: 11 });
    expect(addBusinessDays({ year: 2026, month: 11, day: 22 }, 15)).to.deep.equal({ year: 2026, month: 12, day: 11 });
    expect(addBusinessDays({ year: 2026, month: 11, day: 20 }, 1)).to.deep.equal({ year: 2026, month: 11, day: 23 });
  });

  it('ends the 15th business day at 23:59:59 of the tenant\'s timezone', () => {
    expect(endOfBusinessDay(new Date('2026-11-20T12:00:00Z'), 15, 'UTC').toISOString()).to.equal('2026-12-11T23:59:59.000Z');
    // 21:00 on Friday in Bogotá is Saturday in UTC: the Bogotá day counts.
    expect(endOfBusinessDay(new Date('2026-11-21T02:00:00Z'), 15, 'America/Bogota').toISOString()).to.equal('2026-12-12T04:59:59.000Z');
    // Created in winter time, due in summer time (Berlin moves to UTC+2 on 29 March 2026).
    expect(endOfBusinessDay(new Date('2026-03-20T12:00:00Z'), 15, 'Europe/Berlin').toISOString()).to.equal('2026-04-10T21:59:59.000Z');
  });

  it('reads the day of creation, and so the ticket year, in the timezone', () => {
    expect(dateIn(new Date('2026-12-31T23:30:00Z'), 'Asia/Tokyo')).to.deep.equal({ year: 2027, month: 1, day: 1 });
    expect(dateIn(new Date('2027-01-01T03:00:00Z'), 'America/Bogota')).to.deep.equal({ year: 2026, month: 12, day: 31 });
  });

  it('falls back to UTC for a timezone the time zone database does not know', () => {
    expect(knownTimeZone('Mars/Olympus_Mons')).to.equal('UTC');
    expect(knownTimeZone(undefined)).to.equal('UTC');
    expect(knownTimeZone('America/Bogota')).to.equal('America/Bogota');
  });
});
