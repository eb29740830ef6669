/** Redis stream ids (`<ms>-<seq>`) in order; `0-0` comes before every real one. */
export const FIRST_ID = '0-0';

export function compareIds(a: string, b: string): number {
  const dashA = a.indexOf('-');
  const dashB = b.indexOf('-');
  const msA = Number(a.slice(0, dashA));
  const msB = Number(b.slice(0, dashB));
  if (msA !== msB) return msA < msB ? -1 : 1;
  const seqA = Number(a.slice(dashA + 1));
  const seqB = Number(b.slice(dashB + 1));
  return seqA === seqB ? 0 : seqA < seqB ? -1 : 1;
}
