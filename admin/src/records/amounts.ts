/**
 * Money and percentages as a person reads and types them, kept as the integers the API stores: cents of the
 * record's currency (`x-money`) and basis points (`x-percent-basis-points`). Parsing is integer arithmetic on
 * the typed digits (19.99 → 1999), never a float multiplied by 100.
 */

export const DEFAULT_CURRENCY = 'EUR';

const moneyFormats = new Map<string, Intl.NumberFormat>();
function moneyFormat(currency: string): Intl.NumberFormat {
  let format = moneyFormats.get(currency);
  if (!format) {
    try {
      format = new Intl.NumberFormat(undefined, { style: 'currency', currency });
    } catch {
      format = new Intl.NumberFormat(undefined, { style: 'currency', currency: DEFAULT_CURRENCY });
    }
    moneyFormats.set(currency, format);
  }
  return format;
}

const currencyOf = (value: unknown) => (typeof value === 'string' && /^[A-Z]{3}$/.test(value) ? value : DEFAULT_CURRENCY);

/** How many decimals the currency's minor unit has (EUR 2, JPY 0). */
export const minorDigits = (currency: unknown) => moneyFormat(currencyOf(currency)).resolvedOptions().maximumFractionDigits ?? 2;

/** The currency's symbol as the user's locale writes it (€, $, CHF). */
export const currencySymbol = (currency: unknown) =>
  moneyFormat(currencyOf(currency)).formatToParts(0).find((p) => p.type === 'currency')?.value ?? currencyOf(currency);

/** 1999 in EUR → "€19.99" (in the user's locale). */
export function formatMoney(cents: unknown, currency?: unknown): string {
  if (typeof cents !== 'number' || !Number.isInteger(cents)) return cents === undefined || cents === null ? '' : String(cents);
  const digits = minorDigits(currency);
  const format = moneyFormat(currencyOf(currency));
  // Integer cents to the format's number without a float product: the whole part and the minor part apart.
  return format.format(Number(toDecimalText(cents, digits)));
}

const percents = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 2 });
/** 1900 basis points → "19%". */
export function formatBasisPoints(bp: unknown): string {
  if (typeof bp !== 'number' || !Number.isInteger(bp)) return bp === undefined || bp === null ? '' : String(bp);
  return percents.format(Number(toDecimalText(bp, 4)));
}

/** An integer of minor units as decimal text with `digits` decimals: (1999, 2) → "19.99", (-5, 2) → "-0.05". */
export function toDecimalText(units: number, digits: number): string {
  if (digits === 0) return String(units);
  const sign = units < 0 ? '-' : '';
  const text = String(Math.abs(units)).padStart(digits + 1, '0');
  return `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/**
 * Typed decimal text to an integer of minor units, on the digits (no float): ("19.99", 2) → 1999, ("19,9", 2) →
 * 1990, ("1,234.50", 2) → 123450, ("19", 2) → 1900. The last `.` or `,` followed by at most `digits` digits is the
 * decimal separator; other separators and spaces group thousands. Undefined for text that is not such an amount.
 */
export function parseDecimal(text: string, digits: number): number | undefined {
  const t = text.replace(/[\s\u00a0\u202f']/g, '');
  const m = /^(-?)([\d.,]+)$/.exec(t);
  if (!m) return undefined;
  const [, sign, body] = m;
  const last = Math.max(body.lastIndexOf('.'), body.lastIndexOf(','));
  const after = last < 0 ? '' : body.slice(last + 1);
  const decimal = last >= 0 && after.length <= digits && !/[.,]/.test(after);
  const whole = (decimal ? body.slice(0, last) : body).replace(/[.,]/g, '');
  const fraction = decimal ? after : '';
  if (!/^\d*$/.test(whole) || !/^\d*$/.test(fraction) || whole + fraction === '') return undefined;
  const units = Number(`${whole}${fraction.padEnd(digits, '0')}`);
  return Number.isSafeInteger(units) ? (sign ? -units : units) : undefined;
}
