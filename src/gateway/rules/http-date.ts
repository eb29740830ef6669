/**
 * HTTP-date (RFC 9110 §5.6.7), the one parser for every date field the gateway reads: `Date`,
 * `Expires`, `Last-Modified`, `If-Modified-Since`, `If-Unmodified-Since` and `If-Range`. The
 * grammar is case-sensitive and exact; `Date.parse` accepts far more (other zones, missing
 * commas, one-digit hours), and RFC 9111 §5.3 says what is not a valid date is in the past.
 */

const DAYS = 'Mon|Tue|Wed|Thu|Fri|Sat|Sun';
const LONG_DAYS = 'Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d\\d):(\\d\\d):(\\d\\d)';

/** IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`. */
const IMF_FIXDATE = new RegExp(`^(?:${DAYS}), (\\d\\d) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** rfc850-date (obsolete): `Sunday, 06-Nov-94 08:49:37 GMT`. */
const RFC850_DATE = new RegExp(`^(?:${LONG_DAYS}), (\\d\\d)-${MONTH}-(\\d\\d) ${TIME} GMT$`);
/** asctime-date (obsolete): `Sun Nov  6 08:49:37 1994`, the day space-padded. */
const ASCTIME_DATE = new RegExp(`^(?:${DAYS}) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * §5.6.7: a two-digit year that would be more than 50 years in the future is the most recent
 * past year with those digits.
 */
function fullYear(twoDigits: number, now: number): number {
  const thisYear = new Date(now).getUTCFullYear();
  const year = Math.floor(thisYear / 100) * 100 + twoDigits;
  return year > thisYear + 50 ? year - 100 : year;
}

function timestamp(year: number, month: string, day: string, hour: string, minute: string, second: string): number | undefined {
  const m = MONTHS.indexOf(month);
  const d = Number(day);
  const h = Number(hour);
  const min = Number(minute);
  // §5.6.7: second allows 60, a leap second.
  const s = Number(second);
  if (d < 1 || h > 23 || min > 59 || s > 60) return undefined;
  const at = Date.UTC(year, m, d, h, min, s);
  // A day past the end of its month (31 Apr) would roll over into the next one.
  return new Date(Date.UTC(year, m, d)).getUTCMonth() === m ? at : undefined;
}

/** Milliseconds since the epoch, or undefined when `value` is not an HTTP-date. */
export function parseHttpDate(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  let match = IMF_FIXDATE.exec(value);
  if (match !== null) {
    const [, day = '', month = '', year = '', hour = '', minute = '', second = ''] = match;
    return timestamp(Number(year), month, day, hour, minute, second);
  }
  match = RFC850_DATE.exec(value);
  if (match !== null) {
    const [, day = '', month = '', year = '', hour = '', minute = '', second = ''] = match;
    return timestamp(fullYear(Number(year), now), month, day, hour, minute, second);
  }
  match = ASCTIME_DATE.exec(value);
  if (match !== null) {
    const [, month = '', day = '', hour = '', minute = '', second = '', year = ''] = match;
    return timestamp(Number(year), month, day.trim(), hour, minute, second);
  }
  return undefined;
}
