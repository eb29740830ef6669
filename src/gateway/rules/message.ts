/** Message facts (RFC 9110) that storing, relaying and filling all depend on. */

/** §6.4.1: answers without content, whatever their Content-Length says (§8.6). */
export function hasNoContent(status: number, method: string): boolean {
  return method === 'HEAD' || status === 204 || status === 304 || status < 200;
}
