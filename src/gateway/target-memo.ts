/**
 * What the edge learns of a raw request target, remembered per target: whether it carries a
 * credential, which route it falls under, how it is written in the log, and, on a catalog route,
 * its parse by the contract as a GET. All of it depends only on the target and the configuration,
 * and a cache's clients repeat their targets, so each is worked out once and found again with one
 * lookup: asked one by one (the credential expression, the route table, a memo of the parse, the
 * log's redaction), they took about twice as long over the bench's 1,000 URLs (docs/performance.md).
 *
 * One memo per pipeline settings (reload/live-parts.ts), so a reload that changes the routes, the
 * credential names or the target bound starts afresh. Bounded by emptying it when full, which
 * costs a burst of re-parses and nothing else. A target whose every character could take 3 bytes
 * and still fit the bound is never a 414; a longer one is worked out on every request and not
 * kept, so what is kept stays small.
 */
import { BoundedMemo } from '../shared/bounded-memo.ts';
import { credentialsInTarget, redactTarget, type RedactedTarget } from '../shared/credentials.ts';
import type { Problem } from '../shared/problem.ts';
import { originForm, parseRequestTarget, type TargetVerdict } from '../shared/request-target.ts';
import type { TargetRules } from './exchange.ts';
import type { Route, RouteTable } from './routes/route-table.ts';

export interface TargetFacts {
  /** A credential in the target: refused with 400 before anything else. */
  readonly refused: Problem | undefined;
  /** The first route whose prefix matches; undefined when none does. */
  readonly route: Route | undefined;
  /** The target as the log and the error log may write it. */
  readonly logged: RedactedTarget;
  /** On a catalog route, the target parsed by the contract as a GET's; undefined elsewhere, and for a target not kept. */
  readonly get: TargetVerdict | undefined;
}

const MAX_KEPT = 4096;

export class TargetMemo {
  readonly #routes: RouteTable;
  readonly #rules: TargetRules;
  readonly #kept = new BoundedMemo<string, TargetFacts>(MAX_KEPT);

  constructor(routes: RouteTable, rules: TargetRules) {
    this.#routes = routes;
    this.#rules = rules;
  }

  factsOf(rawTarget: string): TargetFacts {
    const keep = rawTarget.length * 3 <= this.#rules.maxBytes;
    let facts = keep ? this.#kept.get(rawTarget) : undefined;
    if (facts === undefined) {
      facts = this.#learn(rawTarget, keep);
      if (keep) this.#kept.keep(rawTarget, facts);
    }
    return facts;
  }

  #learn(rawTarget: string, keep: boolean): TargetFacts {
    const { credentialNames, maxBytes } = this.#rules;
    const refused = credentialsInTarget(rawTarget, credentialNames);
    const route = refused === undefined ? this.#routes.match(originForm(rawTarget)) : undefined;
    const get = keep && route?.mode === 'catalog' ? parseRequestTarget('GET', rawTarget, maxBytes) : undefined;
    return { refused, route, logged: redactTarget(rawTarget, credentialNames), get };
  }
}
